"""The table kernel: how every runner plays its tables (docs/architecture.md section 8).

A *table* is one sitting: fixed seats playing a list of games.  Tournaments,
``arena sprt``, the Dask runner and the ladder all play their games through
this package and nothing else:

- :mod:`arena.tables.spec`: what a table is (:class:`TableSpec`, of value
  objects) and what it returns (:class:`TableResult`, :class:`TableGame`);
- :mod:`arena.tables.task`: the table task, :func:`play_table`, run on this
  machine or on a Dask worker;
- :mod:`arena.tables.players`: the one :class:`TablePlayer` protocol and
  :class:`LocalTables` (each table its own process, :mod:`arena.tables.processes`);
  :mod:`arena.tables.cluster` is the Dask one;
- :mod:`arena.tables.rows`: from a played game to the stored row (the one
  builder) and its durable record;
- :mod:`arena.tables.containers`: image IDs resolved once per run, and the one
  prune of a run's or a table's leftover containers.

The kernel knows no runner: runners import it, never the other way round.
"""
