"""The results store: one SQLite file per run (WAL), the coordinator its only writer.

Tournaments, ``arena sprt`` and the ladder keep their games here; the ratings
and publish commands read it.  See :mod:`arena.results.store`.
"""
