"""``ladder.sqlite``: the one file every package's tables live in, its connections and its meta table.

Next to the games in ``DIR/results.sqlite`` (the tournament's store, so
``arena ratings`` reads a ladder too), the ladder keeps its own state in
``DIR/ladder.sqlite``, a store of the arena's one SQLite helper
(:class:`arena.storage.sqlite.SQLiteStore`: WAL, ``synchronous=FULL``, a
connection per thread, one write transaction, a full disk one error).  Each
package owns its tables as a subclass of :class:`LadderDatabase` that declares
them (``SCHEMA``) and the columns added since the first ladders
(``ADDED_COLUMNS``, applied by the helper):
the teams (:class:`arena.ladder.teams.store.TeamTables`), the versions
(:class:`arena.ladder.versions.store.VersionTables`), the games' rating
history (:class:`arena.ladder.games.store.GameTables`), the final evaluation
(:class:`arena.ladder.course.final_store.FinalStore`);
:class:`arena.ladder.store.LadderStore` is all of them on one object.

The web server and the ladder loop both write here, each in short
transactions on its own thread's connection (SQLite serialises them; a busy
timeout covers the wait; a connection shared by two threads would let one
thread's statements fall inside the other's transaction).
"""

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path

from arena.errors import ArenaError
from arena.storage.sqlite import SQLiteStore

META_SCHEMA = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"


class LadderError(ArenaError):
    """A ladder operation that cannot be done (unknown team, a name taken, a quota reached): one line."""


def now() -> str:
    """The time as the ladder's tables write it: UTC, to the second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class LadderDatabase(SQLiteStore):
    """``ladder.sqlite`` with the tables of this class and of every class it derives from (see the module docstring)."""

    SCHEMA = META_SCHEMA

    def __init__(self, path: Path) -> None:
        super().__init__(path)  # one connection per thread, one write transaction (arena.storage)
        try:
            self.migrate()
        except sqlite3.Error as exc:
            raise LadderError(f"cannot open {path}: {exc}") from None

    # ------------------------------------------------------------ meta

    def meta(self) -> dict[str, str]:
        """The ladder's facts: its id (``ladder_id``), ``paused``, the admin token's hash, ..."""
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    @property
    def paused(self) -> bool:
        """The organiser paused the ladder: no new pair starts (builds go on)."""
        return self.meta().get("paused") == "1"


__all__ = ["META_SCHEMA", "LadderDatabase", "LadderError", "now"]
