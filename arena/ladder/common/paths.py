"""Where a ladder directory keeps each thing the site and the loop both reach (one place for the layout).

``DIR/submissions/TEAM/N/`` a version's unpacked upload, ``DIR/records/GAME.json``
a game's record, ``DIR/logs/GAME/seatK.log`` a seat's log, and
``DIR/validation/v<version id>/GAME.json`` the records of a version's
validation games (private to its team and the organiser), ``DIR/practice.sqlite``
and ``DIR/practice/TABLE/`` the practice tables (private to their team).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

#: The file name of a validation game's record: a plain name (no path, no leading dot).
VALIDATION_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9@._-]{0,119}\.json")
#: The most validation records a page lists for one version.
VALIDATION_LISTED = 20


class _HasDirectory(Protocol):
    @property
    def directory(self) -> Path: ...


class _VersionLike(Protocol):
    @property
    def team(self) -> str: ...
    @property
    def number(self) -> int: ...


class StorePaths:
    """The two stores' paths of a ladder's settings, for a class that has the ladder's ``directory``."""

    directory: Path

    @property
    def results_path(self) -> Path:
        return results_store(self.directory)

    @property
    def ladder_path(self) -> Path:
        return ladder_store(self.directory)


def results_store(directory: Path) -> Path:
    """The ladder's games and pairs (the results store's format: ``arena ratings`` reads it)."""
    return directory / "results.sqlite"


def ladder_store(directory: Path) -> Path:
    """The ladder's teams, versions, sessions and rating history."""
    return directory / "ladder.sqlite"


def practice_store(directory: Path) -> Path:
    """The practice tables' games (:mod:`arena.ladder.games.practice_store`), apart from the rated ones: the
    ratings and standings never open it; a practice table's records are under ``DIR/practice/TABLE/``."""
    return directory / "practice.sqlite"


def source_dir(config: _HasDirectory, version: _VersionLike) -> Path:
    """Where a version's unpacked bot directory is kept (what it was built from)."""
    return config.directory / "submissions" / version.team / str(version.number)


def record_path(directory: Path, game_id: str) -> Path:
    """A ladder game's record (the caller has checked ``game_id`` against the ladder's pattern)."""
    return directory / "records" / f"{game_id}.json"


def seat_log_path(directory: Path, game_id: str, seat: int) -> Path:
    """One seat's log of a ladder game."""
    return directory / "logs" / game_id / f"seat{seat}.log"


def validation_dir(directory: Path, version_id: int) -> Path:
    """Where the records of a version's validation games are written (``v`` and the version's id)."""
    return directory / "validation" / f"v{version_id}"


def validation_records(directory: Path, version_id: int) -> list[str]:
    """The file names of a version's validation records, sorted (at most :data:`VALIDATION_LISTED`)."""
    folder = validation_dir(directory, version_id)
    try:
        names = sorted(p.name for p in folder.iterdir() if VALIDATION_FILE.fullmatch(p.name) and p.is_file())
    except OSError:  # no validation yet, or not a directory
        return []
    return names[:VALIDATION_LISTED]


def validation_record(directory: Path, version_id: int, name: str) -> Path | None:
    """The record file ``name`` of the version's validation, None unless it is a plain file there."""
    if not VALIDATION_FILE.fullmatch(name):
        return None
    path = validation_dir(directory, version_id) / name
    return path if path.is_file() and not path.is_symlink() else None


__all__ = [
    "VALIDATION_FILE", "StorePaths", "ladder_store", "practice_store", "record_path", "results_store", "seat_log_path", "source_dir", "validation_dir", "validation_record",
    "validation_records",
]  # fmt: skip
