"""What the final evaluation keeps in ``ladder.sqlite``: teams' selections, the final versions, the frozen table.

Its own tables on the ladder store's file (:class:`~arena.ladder.common.ladder_db.LadderDatabase`:
WAL, short transactions, one connection per thread):

- ``final_choices``: the version a team selected for its final (``[final] choose_from``),
  replaced by a later selection, read once at the deadline;
- ``final_versions``: each team's final version, written **once**, in one transaction,
  when the loop first sees the deadline passed (a restart reads them back; they never change);
- ``final_live``: the final table as it stands during the final evaluation (the loop
  rewrites it after every change; the site shows it);
- ``final_table``: the frozen final standings (one row, JSON), written once: the table
  the site shows and ``arena ladder export --final`` writes, identical after any restart.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from arena.ladder.common.ladder_db import LadderDatabase

SCHEMA = """
CREATE TABLE IF NOT EXISTS final_choices (team TEXT PRIMARY KEY, entry TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS final_versions (team TEXT PRIMARY KEY, entry TEXT NOT NULL, how TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS final_fixed (id INTEGER PRIMARY KEY CHECK (id = 1), at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS final_live (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS final_table (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    frozen_at TEXT NOT NULL,
    reason TEXT NOT NULL,
    body TEXT NOT NULL
);
"""


@dataclasses.dataclass(frozen=True)
class FinalVersion:
    """A team's final version and how it became so (``selected``, or ``active at the deadline``)."""

    team: str
    entry: str
    how: str


@dataclasses.dataclass(frozen=True)
class Frozen:
    """The stored final table: when and why it froze, and its body (:meth:`arena.ladder.course.final.FinalTable.to_dict`)."""

    frozen_at: str
    reason: str
    body: dict[str, Any]


class FinalStore(LadderDatabase):
    """The final evaluation's tables on ``ladder.sqlite`` (see the module docstring)."""

    SCHEMA = SCHEMA

    # ------------------------------------------------------------ selections

    def choose(self, team: str, entry: str, at: str) -> None:
        """``team`` selects ``entry`` as its final version (the caller checked it may)."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO final_choices(team, entry, at) VALUES (?, ?, ?)", (team, entry, at))

    def choices(self) -> dict[str, str]:
        """Each team's selected entry."""
        return dict(self.db.execute("SELECT team, entry FROM final_choices").fetchall())

    # ------------------------------------------------------------ final versions

    def fix(self, versions: Mapping[str, tuple[str, str]], at: str) -> tuple[list[FinalVersion], bool]:
        """Store ``{team: (entry, how)}`` as the final versions unless they were fixed before.

        Returns the stored final versions and whether this call fixed them (False: an
        earlier start did, and its versions are returned unchanged).
        """
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM final_fixed").fetchone() is None:
                db.executemany(
                    "INSERT OR REPLACE INTO final_versions(team, entry, how) VALUES (?, ?, ?)",
                    [(team, entry, how) for team, (entry, how) in versions.items()],
                )
                db.execute("INSERT INTO final_fixed(id, at) VALUES (1, ?)", (at,))
                made = True
            else:
                made = False
        found = self.final_versions()
        assert found is not None
        return found, made

    def final_versions(self) -> list[FinalVersion] | None:
        """The final versions by team, or None before they are fixed."""
        if self.db.execute("SELECT 1 FROM final_fixed").fetchone() is None:
            return None
        return [FinalVersion(*r) for r in self.db.execute("SELECT team, entry, how FROM final_versions ORDER BY team")]

    # ------------------------------------------------------------ the live table, then the frozen one

    def set_live(self, body: Mapping[str, Any]) -> None:
        """The final table as it stands now (during the final evaluation)."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO final_live(id, body) VALUES (1, ?)", (json.dumps(body),))

    def live(self) -> dict[str, Any] | None:
        """The final table as the loop last wrote it, or None."""
        row = self.db.execute("SELECT body FROM final_live WHERE id=1").fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def freeze(self, frozen_at: str, reason: str, body: Mapping[str, Any]) -> tuple[Frozen, bool]:
        """Store the final table unless one is stored; the stored one (the first always wins) and whether this call stored it."""
        with self.transaction() as db:
            made = db.execute(
                "INSERT OR IGNORE INTO final_table(id, frozen_at, reason, body) VALUES (1, ?, ?, ?)",
                (frozen_at, reason, json.dumps(body)),
            ).rowcount == 1
        found = self.frozen()
        assert found is not None
        return found, made

    def frozen(self) -> Frozen | None:
        """The frozen final table, or None while the final evaluation has not ended."""
        row = self.db.execute("SELECT frozen_at, reason, body FROM final_table WHERE id=1").fetchone()
        return None if row is None else Frozen(row[0], row[1], json.loads(row[2]))


__all__ = ["FinalStore", "FinalVersion", "Frozen"]
