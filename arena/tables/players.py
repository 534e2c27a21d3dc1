"""Where tables are played: one protocol for every runner, and the local table processes.

A *table player* plays one :class:`~arena.tables.spec.TableSpec` and returns
its :class:`~arena.tables.spec.TableResult`, reporting each game as it ends.
Tournaments, ``arena sprt`` and the ladder all hold a player and never care
which: :class:`LocalTables` (each table its own process on this machine) or
:class:`~arena.tables.cluster.ClusterTables` (each table a Dask task).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from arena.errors import ArenaError
from arena.tables.spec import TableGame, TableResult, TableSpec


class RunStopped(ArenaError):
    """The run cannot go on (the cluster is gone, no machine has an image): one line for the organiser."""


class TablePlayer(Protocol):
    """Plays tables: on this machine or on a cluster."""

    def capacity(self, configured: int) -> int:
        """How many tables to have running at once (``configured``: what the run asked for on one machine)."""
        ...

    async def play(
        self, spec: TableSpec, on_game: Callable[[TableGame], None], stop: threading.Event
    ) -> TableResult:
        """Play one table; ``on_game`` may be called per game as it ends (on the caller's trio thread).

        A platform fault comes back as a result with ``error`` set; a run that
        cannot go on raises :class:`RunStopped`.  Setting ``stop`` stops the
        table (its bots are stopped and removed).
        """
        ...


class LocalTables:
    """Each table in its own process on this machine (:mod:`arena.tables.processes`)."""

    #: Logs are written straight to the spec's ``log_dir`` (the tables run here).
    local = True

    def __init__(self, cleanup: Callable[[TableSpec], None] | None = None) -> None:
        #: Run when a table process dies; None: remove the table's containers if it has any.
        self.cleanup = cleanup

    def capacity(self, configured: int) -> int:
        return configured

    async def play(
        self,
        spec: TableSpec,
        on_game: Callable[[TableGame], None],
        stop: threading.Event,
        on_live: Callable[[str, int, bytes], None] | None = None,
    ) -> TableResult:
        """Play ``spec`` in a table process; ``on_live`` gets its live views (``spec.live``: the ladder's spectators)."""
        from arena.tables.processes import (
            play_table_in_process,  # the forkserver starts on first use
        )

        return await play_table_in_process(spec, on_game, stop, self.cleanup, on_live)


__all__ = ["LocalTables", "RunStopped", "TablePlayer"]
