"""Tournaments: the file, the schedule of duplicate tables, the results store, resume."""

from arena.results.store import ResultsStore, StoredGame, StoreError
from arena.tournament.config import ConfigError, Entry, FaultPolicy, TournamentConfig, load_config
from arena.tournament.runner import Progress, RunReport, open_store, run_tournament
from arena.tournament.schedule import ScheduledGame, Table, schedule, tables

__all__ = [
    "ConfigError", "Entry", "FaultPolicy", "StoredGame", "Progress", "ResultsStore", "RunReport",
    "ScheduledGame", "StoreError", "Table", "TournamentConfig", "load_config", "open_store",
    "run_tournament", "schedule", "tables",
]  # fmt: skip
