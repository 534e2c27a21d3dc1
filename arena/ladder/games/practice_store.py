"""The practice tables' own store, ``DIR/practice.sqlite``: apart from the rated games on purpose.

The ratings, the standings, ``arena ratings`` and the exports read
``results.sqlite``; nothing of theirs opens this file, so a practice game can
never count for or against a bot.  One row per practice table: who opened it
(a team), when (the per-team daily quota counts these), who sat where, and
once it ends, how (``done``, ``abandoned`` by the person, ``stopped`` by the
server stopping, ``failed``) with its score and record.

A store of the arena's one SQLite helper (:class:`arena.storage.sqlite.SQLiteStore`):
each thread its own connection, every write one transaction (the day's quota
checked and the new row written in the same one), and a write the full disk
refuses is :class:`~arena.storage.sqlite.DiskFull` (the site answers 503, as
for every other store), never a half-written row.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.storage.sqlite import SQLiteStore, StoreError

SCHEMA = """
CREATE TABLE IF NOT EXISTS practice (
    id INTEGER PRIMARY KEY,
    team TEXT NOT NULL,
    opened TEXT NOT NULL,
    seats TEXT NOT NULL,
    status TEXT NOT NULL,
    game_id TEXT,
    ending TEXT,
    score0 INTEGER,
    score1 INTEGER,
    record TEXT,
    finished TEXT
);
CREATE INDEX IF NOT EXISTS practice_team ON practice(team, opened);
"""
#: A table still being played (a server killed meanwhile leaves these: opening the store ends them).
PLAYING = "playing"
#: How many practice games a team's page lists.
LISTED = 30


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class PracticeGame:
    """One practice table as the team's page lists it."""

    id: int
    team: str
    opened: str
    seats: list[str]
    """Each seat's entry (``team@N``), and ``person`` at the person's seat."""
    status: str
    game_id: str | None
    ending: str | None
    score0: int | None
    score1: int | None
    record: str | None
    """The record's path relative to the ladder directory (None until the game ends with one)."""

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class PracticeStore(SQLiteStore):
    """``DIR/practice.sqlite``: practice tables and how they ended."""

    SCHEMA = SCHEMA
    BUSY_TIMEOUT_S = 10.0

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        try:
            self.migrate()
            with self.transaction() as db:  # tables left "playing" by a server that was killed are not played any more
                db.execute("UPDATE practice SET status='stopped', finished=? WHERE status=?", (_now(), PLAYING))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the practice store {path}: {exc}") from None

    def opened_today(self, team: str) -> int:
        """Practice tables ``team`` opened this UTC day (the quota counts them, however they ended)."""
        return _opened_today(self.db, team)

    def add(self, team: str, seats: list[str], per_day: int) -> int | None:
        """A new table's row; None if ``team`` has opened ``per_day`` already today (checked in the same transaction)."""
        with self.transaction() as db:
            if _opened_today(db, team) >= per_day:
                return None
            cursor = db.execute(
                "INSERT INTO practice (team, opened, seats, status) VALUES (?, ?, ?, ?)",
                (team, _now(), json.dumps(seats), PLAYING),
            )
            return int(cursor.lastrowid or 0)

    def finish(
        self, table_id: int, status: str, *, game_id: str | None = None, ending: str | None = None,
        scores: tuple[int, int] | None = None, record: str | None = None,
    ) -> None:  # fmt: skip
        """How table ``table_id`` ended (once: a finished row is not written again)."""
        with self.transaction() as db:
            db.execute(
                "UPDATE practice SET status=?, game_id=?, ending=?, score0=?, score1=?, record=?, finished=? "
                "WHERE id=? AND status=?",
                (status, game_id, ending, scores[0] if scores else None, scores[1] if scores else None, record, _now(),
                 table_id, PLAYING),
            )  # fmt: skip

    def game(self, table_id: int) -> PracticeGame | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM practice WHERE id=?", (table_id,)).fetchone()
        return None if row is None else _game(row)

    def games(self, team: str, limit: int = LISTED) -> list[PracticeGame]:
        """``team``'s latest practice tables, newest first."""
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM practice WHERE team=? ORDER BY id DESC LIMIT ?", (team, limit)
        ).fetchall()
        return [_game(r) for r in rows]


def _opened_today(db: sqlite3.Connection, team: str) -> int:
    today = _now()[:10]
    row = db.execute(
        "SELECT COUNT(*) FROM practice WHERE team=? AND opened >= ? AND opened < ?", (team, today, today + "~")
    ).fetchone()
    return int(row[0])


_COLUMNS = "id, team, opened, seats, status, game_id, ending, score0, score1, record"


def _game(row: tuple[Any, ...]) -> PracticeGame:
    return PracticeGame(row[0], row[1], row[2], json.loads(row[3]), *row[4:])


__all__ = ["LISTED", "PLAYING", "PracticeGame", "PracticeStore"]
