"""The versions table of ``ladder.sqlite``: every version a team sent, its status, logs and last rating.

A version's status moves only as :mod:`arena.ladder.versions.lifecycle`
allows, compare-and-set (:meth:`VersionTables.transition`): a writer acting on
an old view (a build finishing after a disable) raises
:class:`~arena.ladder.versions.lifecycle.IllegalTransition` and writes nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from arena.ladder.common.ladder_db import LadderDatabase, LadderError, now
from arena.storage.sqlite import Column
from arena.ladder.versions.lifecycle import (
    ACTIVE,
    FAILED,
    IN_BUILD,
    QUEUED,
    RETIRED,
    SUSPENDED,
    UPLOADING,
    IllegalTransition,
    check,
)


@dataclasses.dataclass(frozen=True)
class Version:
    """One submitted version of a team's bot."""

    id: int
    team: str
    number: int
    note: str
    status: str
    image_id: str | None
    build_log: str
    validation_log: str
    attempts: int
    created: str
    activated: str | None
    retired: str | None
    final_elo: float | None
    final_low: float | None
    final_high: float | None
    final_pairs: int | None
    reason: str = ""
    """Why it failed or was suspended (one line, shown to its team)."""
    uploaded: int = 0
    """1 once its files were in place (it counts against the day's quota)."""
    member: str = ""
    """The member who uploaded it ('' for the team's shared token, or a version from before members)."""

    @property
    def entry(self) -> str:
        """The version's name in games and ratings: ``team@number``."""
        return f"{self.team}@{self.number}"


class VersionTables(LadderDatabase):
    """``versions`` (see the module docstring)."""

    SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team TEXT NOT NULL REFERENCES teams(name),
    number INTEGER NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    image_id TEXT,
    build_log TEXT NOT NULL DEFAULT '',
    validation_log TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    activated TEXT,
    retired TEXT,
    final_elo REAL,
    final_low REAL,
    final_high REAL,
    final_pairs INTEGER,
    UNIQUE (team, number)
);
"""
    ADDED_COLUMNS = (
        Column("versions", "reason", "TEXT NOT NULL DEFAULT ''"),
        # Every version of an older store past its upload counts against the day's quota.
        Column("versions", "uploaded", "INTEGER NOT NULL DEFAULT 0", f"UPDATE versions SET uploaded=1 WHERE status<>'{UPLOADING}'"),
        # The member who uploaded it (docs/ladder.md, "Roster and members").
        Column("versions", "member", "TEXT NOT NULL DEFAULT ''"),
    )

    def submissions_today(self, team: str) -> int:
        """Today's (UTC) submissions of ``team`` that count against its quota.

        An upload in progress counts (two at once cannot pass the quota); one
        that failed before its files were in place does not: the team sent
        nothing the server could build.
        """
        today = now()[:10]
        (count,) = self.db.execute(
            "SELECT COUNT(*) FROM versions WHERE team=? AND substr(created, 1, 10)=? AND (uploaded=1 OR status=?)",
            (team, today, UPLOADING),
        ).fetchone()
        return int(count)

    def add_version(self, team: str, note: str, quota: int, member: str = "") -> Version:
        """A new version, ``uploading`` until its files are in place (its number the team's next).

        :class:`LadderError` over the daily quota.  The caller moves the files
        in and then sets it ``queued``; a version a killed server left
        ``uploading`` is removed at the next start.
        """
        with self.transaction() as db:
            if self.submissions_today(team) >= quota:
                raise LadderError(f"team {team!r} has used its {quota} submissions for today (UTC); try again tomorrow")
            (last,) = db.execute("SELECT COALESCE(MAX(number), 0) FROM versions WHERE team=?", (team,)).fetchone()
            cur = db.execute(
                "INSERT INTO versions(team, number, note, status, created, member) VALUES (?, ?, ?, ?, ?, ?)",
                (team, last + 1, note, UPLOADING, now(), member),
            )
            version_id = cur.lastrowid
        found = self.version(int(version_id or 0))
        assert found is not None
        return found

    def delete_version(self, version_id: int) -> None:
        """Forget a version whose upload never completed."""
        with self.transaction() as db:
            db.execute("DELETE FROM versions WHERE id=? AND status=?", (version_id, UPLOADING))

    def version(self, version_id: int) -> Version | None:
        row = self.db.execute(f"SELECT {_VERSION_COLUMNS} FROM versions WHERE id=?", (version_id,)).fetchone()
        return None if row is None else Version(*row)

    def version_by_entry(self, entry: str) -> Version | None:
        team, _, number = entry.rpartition("@")
        if not number.isdigit():
            return None
        row = self.db.execute(
            f"SELECT {_VERSION_COLUMNS} FROM versions WHERE team=? AND number=?", (team, int(number))
        ).fetchone()
        return None if row is None else Version(*row)

    def versions(self, team: str | None = None, status: str | None = None) -> list[Version]:
        where, args = [], []
        if team is not None:
            where.append("team=?")
            args.append(team)
        if status is not None:
            where.append("status=?")
            args.append(status)
        sql = f"SELECT {_VERSION_COLUMNS} FROM versions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [Version(*r) for r in self.db.execute(sql + " ORDER BY team, number", args)]

    def active_versions(self) -> list[Version]:
        """The versions being ranked: active, of enabled teams."""
        return [
            Version(*r)
            for r in self.db.execute(
                f"SELECT {_VERSION_COLUMNS} FROM versions WHERE status=? AND team IN "
                "(SELECT name FROM teams WHERE disabled=0) ORDER BY team, number",
                (ACTIVE,),
            )
        ]

    def transition(self, version_id: int, status: str, *, expect: str | None = None, **fields: Any) -> Version:
        """Move a version to ``status`` (and set ``fields``) if the lifecycle allows it; returns it after.

        Compare-and-set: the move is checked against the version's status in
        the same transaction (and against ``expect``, when given), so a writer
        acting on an old view raises :class:`IllegalTransition` and writes nothing.
        """
        bad = set(fields) - VERSION_FIELDS
        if bad:
            raise ValueError(f"unknown version fields {sorted(bad)}")
        if status == QUEUED:
            fields.setdefault("uploaded", 1)
        with self.transaction() as db:
            row = db.execute("SELECT team, number, status FROM versions WHERE id=?", (version_id,)).fetchone()
            if row is None:
                raise LadderError(f"no version with id {version_id}")
            entry, current = f"{row[0]}@{row[1]}", row[2]
            if expect is not None and current != expect:
                raise IllegalTransition(entry, current, status)
            if status != current:  # staying where it is only writes the fields
                check(entry, current, status)
            sets = ", ".join(["status=?", *(f"{k}=?" for k in fields)])
            db.execute(
                f"UPDATE versions SET {sets} WHERE id=? AND status=?", (status, *fields.values(), version_id, current)
            )
        found = self.version(version_id)
        assert found is not None
        return found

    def revalidate(self, entry: str) -> Version:
        """Queue a failed version (``team@N``) to be built and validated again, its attempts reset.

        The organiser's action when the platform, not the team, failed it; a
        version in any other status raises :class:`LadderError` and nothing changes.
        """
        found = self.version_by_entry(entry)
        if found is None:
            raise LadderError(f"no version {entry!r} (team@number, as the team page shows it)")
        try:
            return self.transition(
                found.id, QUEUED, expect=FAILED, attempts=0, reason="", build_log="", validation_log="", image_id=None
            )
        except IllegalTransition:
            raise LadderError(
                f"{entry} is {found.status}, not failed: only a failed version can be validated again"
            ) from None

    def set_status(self, version_id: int, status: str, **fields: Any) -> None:
        """:meth:`transition` without a result (the lifecycle is enforced the same way)."""
        self.transition(version_id, status, **fields)

    def activate(self, version: Version, ratings: dict[str, tuple[float, float, float, int]]) -> Version:
        """Make ``version`` its team's active version; the one it replaces retires with its last rating.

        ``version`` must be ``validating`` (a new version) or ``retired`` (a
        version restored after its successor was suspended): compare-and-set,
        :class:`IllegalTransition` otherwise (the organiser disabled it meanwhile).
        """
        stamp = now()
        with self.transaction() as db:
            row = db.execute("SELECT status FROM versions WHERE id=?", (version.id,)).fetchone()
            if row is None:
                raise LadderError(f"no version {version.entry}")
            check(version.entry, row[0], ACTIVE)
            for old in db.execute(
                "SELECT id, team, number FROM versions WHERE team=? AND status=? AND id<>?",
                (version.team, ACTIVE, version.id),
            ).fetchall():
                elo, low, high, pairs = ratings.get(f"{old[1]}@{old[2]}", (None, None, None, None))
                db.execute(
                    "UPDATE versions SET status=?, retired=?, final_elo=?, final_low=?, final_high=?, final_pairs=? "
                    "WHERE id=?",
                    (RETIRED, stamp, elo, low, high, pairs, old[0]),
                )
            db.execute(
                "UPDATE versions SET status=?, activated=COALESCE(activated, ?), retired=NULL, reason='' WHERE id=?",
                (ACTIVE, stamp, version.id),
            )
        found = self.version(version.id)
        assert found is not None
        return found

    def suspend(self, version: Version, reason: str) -> Version | None:
        """Suspend an active version (``reason`` told on its team's page); restore the team's previous good one.

        One transaction: a kill in between never leaves the team without its
        active version. Returns the restored version (None: the team had none
        to restore); :class:`IllegalTransition` if ``version`` is not active.
        """
        with self.transaction() as db:
            row = db.execute("SELECT status FROM versions WHERE id=?", (version.id,)).fetchone()
            current = row[0] if row is not None else "gone"
            if current != ACTIVE:
                raise IllegalTransition(version.entry, current, SUSPENDED)
            db.execute("UPDATE versions SET status=?, reason=? WHERE id=?", (SUSPENDED, reason[:500], version.id))
            previous = db.execute(
                "SELECT id FROM versions WHERE team=? AND status=? AND id<? AND image_id IS NOT NULL "
                "ORDER BY id DESC LIMIT 1",
                (version.team, RETIRED, version.id),
            ).fetchone()
            if previous is not None:
                db.execute("UPDATE versions SET status=?, retired=NULL, reason='' WHERE id=?", (ACTIVE, previous[0]))
        return None if previous is None else self.version(previous[0])

    def queue_again(self, version: Version, *, attempts: int | None = None) -> None:
        """Queue ``version`` to be built again (``attempts``: its count set back; None: kept), unless it was
        disabled meanwhile: then it stays so."""
        try:
            self.transition(version.id, QUEUED, **({} if attempts is None else {"attempts": attempts}))
        except IllegalTransition:
            pass

    def interrupted_builds(self) -> list[Version]:
        """Versions a killed server left half-built: they are built again (or marked failed)."""
        return [v for v in self.versions() if v.status in IN_BUILD]


_VERSION_COLUMNS = ", ".join(f.name for f in dataclasses.fields(Version))
#: The fields a status move may set besides the status.
VERSION_FIELDS = frozenset(f.name for f in dataclasses.fields(Version)) - {"id", "team", "number", "status", "created"}

__all__ = ["VERSION_FIELDS", "Version", "VersionTables"]
