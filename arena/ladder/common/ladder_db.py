"""``ladder.sqlite``: the one file every package's tables live in, its connections and its meta table.

Next to the games in ``DIR/results.sqlite`` (the tournament's store, so
``arena ratings`` reads a ladder too), the ladder keeps its own state in
``DIR/ladder.sqlite`` (WAL, ``synchronous=FULL``).  Each package owns its
tables as a subclass of :class:`LadderDatabase` that declares them
(``SCHEMA``) and the columns added since the first ladders (``ADDED_COLUMNS``):
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

import dataclasses
import datetime
import sqlite3
from contextlib import AbstractContextManager, suppress
from pathlib import Path
from typing import ClassVar

from arena.errors import ArenaError
from arena.results.store import write_transaction
from arena.results.threads import PerThread

META_SCHEMA = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"


class LadderError(ArenaError):
    """A ladder operation that cannot be done (unknown team, a name taken, a quota reached): one line."""


@dataclasses.dataclass(frozen=True)
class AddedColumn:
    """A column added to a table since the first ladders: added to an older store when it is opened.

    ``fill``: a statement run once, in the same transaction, right after the column is added.
    """

    table: str
    column: str
    kind: str
    fill: str = ""


def now() -> str:
    """The time as the ladder's tables write it: UTC, to the second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class LadderDatabase:
    """``ladder.sqlite`` with the tables of this class and of every class it derives from (see the module docstring)."""

    #: This class's own tables (``CREATE ... IF NOT EXISTS``).
    SCHEMA: ClassVar[str] = META_SCHEMA
    #: This class's columns added since the first ladders.
    ADDED_COLUMNS: ClassVar[tuple[AddedColumn, ...]] = ()

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connections: PerThread[sqlite3.Connection] = PerThread(self._connect, _close_quietly)
        try:
            db = self.db
            db.execute("PRAGMA journal_mode=WAL")
            for owner in _owners(type(self)):
                db.executescript(owner.__dict__.get("SCHEMA", ""))
            for owner in _owners(type(self)):
                self._add_columns(db, owner.__dict__.get("ADDED_COLUMNS", ()))
        except sqlite3.Error as exc:
            raise LadderError(f"cannot open {path}: {exc}") from None

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection (made on first use, closed when the thread ends)."""
        return self._connections.get()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA synchronous=FULL")
        return db

    def _add_columns(self, db: sqlite3.Connection, added: tuple[AddedColumn, ...]) -> None:
        for col in added:
            have = {r[1] for r in db.execute(f"PRAGMA table_info({col.table})")}
            if col.column not in have:
                with self.transaction() as tx:
                    tx.execute(f"ALTER TABLE {col.table} ADD COLUMN {col.column} {col.kind}")
                    if col.fill:
                        tx.execute(col.fill)

    def close(self) -> None:
        """Close every thread's connection."""
        self._connections.close_all()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """One atomic write on this thread's connection; a write SQLite cannot make (a full disk) is a StoreError."""
        return write_transaction(self.db, self.path)

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


def _owners(cls: type) -> list[type]:
    """The classes whose tables ``cls`` has, the base first (each declares its own ``SCHEMA``)."""
    return [c for c in reversed(cls.__mro__) if issubclass(c, LadderDatabase)]


def _close_quietly(db: sqlite3.Connection) -> None:
    with suppress(sqlite3.Error):
        db.close()


__all__ = ["META_SCHEMA", "AddedColumn", "LadderDatabase", "LadderError", "now"]
