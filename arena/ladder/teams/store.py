"""The teams' tables of ``ladder.sqlite``: teams, their members, sign-in sessions, and the organiser's token.

Tokens are never stored: only their SHA-256 (a token is 192 random bits, so
a plain hash cannot be searched), compared in constant time.  A disabled
team's tokens, shared or a member's, identify nobody, and its sessions end.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import hmac
import secrets
import sqlite3
from typing import Any

from arena.ladder.common.ladder_db import LadderDatabase, LadderError, now
from arena.ladder.teams.names import email_key, name_key
from arena.storage.sqlite import Column

#: How long a web sign-in lasts.
SESSION_DAYS = 7


@dataclasses.dataclass(frozen=True)
class Team:
    """A team: its name, whether the organiser disabled it, when it was made."""

    name: str
    disabled: bool
    created: str
    pending: bool = False
    """A self-registered team waiting for the organiser's approval: it may sign in, not upload."""
    self_registered: bool = False
    """Made on the site's join page by its first member (not by the organiser or a roster)."""


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


def new_token() -> str:
    """A fresh secret token (192 random bits, URL-safe text)."""
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    """What the tables keep of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


TEAM_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"


def check_team_name(name: str) -> str:
    """1-40 letters, digits, '.', '_' or '-', starting with a letter or digit: safe in paths, tags and URLs."""
    if not 1 <= len(name) <= 40 or not name[0].isalnum() or any(c not in TEAM_NAME_CHARS for c in name):
        raise LadderError(
            f"team name {name!r}: use 1-40 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


class TeamTables(LadderDatabase):
    """``teams``, ``members`` and ``sessions`` (see the module docstring)."""

    SCHEMA = """
CREATE TABLE IF NOT EXISTS teams (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    disabled INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,
    team TEXT,
    admin INTEGER NOT NULL DEFAULT 0,
    expires TEXT NOT NULL
);
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
CREATE TABLE IF NOT EXISTS reserved (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    shown TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
"""
    #: The roster (docs/ladder.md, "Roster and members"): who is signed in, a self-registered
    #: team waiting for the organiser, a team's invite code (its hash).
    ADDED_COLUMNS = (
        Column("sessions", "member_id", "INTEGER"),
        Column("teams", "pending", "INTEGER NOT NULL DEFAULT 0"),
        Column("teams", "invite_hash", "TEXT"),
        Column("teams", "self_registered", "INTEGER NOT NULL DEFAULT 0"),
    )

    def _connect(self) -> sqlite3.Connection:
        db = super()._connect()
        # The comparisons of names and e-mails, in SQL as in Python (arena.ladder.teams.names).
        db.create_function("email_key", 1, email_key, deterministic=True)
        db.create_function("name_key", 1, name_key, deterministic=True)
        return db

    def is_admin_token(self, token: str) -> bool:
        """Whether ``token`` is the organiser's (its hash is in ``meta``; compared in constant time)."""
        stored = self.meta().get("admin_token_hash", "")
        return bool(stored) and hmac.compare_digest(stored, token_hash(token))

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
        self, db: sqlite3.Connection, team: str, name: str, email: str, token: str, team_size: int | None,
        taken: set[str] | None = None,
    ) -> None:
        """Insert one member, refusing a full team, a name taken in it, an e-mail any member has.

        ``taken``: the e-mails (:func:`email_key`) already in the table, when the caller
        inserts many in one transaction (one read instead of one per member).
        """
        if db.execute("SELECT 1 FROM teams WHERE name=?", (team,)).fetchone() is None:
            raise LadderError(f"no team {team!r}")
        if team_size is not None:
            (count,) = db.execute("SELECT COUNT(*) FROM members WHERE team=? AND revoked=0", (team,)).fetchone()
            if count >= team_size:
                raise LadderError(f"team {team!r} has {count} members already (at most {team_size})")
        key = email_key(email)
        if taken is None:
            found = db.execute("SELECT 1 FROM members WHERE email_key(email)=?", (key,)).fetchone() is not None
        else:
            found = key in taken
            taken.add(key)
        if found:
            # Revoked members' e-mails too: one address is one student, in the gradebook as here.
            raise LadderError(f"the e-mail {email!r} belongs to a member of this ladder already (one e-mail, one member)")
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
                self._check_free_name(db, team)
                self._check_unreserved_email(db, email)
                db.execute(
                    "INSERT INTO teams(name, token_hash, created, pending, invite_hash, self_registered)"
                    " VALUES (?, ?, ?, ?, ?, 1)",
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
            self._check_unreserved_email(db, email)
            self._insert_member(db, team, member, email, token, team_size)
        return token

    @staticmethod
    def _check_free_name(db: sqlite3.Connection, team: str) -> None:
        """Refuse a self-registered name that is taken, looks like a team's, or is reserved for the roster."""
        key = name_key(team)
        for (taken,) in db.execute("SELECT name FROM teams WHERE name_key(name)=?", (key,)):
            if taken == team:
                raise LadderError(f"the team name {team!r} is taken")
            raise LadderError(f"the team name {team!r} looks too much like the team {taken!r}: choose another")
        row = db.execute("SELECT shown FROM reserved WHERE kind='team' AND key=?", (key,)).fetchone()
        if row is not None:
            like = "is" if row[0] == team else f"looks too much like {row[0]!r}, which is"
            raise LadderError(f"the team name {team!r} {like} reserved for the organiser's roster: choose another")

    @staticmethod
    def _check_unreserved_email(db: sqlite3.Connection, email: str) -> None:
        """Refuse an e-mail on the organiser's roster: that student's token comes from the organiser."""
        if db.execute("SELECT 1 FROM reserved WHERE kind='email' AND key=?", (email_key(email),)).fetchone():
            raise LadderError(
                f"the e-mail {email!r} is on the organiser's roster: your token comes from the organiser, ask them"
            )

    def reserve(self, teams: list[str], emails: list[str]) -> int:
        """Reserve a roster's team names and e-mails against self-registration; returns how many were new."""
        rows = [("team", name_key(t), t) for t in teams] + [("email", email_key(e), e) for e in emails]
        with self.transaction() as db:
            before = db.total_changes
            db.executemany("INSERT OR IGNORE INTO reserved(kind, key, shown) VALUES (?, ?, ?)", rows)
            return db.total_changes - before

    def reserved(self) -> dict[str, list[str]]:
        """The reserved team names and e-mails (``{"team": [...], "email": [...]}``), as the roster wrote them."""
        found: dict[str, list[str]] = {"team": [], "email": []}
        for kind, shown in self.db.execute("SELECT kind, shown FROM reserved ORDER BY kind, shown"):
            found.setdefault(kind, []).append(shown)
        return found

    def duplicate_emails(self) -> dict[str, list[tuple[str, str]]]:
        """E-mails held by more than one member (an older ladder's store): case-folded e-mail -> [(team, member)]."""
        seen: dict[str, list[tuple[str, str]]] = {}
        for team, name, email in self.db.execute("SELECT team, name, email FROM members ORDER BY id"):
            if email.strip():
                seen.setdefault(email_key(email), []).append((team, name))
        return {key: owners for key, owners in seen.items() if len(owners) > 1}

    def set_invite(self, team: str, invite: str) -> None:
        """Replace a team's invite code (the old one stops working)."""
        with self.transaction() as db:
            if db.execute("UPDATE teams SET invite_hash=? WHERE name=?", (token_hash(invite), team)).rowcount != 1:
                raise LadderError(f"no team {team!r}")

    def revoke_member(self, team: str, name: str) -> None:
        """Revoke one member's token and end their sessions; the team and its other members go on.

        The team's invite code stops working too (the member knew it; a
        teammate makes a new one on the team's page), and the member's e-mail
        stays theirs: they cannot join again under another name.
        """
        with self.transaction() as db:
            row = db.execute("SELECT id FROM members WHERE team=? AND name=?", (team, name)).fetchone()
            if row is None:
                raise LadderError(f"team {team!r} has no member {name!r}")
            db.execute("UPDATE members SET revoked=1 WHERE id=?", (row[0],))
            db.execute("DELETE FROM sessions WHERE member_id=?", (row[0],))
            # The revoked member knows the team's invite code: it stops working (a teammate makes a new one).
            db.execute("UPDATE teams SET invite_hash=? WHERE name=? AND invite_hash IS NOT NULL",
                       (token_hash(new_token()), team))  # fmt: skip

    def remove_member(self, team: str, name: str) -> None:
        """Remove one member outright (a forged sign-up): their row and sessions; their uploads keep their name."""
        with self.transaction() as db:
            row = db.execute("SELECT id FROM members WHERE team=? AND name=?", (team, name)).fetchone()
            if row is None:
                raise LadderError(f"team {team!r} has no member {name!r}")
            db.execute("DELETE FROM sessions WHERE member_id=?", (row[0],))
            db.execute("DELETE FROM members WHERE id=?", (row[0],))

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
            taken = {email_key(e) for (e,) in db.execute("SELECT email FROM members")}
            for team, member, email, token in rows:
                found = db.execute("SELECT self_registered FROM teams WHERE name=?", (team,)).fetchone()
                if found is not None and found[0]:  # made on /join since the roster was checked
                    raise LadderError(f"team {team!r} was made on the join page, not by the organiser: nothing was imported")
                if found is None:
                    check_team_name(team)
                    db.execute(
                        "INSERT INTO teams(name, token_hash, created) VALUES (?, ?, ?)",
                        (team, token_hash(new_token()), stamp),
                    )
                self._insert_member(db, team, member, email, token, None, taken)

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


_TEAM_COLUMNS = "name, disabled, created, pending, self_registered"
_MEMBER_COLUMNS = "id, team, name, email, revoked, created"


def _team(row: tuple[Any, ...]) -> Team:
    return Team(row[0], bool(row[1]), row[2], bool(row[3]), bool(row[4]))


def _member(row: tuple[Any, ...]) -> Member:
    return Member(row[0], row[1], row[2], row[3], bool(row[4]), row[5])


__all__ = [
    "SESSION_DAYS", "Identity", "Member", "Team", "TeamTables", "check_team_name", "new_token",
    "token_hash",
]  # fmt: skip
