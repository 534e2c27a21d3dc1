"""The ladder's own state: teams, their versions, sign-in sessions, pairs in play, rating history.

One SQLite file, ``DIR/ladder.sqlite`` (WAL), next to the games in
``DIR/results.sqlite`` (the tournament's store, so ``arena ratings`` reads a
ladder too).  The web server and the ladder loop both write here, each in
short transactions on its own thread's connection (SQLite serialises them; a
busy timeout covers the wait; a connection shared by two threads would let one
thread's statements fall inside the other's transaction).  A version's status
moves only as :mod:`arena.ladder.versions.lifecycle` allows, compare-and-set.

Tokens are never stored: only their SHA-256 (a token is 192 random bits, so
a plain hash cannot be searched), compared in constant time.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import hmac
import secrets
import sqlite3
from contextlib import AbstractContextManager, suppress
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.results.store import write_transaction
from arena.results.threads import PerThread
from arena.ladder.versions.lifecycle import (
    ACTIVE,
    BUILDING,
    DISABLED,
    FAILED,
    IN_BUILD,
    QUEUED,
    RETIRED,
    SUSPENDED,
    UPLOADING,
    VALIDATING,
    IllegalTransition,
    check,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS teams (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    disabled INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL
);
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
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,
    team TEXT,
    admin INTEGER NOT NULL DEFAULT 0,
    expires TEXT NOT NULL
);
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
CREATE TABLE IF NOT EXISTS members (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team TEXT NOT NULL REFERENCES teams(name),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    revoked INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    UNIQUE (team, name)
);
"""

#: Columns added since the first ladders (added to an older store when it is opened).
ADDED_COLUMNS = (
    ("versions", "reason", "TEXT NOT NULL DEFAULT ''"),
    ("versions", "uploaded", "INTEGER NOT NULL DEFAULT 0"),
    # The roster (docs/ladder.md, "Roster and members"): who uploaded, who is signed in,
    # a self-registered team waiting for the organiser, a team's invite code (its hash).
    ("versions", "member", "TEXT NOT NULL DEFAULT ''"),
    ("sessions", "member_id", "INTEGER"),
    ("teams", "pending", "INTEGER NOT NULL DEFAULT 0"),
    ("teams", "invite_hash", "TEXT"),
)
#: How long a web sign-in lasts.
SESSION_DAYS = 7


class LadderError(ArenaError):
    """A ladder operation that cannot be done (unknown team, a name taken, a quota reached): one line."""


@dataclasses.dataclass(frozen=True)
class Team:
    name: str
    disabled: bool
    created: str
    pending: bool = False
    """A self-registered team waiting for the organiser's approval: it may sign in, not upload."""


@dataclasses.dataclass(frozen=True)
class Member:
    """One person of a team, with a token of their own (revocable alone)."""

    id: int
    team: str
    name: str
    email: str
    revoked: bool
    created: str


@dataclasses.dataclass(frozen=True)
class Identity:
    """Who a token or a session is: a team, and the member when it is a member's (None: the team's shared token)."""

    team: Team
    member: Member | None = None


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


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def new_token() -> str:
    """A fresh secret token (192 random bits, URL-safe text)."""
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


TEAM_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"


def check_team_name(name: str) -> str:
    """1-40 letters, digits, '.', '_' or '-', starting with a letter or digit: safe in paths, tags and URLs."""
    if not 1 <= len(name) <= 40 or not name[0].isalnum() or any(c not in TEAM_NAME_CHARS for c in name):
        raise LadderError(
            f"team name {name!r}: use 1-40 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


class LadderStore:
    """``ladder.sqlite``: see the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connections: PerThread[sqlite3.Connection] = PerThread(self._connect, _close_quietly)
        try:
            db = self.db
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            self._add_columns(db)
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

    def _add_columns(self, db: sqlite3.Connection) -> None:
        for table, column, kind in ADDED_COLUMNS:
            have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                with self.transaction() as tx:
                    tx.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                    if column == "uploaded":  # every version of an older store past its upload counts
                        tx.execute("UPDATE versions SET uploaded=1 WHERE status<>?", (UPLOADING,))

    def close(self) -> None:
        """Close every thread's connection."""
        self._connections.close_all()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """One atomic write on this thread's connection; a write SQLite cannot make (a full disk) is a StoreError."""
        return write_transaction(self.db, self.path)

    # ------------------------------------------------------------ meta

    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def is_admin_token(self, token: str) -> bool:
        stored = self.meta().get("admin_token_hash", "")
        return bool(stored) and hmac.compare_digest(stored, token_hash(token))

    @property
    def paused(self) -> bool:
        return self.meta().get("paused") == "1"

    # ------------------------------------------------------------ teams

    def add_team(self, name: str) -> str:
        """Create a team; returns its token (shown once, stored only as a hash)."""
        check_team_name(name)
        token = new_token()
        try:
            with self.transaction() as db:
                db.execute(
                    "INSERT INTO teams(name, token_hash, created) VALUES (?, ?, ?)", (name, token_hash(token), now())
                )
        except sqlite3.IntegrityError:
            raise LadderError(f"team {name!r} exists already (arena ladder team token DIR {name} --rotate gives it a new token)") from None
        return token

    def rotate_token(self, name: str) -> str:
        token = new_token()
        with self.transaction() as db:
            if db.execute("UPDATE teams SET token_hash=? WHERE name=?", (token_hash(token), name)).rowcount != 1:
                raise LadderError(f"no team {name!r}")
            # The pages signed in with the old token end (the members' own sessions go on).
            db.execute("DELETE FROM sessions WHERE team=? AND member_id IS NULL", (name,))
        return token

    def set_team_disabled(self, name: str, disabled: bool) -> None:
        with self.transaction() as db:
            if db.execute("UPDATE teams SET disabled=? WHERE name=?", (int(disabled), name)).rowcount != 1:
                raise LadderError(f"no team {name!r}")
            if disabled:
                db.execute("DELETE FROM sessions WHERE team=?", (name,))

    def team(self, name: str) -> Team | None:
        row = self.db.execute(f"SELECT {_TEAM_COLUMNS} FROM teams WHERE name=?", (name,)).fetchone()
        return None if row is None else _team(row)

    def teams(self) -> list[Team]:
        return [_team(r) for r in self.db.execute(f"SELECT {_TEAM_COLUMNS} FROM teams ORDER BY name")]

    def team_of_token(self, token: str) -> Team | None:
        """The enabled team whose token this is, its shared token or a member's (compared by hash)."""
        found = self.identify(token)
        return None if found is None else found.team

    def identify(self, token: str) -> Identity | None:
        """Whose token this is: the team's shared token, or one member's (not revoked); None if neither.

        A disabled team's tokens, shared or a member's, identify nobody.
        """
        digest = token_hash(token)
        row = self.db.execute(f"SELECT {_TEAM_COLUMNS} FROM teams WHERE token_hash=?", (digest,)).fetchone()
        if row is not None:
            team = _team(row)
            return None if team.disabled else Identity(team)
        member = self._member_where("token_hash=? AND revoked=0", (digest,))
        if member is None:
            return None
        team = self.team(member.team)
        return None if team is None or team.disabled else Identity(team, member)

    # ------------------------------------------------------------ members

    def members(self, team: str) -> list[Member]:
        """A team's members (revoked ones too), in the order they were added."""
        return [
            _member(r)
            for r in self.db.execute(f"SELECT {_MEMBER_COLUMNS} FROM members WHERE team=? ORDER BY id", (team,))
        ]

    def member(self, team: str, name: str) -> Member | None:
        return self._member_where("team=? AND name=?", (team, name))

    def _member_where(self, where: str, args: tuple[Any, ...]) -> Member | None:
        row = self.db.execute(f"SELECT {_MEMBER_COLUMNS} FROM members WHERE {where}", args).fetchone()
        return None if row is None else _member(row)

    def add_member(self, team: str, name: str, email: str, *, team_size: int | None = None) -> str:
        """Add a member to an existing team; returns their token (shown once, stored only as a hash).

        ``team_size``: the most members (not revoked) the team may have, checked
        in the same transaction (two sign-ups at once cannot pass it).
        """
        token = new_token()
        with self.transaction() as db:
            self._insert_member(db, team, name, email, token, team_size)
        return token

    def _insert_member(
        self, db: sqlite3.Connection, team: str, name: str, email: str, token: str, team_size: int | None
    ) -> None:
        if db.execute("SELECT 1 FROM teams WHERE name=?", (team,)).fetchone() is None:
            raise LadderError(f"no team {team!r}")
        if team_size is not None:
            (count,) = db.execute("SELECT COUNT(*) FROM members WHERE team=? AND revoked=0", (team,)).fetchone()
            if count >= team_size:
                raise LadderError(f"team {team!r} has {count} members already (at most {team_size})")
        try:
            db.execute(
                "INSERT INTO members(team, name, email, token_hash, created) VALUES (?, ?, ?, ?, ?)",
                (team, name, email, token_hash(token), now()),
            )
        except sqlite3.IntegrityError:
            raise LadderError(f"team {team!r} has a member named {name!r} already") from None

    def register_team(
        self, team: str, member: str, email: str, *, pending: bool, invite: str
    ) -> str:
        """A team made by its first member (self-registration); returns the member's token.

        The team's shared token is made and forgotten (its members sign in with
        their own; ``arena ladder team token --rotate`` gives it one).
        ``invite``: the code teammates join with (stored as a hash).
        """
        check_team_name(team)
        token = new_token()
        try:
            with self.transaction() as db:
                db.execute(
                    "INSERT INTO teams(name, token_hash, created, pending, invite_hash) VALUES (?, ?, ?, ?, ?)",
                    (team, token_hash(new_token()), now(), int(pending), token_hash(invite)),
                )
                self._insert_member(db, team, member, email, token, None)
        except sqlite3.IntegrityError:
            raise LadderError(f"the team name {team!r} is taken") from None
        return token

    def join_team(self, team: str, invite: str, member: str, email: str, *, team_size: int) -> str | None:
        """A member joins ``team`` with its invite code; their token, or None if the team or the code is wrong."""
        token = new_token()
        with self.transaction() as db:
            row = db.execute("SELECT invite_hash, disabled FROM teams WHERE name=?", (team,)).fetchone()
            if row is None or not row[0] or row[1] or not hmac.compare_digest(row[0], token_hash(invite)):
                return None
            self._insert_member(db, team, member, email, token, team_size)
        return token

    def set_invite(self, team: str, invite: str) -> None:
        """Replace a team's invite code (the old one stops working)."""
        with self.transaction() as db:
            if db.execute("UPDATE teams SET invite_hash=? WHERE name=?", (token_hash(invite), team)).rowcount != 1:
                raise LadderError(f"no team {team!r}")

    def revoke_member(self, team: str, name: str) -> None:
        """Revoke one member's token and end their sessions; the team and its other members go on."""
        with self.transaction() as db:
            row = db.execute("SELECT id FROM members WHERE team=? AND name=?", (team, name)).fetchone()
            if row is None:
                raise LadderError(f"team {team!r} has no member {name!r}")
            db.execute("UPDATE members SET revoked=1 WHERE id=?", (row[0],))
            db.execute("DELETE FROM sessions WHERE member_id=?", (row[0],))

    def rotate_member_token(self, team: str, name: str) -> str:
        """A new token for one member (the old one stops working, their sessions end; a revoked member is reinstated)."""
        token = new_token()
        with self.transaction() as db:
            row = db.execute("SELECT id FROM members WHERE team=? AND name=?", (team, name)).fetchone()
            if row is None:
                raise LadderError(f"team {team!r} has no member {name!r}")
            db.execute("UPDATE members SET token_hash=?, revoked=0 WHERE id=?", (token_hash(token), row[0]))
            db.execute("DELETE FROM sessions WHERE member_id=?", (row[0],))
        return token

    def pending_teams(self) -> list[Team]:
        return [t for t in self.teams() if t.pending]

    def approve_team(self, name: str) -> None:
        """A self-registered team may upload from now on."""
        with self.transaction() as db:
            if db.execute("UPDATE teams SET pending=0 WHERE name=?", (name,)).rowcount != 1:
                raise LadderError(f"no team {name!r}")

    def refuse_team(self, name: str) -> None:
        """Remove a self-registered team still waiting for approval (its members and sessions with it)."""
        with self.transaction() as db:
            row = db.execute("SELECT pending FROM teams WHERE name=?", (name,)).fetchone()
            if row is None or not row[0]:
                raise LadderError(f"no team {name!r} waiting for approval")
            if db.execute("SELECT 1 FROM versions WHERE team=?", (name,)).fetchone() is not None:
                raise LadderError(f"team {name!r} has versions: disable it instead")
            db.execute("DELETE FROM sessions WHERE team=?", (name,))
            db.execute("DELETE FROM members WHERE team=?", (name,))
            db.execute("DELETE FROM teams WHERE name=?", (name,))

    def import_members(self, rows: list[tuple[str, str, str, str]]) -> None:
        """Add (team, member, email, token) rows in one transaction, teams made as needed.

        All or nothing: a member that exists already (added meanwhile) is a
        :class:`LadderError` and nothing is written.  The rows are checked
        beforehand by :mod:`arena.ladder.teams.roster`.  A team made here has a shared
        token nobody knows (its members sign in with their own).
        """
        stamp = now()
        with self.transaction() as db:
            for team, member, email, token in rows:
                if db.execute("SELECT 1 FROM teams WHERE name=?", (team,)).fetchone() is None:
                    check_team_name(team)
                    db.execute(
                        "INSERT INTO teams(name, token_hash, created) VALUES (?, ?, ?)",
                        (team, token_hash(new_token()), stamp),
                    )
                self._insert_member(db, team, member, email, token, None)

    # ------------------------------------------------------------ sessions

    def new_session(self, team: str | None, admin: bool, member_id: int | None = None) -> str:
        session = new_token()
        expires = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=SESSION_DAYS)).isoformat(timespec="seconds")
        with self.transaction() as db:
            db.execute(
                "INSERT INTO sessions(token_hash, team, admin, expires, member_id) VALUES (?, ?, ?, ?, ?)",
                (token_hash(session), team, int(admin), expires, member_id),
            )
        return session

    def session(self, session: str) -> tuple[str | None, bool, str | None] | None:
        """(team, admin, member name) of a live session, None if unknown, expired, or its member revoked."""
        row = self.db.execute(
            "SELECT team, admin, expires, member_id FROM sessions WHERE token_hash=?", (token_hash(session),)
        ).fetchone()
        if row is None or row[2] < now():
            return None
        member = None
        if row[0] is not None:
            team = self.team(row[0])
            if team is None or team.disabled:
                return None
        if row[3] is not None:
            found = self._member_where("id=? AND revoked=0", (row[3],))
            if found is None:
                return None
            member = found.name
        return row[0], bool(row[1]), member

    def end_session(self, session: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM sessions WHERE token_hash=?", (token_hash(session),))

    # ------------------------------------------------------------ versions

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

    def interrupted_builds(self) -> list[Version]:
        """Versions a killed server left half-built: they are built again (or marked failed)."""
        return [v for v in self.versions() if v.status in IN_BUILD]

    # ------------------------------------------------------------ pairs and history

    def legacy_pairs(self) -> list[tuple[int, str, str, str]]:
        """The pairs a ladder from before the ledger kept here: (seq, first, second, status).

        Pairs are the run's results now (:mod:`arena.tables.ledger`); the loop
        moves the unfinished ones there once.
        """
        return [tuple(r) for r in self.db.execute("SELECT seq, version0, version1, status FROM pairs ORDER BY seq")]  # type: ignore[misc]

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


def _close_quietly(db: sqlite3.Connection) -> None:
    with suppress(sqlite3.Error):
        db.close()


_VERSION_COLUMNS = ", ".join(f.name for f in dataclasses.fields(Version))
_TEAM_COLUMNS = "name, disabled, created, pending"
_MEMBER_COLUMNS = "id, team, name, email, revoked, created"


def _team(row: tuple[Any, ...]) -> Team:
    return Team(row[0], bool(row[1]), row[2], bool(row[3]))


def _member(row: tuple[Any, ...]) -> Member:
    return Member(row[0], row[1], row[2], row[3], bool(row[4]), row[5])
#: The fields a status move may set besides the status.
VERSION_FIELDS = frozenset(f.name for f in dataclasses.fields(Version)) - {"id", "team", "number", "status", "created"}

__all__ = [
    "ACTIVE", "BUILDING", "DISABLED", "FAILED", "Identity", "IllegalTransition", "LadderError", "LadderStore",
    "Member", "QUEUED",
    "RETIRED", "SUSPENDED", "Team", "UPLOADING", "VALIDATING", "Version", "check_team_name", "new_token",
    "token_hash",
]  # fmt: skip
