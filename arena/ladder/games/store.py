"""The games' tables of ``ladder.sqlite``: each version's rating history, and the pairs of older ladders.

After every pair the loop adds one history row per rated version (the team
pages plot them across versions; the site reads them through its indexed
queries).  The games and the pairs themselves are the results store's
(``results.sqlite``, written by the run's ledger); ladders from before the
ledger kept their pairs here, in ``pairs``, which is only read now.
"""

from __future__ import annotations

from arena.ladder.common.ladder_db import LadderDatabase, now


class GameTables(LadderDatabase):
    """``history`` and the legacy ``pairs`` (see the module docstring)."""

    SCHEMA = """
CREATE TABLE IF NOT EXISTS pairs (
    seq INTEGER PRIMARY KEY,
    version0 TEXT NOT NULL,
    version1 TEXT NOT NULL,
    status TEXT NOT NULL,
    started TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS history (
    version TEXT NOT NULL,
    at TEXT NOT NULL,
    pairs INTEGER NOT NULL,
    elo REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS history_version ON history(version, at);
"""

    def legacy_pairs(self) -> list[tuple[int, str, str, str]]:
        """The pairs a ladder from before the ledger kept here: (seq, first, second, status).

        Pairs are the run's results now (:mod:`arena.tables.ledger`); the loop
        moves the unfinished ones there once.
        """
        return [tuple(r) for r in self.db.execute("SELECT seq, version0, version1, status FROM pairs ORDER BY seq")]  # type: ignore[misc]

    def legacy_void_pairs(self) -> list[int]:
        """The pairs an older ladder gave up (void or abandoned): their stored halves stay out of the standings."""
        rows = self.db.execute("SELECT seq FROM pairs WHERE status IN ('void', 'abandoned')").fetchall()
        return [int(seq) for (seq,) in rows]

    def add_history(self, rows: list[tuple[str, int, float, float, float]]) -> None:
        stamp = now()
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO history(version, at, pairs, elo, low, high) VALUES (?, ?, ?, ?, ?, ?)",
                [(v, stamp, p, e, lo, hi) for v, p, e, lo, hi in rows],
            )

    def history(self, team: str) -> list[tuple[str, str, int, float, float, float]]:
        return [
            tuple(r)  # type: ignore[misc]
            for r in self.db.execute(
                "SELECT version, at, pairs, elo, low, high FROM history WHERE substr(version, 1, ?)=? ORDER BY at, version",
                (len(team) + 1, f"{team}@"),
            )
        ]


__all__ = ["GameTables"]
