"""Tournaments: the file, the schedule of duplicate tables, the results store, resume.

The runner's names load on first use: the file's parsers (``arena.tournament.config``,
which the ladder's config uses too) must not bring in the run loop, trio and the referee.
"""

from typing import Any

from arena.results.store import ResultsStore, StoredGame, StoreError
from arena.tournament.config import ConfigError, Entry, FaultPolicy, TournamentConfig, load_config
from arena.tournament.schedule import ScheduledGame, Table, schedule, tables

_RUNNER = ("Progress", "RunReport", "open_store", "run_tournament")


def __getattr__(name: str) -> Any:
    if name in _RUNNER:
        from arena.tournament import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'arena.tournament' has no attribute {name!r}")


__all__ = [
    "ConfigError", "Entry", "FaultPolicy", "StoredGame", "Progress", "ResultsStore", "RunReport",
    "ScheduledGame", "StoreError", "Table", "TournamentConfig", "load_config", "open_store",
    "run_tournament", "schedule", "tables",
]  # fmt: skip
