"""The SQLite helper every store uses (see :mod:`arena.storage`).

A store is a :class:`SQLiteStore` subclass that declares its tables
(``SCHEMA``) and the columns added to them since its first release
(``ADDED_COLUMNS``); :meth:`SQLiteStore.migrate` makes an older file current
when it is opened (WAL, the tables of every class the store derives from,
then the added columns, each with its one-off fill).  Every write goes
through :meth:`SQLiteStore.transaction` (:func:`write_transaction`): a write
SQLite cannot make raises :class:`StoreError` naming the file, and
:class:`DiskFull` when the disk is full (:func:`out_of_space`).
"""

from __future__ import annotations

import dataclasses
import errno
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import ClassVar

from arena.errors import ArenaError
from arena.storage.threads import PerThread


class StoreError(ArenaError):
    """The store cannot be used: another tournament's, or unwritable."""


class DiskFull(StoreError):
    """The store cannot be written: its file system is full.

    Nothing half-written is kept; a run stops and resumes once there is room,
    and the ladder's site answers 503 (try again later).
    """


def out_of_space(exc: BaseException) -> bool:
    """Whether ``exc`` is a write refused for want of space (``ENOSPC``, ``EDQUOT``, ``SQLITE_FULL``, :class:`DiskFull`)."""
    return (
        isinstance(exc, DiskFull)
        or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT))
        or (isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL")
    )


def storage_error(exc: BaseException, where: Path) -> StoreError:
    """A :class:`StoreError` (:class:`DiskFull` when out of space) for a failed write to ``where``."""
    if out_of_space(exc):
        return DiskFull(
            f"the disk is full: cannot write {where} ({_reason(exc)}); "
            f"free some space and run again to resume"
        )
    return StoreError(f"cannot write {where}: {_reason(exc)}")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


@contextmanager
def write_transaction(db: sqlite3.Connection, path: Path) -> Iterator[sqlite3.Connection]:
    """One atomic write on ``db`` (a connection to the store at ``path``), for every store of a run.

    Rolled back on any error; a write SQLite cannot make (full disk, I/O error)
    raises :class:`StoreError` naming ``path`` (:class:`DiskFull` when out of space).
    """
    try:
        db.execute("BEGIN IMMEDIATE")
        yield db
        db.execute("COMMIT")
    except BaseException as exc:
        if db.in_transaction:
            with suppress(sqlite3.Error):  # SQLite has rolled back by itself if it could not
                db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError):
            raise storage_error(exc, path) from None
        raise


@dataclasses.dataclass(frozen=True)
class Column:
    """A column added to a table since the store's first release: added to an older file when it is opened.

    ``fill``: a statement run once, in the same transaction, right after the column is added.
    """

    table: str
    column: str
    kind: str
    fill: str = ""


class SQLiteStore:
    """One SQLite file with a connection per thread (see the module docstring).

    A subclass declares ``SCHEMA`` and ``ADDED_COLUMNS`` and calls :meth:`migrate`
    when it opens the file (inside its own ``try``: each store says in its own
    words that it cannot be opened).
    """

    #: This class's own tables (``CREATE ... IF NOT EXISTS``).
    SCHEMA: ClassVar[str] = ""
    #: This class's columns added since its first release.
    ADDED_COLUMNS: ClassVar[tuple[Column, ...]] = ()
    #: Seconds a connection waits for another's write to end.
    BUSY_TIMEOUT_S: ClassVar[float] = 30.0

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connections: PerThread[sqlite3.Connection] = PerThread(self._connect, _close_quietly)

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection (made on first use, closed when the thread ends)."""
        return self._connections.get()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        # FULL: a committed write survives a power loss (one fsync per write costs nothing next to a game).
        db.execute("PRAGMA synchronous=FULL")
        return db

    def migrate(self) -> None:
        """Make the file current: WAL, the tables of this class and of every class it derives from, the added columns."""
        db = self.db
        db.execute("PRAGMA journal_mode=WAL")
        owners = [c for c in reversed(type(self).__mro__) if issubclass(c, SQLiteStore)]
        for owner in owners:
            if owner.__dict__.get("SCHEMA"):
                db.executescript(owner.__dict__["SCHEMA"])
        for owner in owners:
            for col in owner.__dict__.get("ADDED_COLUMNS", ()):
                self._add_column(db, col)

    def _add_column(self, db: sqlite3.Connection, col: Column) -> None:
        if col.column in {r[1] for r in db.execute(f"PRAGMA table_info({col.table})")}:
            return
        with self.transaction() as tx:
            tx.execute(f"ALTER TABLE {col.table} ADD COLUMN {col.column} {col.kind}")
            if col.fill:
                tx.execute(col.fill)

    def close(self) -> None:
        """Close every thread's connection."""
        self._connections.close_all()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """One atomic write on this thread's connection; a write SQLite cannot make is a :class:`StoreError`
        (:class:`DiskFull` when the disk is full)."""
        return write_transaction(self.db, self.path)


def _close_quietly(db: sqlite3.Connection) -> None:
    with suppress(sqlite3.Error):
        db.close()


__all__ = [
    "Column", "DiskFull", "SQLiteStore", "StoreError", "out_of_space", "storage_error", "write_transaction",
]  # fmt: skip
