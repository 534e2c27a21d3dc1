"""The site's reads: indexed queries on the two stores, one read-only connection per thread.

The web site answers from Starlette's thread pool, so every thread gets its
own connections (``mode=ro``: the site never writes through them) to
``results.sqlite`` and ``ladder.sqlite``; WAL lets them read while the loop
writes.  Every query here is bounded by an index or a ``LIMIT`` on the
rowid, so a page costs the same at 400 games as at 40,000:

- a game by its id: the games table's primary key;
- the latest games: the rowid backwards, ``LIMIT n`` (a team's: the same
  walk, stopping at its ``n``-th game);
- a team's rating history: the ``history(version, at)`` index over the
  range ``team@`` … ``teamA`` (:func:`entry_range`); for the plot, a fixed
  number of index seeks per version at evenly spaced times.

:class:`PerThread` gives the same per-thread treatment to a writer (the site's
:class:`~arena.ladder.store.LadderStore` for sign-ins and the organiser's
switches): one connection per thread, so no transaction of one request can
fall inside another's.
"""

from __future__ import annotations

import dataclasses
import datetime
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from arena.storage import threads

T = TypeVar("T")

#: The most points per version the team page's plot draws (the rest of the history is thinned out).
PLOT_POINTS = 150

#: The columns of a game as the site lists it.
GAME_COLUMNS = ("game_id", "side0", "side1", "ending", "winner", "score0", "score1", "hands", "cluster", "finished_at")


@dataclasses.dataclass(frozen=True)
class GameSummary:
    """One stored game as the site lists it."""

    game_id: str
    side0: str
    side1: str
    ending: str
    winner: str | None
    score0: int
    score1: int
    hands: int
    pair: str
    finished_at: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class PerThread(threads.PerThread[T]):
    """One ``T`` per thread (closed when its thread ends); attribute access goes to the calling thread's own.

    So ``PerThread(lambda: LadderStore(path), LadderStore.close)`` can stand where one store stood.
    """

    def __init__(self, factory: Callable[[], T], close: Callable[[T], None] = lambda _: None) -> None:
        super().__init__(factory, close)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)


def read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write (``mode=ro``), for one thread."""
    # check_same_thread off only so that close_all may close it from the thread that shuts the site down.
    db = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=5.0, isolation_level=None,
                         check_same_thread=False)
    db.execute("PRAGMA query_only=1")
    return db


class Reads:
    """The site's queries on ``results.sqlite`` and ``ladder.sqlite`` (see the module docstring)."""

    def __init__(self, results_path: Path, ladder_path: Path) -> None:
        self._results = PerThread(lambda: read_only(results_path), sqlite3.Connection.close)
        self._ladder = PerThread(lambda: read_only(ladder_path), sqlite3.Connection.close)

    def close(self) -> None:
        self._results.close_all()
        self._ladder.close_all()

    # ------------------------------------------------------------ games

    def game(self, game_id: str) -> GameSummary | None:
        """A stored game by its id (the primary key), None if there is none."""
        row = self._results.get().execute(
            f"SELECT {', '.join(GAME_COLUMNS)} FROM games WHERE game_id=?", (game_id,)
        ).fetchone()
        return None if row is None else GameSummary(*row)

    def recent_games(self, limit: int, team: str | None = None) -> list[GameSummary]:
        """The latest ``limit`` games, newest first (only ``team``'s when given)."""
        sql = f"SELECT {', '.join(GAME_COLUMNS)} FROM games"
        args: tuple[Any, ...] = ()
        if team is not None:
            low, high = entry_range(team)
            sql += " WHERE (side0 >= ? AND side0 < ?) OR (side1 >= ? AND side1 < ?)"
            args = (low, high, low, high)
        rows = self._results.get().execute(sql + " ORDER BY rowid DESC LIMIT ?", (*args, limit)).fetchall()
        return [GameSummary(*r) for r in rows]

    def games_count(self) -> int:
        """How many games are stored (SQLite counts the primary key's index, not the rows)."""
        (count,) = self._results.get().execute("SELECT COUNT(*) FROM games").fetchone()
        return int(count)

    # ------------------------------------------------------------ rating history

    def history(self, team: str, thin_to: int | None = None) -> list[tuple[str, str, int, float, float, float]]:
        """The team's history rows (entry, at, pairs, elo, low, high), oldest first.

        ``thin_to``: at most that many rows per version, for a plot: its first
        and last, and between them the first row at or after each of evenly
        spaced times (index seeks, so the cost does not grow with the history).
        """
        low, high = entry_range(team)
        db = self._ladder.get()
        columns = "version, at, pairs, elo, low, high"
        if thin_to is None:
            sql = f"SELECT {columns} FROM history WHERE version >= ? AND version < ? ORDER BY at, version"
            return [tuple(r) for r in db.execute(sql, (low, high))]  # type: ignore[misc]
        numbers = db.execute("SELECT number FROM versions WHERE team=? ORDER BY number", (team,)).fetchall()
        rows: list[tuple[str, str, int, float, float, float]] = []
        for (number,) in numbers:
            entry = f"{team}@{number}"
            first = db.execute(f"SELECT {columns} FROM history WHERE version=? ORDER BY at LIMIT 1", (entry,)).fetchone()
            if first is None:
                continue
            last = db.execute(f"SELECT {columns} FROM history WHERE version=? ORDER BY at DESC LIMIT 1", (entry,)).fetchone()
            picked = {first[1]: tuple(first), last[1]: tuple(last)}
            t0, t1 = _seconds(first[1]), _seconds(last[1])
            for k in range(1, max(2, thin_to) - 1):
                at = _iso(t0 + (t1 - t0) * k / (thin_to - 1))
                found = db.execute(
                    f"SELECT {columns} FROM history WHERE version=? AND at >= ? ORDER BY at LIMIT 1", (entry, at)
                ).fetchone()
                if found is not None:
                    picked.setdefault(found[1], tuple(found))
            rows.extend(picked.values())  # type: ignore[arg-type]
        rows.sort(key=lambda r: (r[1], r[0]))
        return rows


def _seconds(iso: str) -> float:
    return datetime.datetime.fromisoformat(iso).timestamp()


def _iso(seconds: float) -> str:
    """A time as the stores write it (``now()``: UTC, whole seconds)."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).isoformat(timespec="seconds")


def entry_range(team: str) -> tuple[str, str]:
    """The entries ``team@…`` as a half-open text range.

    ``@`` is 0x40 and ``A`` 0x41: another team whose name starts with ``team``
    continues it with a character below ``@`` (``.``, ``-``, a digit) or at or
    above ``A`` (a letter, ``_``), so it falls outside.
    """
    return f"{team}@", f"{team}A"


__all__ = ["PLOT_POINTS", "GameSummary", "PerThread", "Reads", "entry_range", "read_only"]
