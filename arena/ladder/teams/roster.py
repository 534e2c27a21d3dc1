"""A ladder's roster: the ``[roster]`` settings, the organiser's CSV import, and the rules names and e-mails follow.

Light on purpose (the standard library and the store): the site reads the
``[roster]`` section of ``ladder.toml`` at each sign-up (:func:`read_roster_settings`),
so a new join code works at once, without the loop's configuration modules.

The import (``arena ladder team import``) checks every line of the CSV
before anything is written (:func:`check_roster`): a roster with one bad line
is refused whole, with each wrong line's number and what is wrong, and the
store is untouched.  Each new member's token goes once into a file for a mail
merge (:func:`write_tokens_file`: mode 0600, never over an existing file).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re
import secrets
import tomllib
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.ladder.common.ladder_db import LadderError
from arena.ladder.teams.names import email_key, name_key
from arena.ladder.teams.store import TeamTables, check_team_name, new_token

#: The CSV header a roster starts with.
HEADER = ("team", "member", "email")
#: The columns of the tokens file (a mail merge's fields).
TOKENS_HEADER = ("team", "member", "email", "token")
#: Characters a member's name may have at most.
MEMBER_CHARS = 80
#: An e-mail address as a mail merge can use it: one @, a dot in the domain, no spaces, commas or brackets.
EMAIL = re.compile(r"[^@\s,;<>\"'()\[\]]+@[^@\s,;<>\"'()\[\]]+\.[^@\s,;<>\"'()\[\].]+")
#: Wrong lines listed at most in one refusal.
MAX_LISTED = 20
#: The least characters a join code may have (it is the door of self-registration).
MIN_JOIN_CODE = 8


class RosterError(ArenaError):
    """A roster or a sign-up the ladder cannot take (a bad line, a bad name, a full team): one line each."""


@dataclasses.dataclass(frozen=True)
class RosterSettings:
    """``[roster]`` of ladder.toml: who may make a team on the site, and within what limits."""

    join_code: str = ""
    """The code the organiser hands out for self-registration on /join ('' : self-registration is off)."""
    team_size: int = 4
    """Members a team may have at most (revoked members do not count)."""
    name_pattern: str = ""
    """A regular expression a self-registered team's name must match in full ('' : any valid team name)."""
    approval: bool = False
    """A self-registered team waits for the organiser's approval (admin page) before it may upload."""
    teams_per_hour: int = 3
    """Teams one client address may make on /join in an hour (0: none)."""

    @property
    def open(self) -> bool:
        """Whether teams may register themselves."""
        return bool(self.join_code)


def parse_roster_settings(table: dict[str, Any]) -> RosterSettings:
    """The ``[roster]`` table as settings; :class:`RosterError` (one line) for a bad value."""
    unknown = set(table) - {f.name for f in dataclasses.fields(RosterSettings)}
    if unknown:
        raise RosterError(f"[roster] has unknown keys: {', '.join(sorted(unknown))}")
    join_code = table.get("join_code", "")
    team_size = table.get("team_size", RosterSettings.team_size)
    name_pattern = table.get("name_pattern", "")
    approval = table.get("approval", False)
    per_hour = table.get("teams_per_hour", RosterSettings.teams_per_hour)
    if not isinstance(join_code, str) or (join_code and (len(join_code) < MIN_JOIN_CODE or not join_code.isprintable())):
        raise RosterError(f"[roster] join_code must be '' (off) or at least {MIN_JOIN_CODE} printable characters")
    if isinstance(team_size, bool) or not isinstance(team_size, int) or not 1 <= team_size <= 100:
        raise RosterError(f"[roster] team_size must be 1 to 100, got {team_size!r}")
    if not isinstance(name_pattern, str):
        raise RosterError(f"[roster] name_pattern must be a string, got {name_pattern!r}")
    try:
        re.compile(name_pattern)
    except re.error as exc:
        raise RosterError(f"[roster] name_pattern is not a regular expression: {exc}") from None
    if not isinstance(approval, bool):
        raise RosterError(f"[roster] approval must be true or false, got {approval!r}")
    if isinstance(per_hour, bool) or not isinstance(per_hour, int) or not 0 <= per_hour <= 10_000:
        raise RosterError(f"[roster] teams_per_hour must be 0 to 10000, got {per_hour!r}")
    return RosterSettings(join_code.strip(), team_size, name_pattern, approval, per_hour)


def read_roster_settings(directory: Path) -> RosterSettings:
    """The ``[roster]`` section of ``DIR/ladder.toml`` as it is now; :class:`RosterError` if it cannot be read."""
    try:
        data = tomllib.loads((directory / "ladder.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RosterError(f"cannot read the ladder's settings: {exc}") from None
    table = data.get("roster", {})
    if not isinstance(table, dict):
        raise RosterError("[roster] must be a table")
    return parse_roster_settings(table)


ROSTER_LINE = re.compile(r"(?m)^(\s*join_code\s*=\s*)(\"[^\"\n]*\"|'[^'\n]*')(.*)$")


def set_join_code(directory: Path, code: str) -> None:
    """Write ``code`` as ``[roster] join_code`` into ``DIR/ladder.toml`` (the file's comments kept).

    An older ladder.toml without a ``[roster]`` section gains one.  The file is
    replaced atomically (a crash leaves the old one or the new one).
    """
    if '"' in code or "\\" in code or not code.isprintable():
        raise RosterError("a join code may not hold quotes, backslashes or control characters")
    path = directory / "ladder.toml"
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    quoted = f'"{code}"'
    if "roster" not in data:
        text = text.rstrip("\n") + "\n\n" + ROSTER_TEMPLATE.replace('join_code = ""', f"join_code = {quoted}", 1)
    elif "join_code" not in data["roster"]:
        text = re.sub(r"(?m)^\[roster\][^\n]*$", lambda m: m.group(0) + f"\njoin_code = {quoted}", text, count=1)
    else:
        section = re.search(r"(?ms)^\[roster\].*?(?=^\[|\Z)", text)
        if section is None:
            raise RosterError(f"{path}: cannot find the [roster] section to change (edit join_code by hand)")
        body, n = ROSTER_LINE.subn(lambda m: m.group(1) + quoted + m.group(3), section.group(0), count=1)
        if n != 1:
            raise RosterError(f"{path}: cannot find join_code in [roster] (edit it by hand)")
        text = text[: section.start()] + body + text[section.end():]
    if tomllib.loads(text).get("roster", {}).get("join_code") != code:
        raise RosterError(f"{path}: the new join code could not be written (edit join_code by hand)")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def new_join_code() -> str:
    """A fresh join code: 12 characters from an alphabet without look-alikes (easy to read out in a lecture)."""
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "-".join("".join(secrets.choice(alphabet) for _ in range(4)) for _ in range(3))


def new_invite_code() -> str:
    """A team's invite code for its teammates (stored only as a hash)."""
    return new_token()


#: The ``[roster]`` section as ``arena ladder init`` writes it (config.template includes it).
ROSTER_TEMPLATE = '''[roster]                       # members and self-registration (docs/ladder.md, "Roster and members")
join_code = ""                 # the code for /join (teams register themselves); "" turns it off. Read at each
                               # sign-up: `arena ladder team join-code DIR --rotate` (or an edit) takes effect at once
team_size = 4                  # members a team may have at most (revoked members do not count)
name_pattern = ""              # a regular expression a self-registered team's name must match ("" : any valid name)
approval = false               # true: a team made on /join waits for the organiser's approval before it may upload
teams_per_hour = 3             # teams one client address may make on /join in an hour (a lab behind one address: raise it)
'''


# ------------------------------------------------------------ names


#: A cell starting with one of these is a formula to a spreadsheet (the tokens file, a grade export).
FORMULA_START = ("=", "+", "-", "@")


def check_member_name(name: str) -> str:
    """1-80 printable characters, not starting like a spreadsheet formula (the site escapes them)."""
    name = name.strip()
    if not 1 <= len(name) <= MEMBER_CHARS or not name.isprintable():
        raise RosterError(f"member name {name[:MEMBER_CHARS]!r}: use 1-{MEMBER_CHARS} printable characters")
    if name.startswith(FORMULA_START):
        raise RosterError(f"member name {name!r} may not start with {' '.join(FORMULA_START)} (a spreadsheet formula)")
    return name


def check_email(email: str) -> str:
    """An address a mail merge can send to (one ``@``, a dot in the domain, no spaces); at most 254 characters."""
    email = email.strip()
    if len(email) > 254 or not EMAIL.fullmatch(email):
        raise RosterError(f"e-mail {email[:60]!r} is not an address (name@example.org)")
    return email


def check_self_registered_name(name: str, settings: RosterSettings) -> str:
    """A name a team chose on /join: the ladder's team-name rule, and the organiser's pattern."""
    try:
        check_team_name(name)
    except LadderError as exc:
        raise RosterError(str(exc)) from None
    if settings.name_pattern and not re.fullmatch(settings.name_pattern, name):
        raise RosterError(f"team name {name!r} does not follow the organiser's rule ({settings.name_pattern})")
    return name


# ------------------------------------------------------------ the import


@dataclasses.dataclass(frozen=True)
class RosterLine:
    """One checked line of a roster."""

    line: int
    team: str
    member: str
    email: str


@dataclasses.dataclass(frozen=True)
class RosterPlan:
    """What an import will do: the members to add (new teams among them), and the lines already in the store."""

    add: list[RosterLine]
    new_teams: list[str]
    present: list[RosterLine]


def read_roster(text: str) -> list[tuple[int, list[str]]]:
    """The CSV's data rows with their line numbers; :class:`RosterError` for a wrong header."""
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff")))  # a spreadsheet's byte-order mark
    try:
        header = next(reader, None)
        if header is None or tuple(h.strip().lower() for h in header) != HEADER:
            raise RosterError(f"line 1: the header must be {','.join(HEADER)} (got {','.join(header or [])!r})")
        rows = []
        for row in reader:
            if row and any(field.strip() for field in row):  # blank lines are skipped
                rows.append((reader.line_num, row))
    except csv.Error as exc:
        raise RosterError(f"line {reader.line_num}: not CSV ({exc})") from None
    return rows


class TeamNames:
    """The team names a roster's new members go to, checked against the ladder's and each other's."""

    def __init__(self, store: TeamTables) -> None:
        self.teams = {t.name: t for t in store.teams()}
        self.ladder_keys = {name_key(t): t for t in self.teams}
        self.roster_keys: dict[str, tuple[str, int]] = {}

    def problem(self, line: int, team: str) -> str | None:
        """Why a new member cannot go to ``team`` (one line), or None."""
        found = self.teams.get(team)
        if found is not None and found.self_registered:
            return (f"line {line}: team {team!r} was made on the join page, not by the organiser (a squatted name?): "
                    f"nothing is added to it; rename the team in the roster")  # fmt: skip
        key = name_key(team)
        like = self.ladder_keys.get(key)
        if found is None and like is not None:
            return f"line {line}: team {team!r} looks too much like the ladder's team {like!r}: use one spelling"
        first = self.roster_keys.setdefault(key, (team, line))
        if first[0] != team:
            return f"line {line}: team {team!r} looks too much like team {first[0]!r} on line {first[1]}: use one spelling"
        return None


def _refusal(problems: list[str]) -> RosterError:
    """A roster refused whole: how many lines are wrong, then each (the first ``MAX_LISTED``)."""
    listed = problems[:MAX_LISTED]
    more = f"\n... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
    return RosterError(f"the roster has {len(problems)} wrong line(s); nothing was imported:\n" + "\n".join(listed) + more)


def check_roster(text: str, store: TeamTables, team_size: int) -> RosterPlan:
    """Check every line of a roster against itself and the store; :class:`RosterError` listing every wrong line.

    Wrong: a missing or extra field, a bad team name, member name or e-mail,
    the same member twice, an e-mail already another member's, a member in
    the store under another e-mail (e-mails compared case-folded), a team over
    ``team_size`` members, a new member for a team made on the join page (a
    squatted name: nothing is added to it), a team name that looks like
    another's (:func:`arena.ladder.teams.names.name_key`).
    """
    problems: list[str] = []
    add: list[RosterLine] = []
    present: list[RosterLine] = []
    seen: dict[tuple[str, str], int] = {}
    emails: dict[str, int] = {}
    counts: dict[str, int] = {}
    known_emails = {email_key(m.email): (t.name, m.name) for t in store.teams() for m in store.members(t.name)}
    names = TeamNames(store)
    for line, row in read_roster(text):
        fields = [f.strip() for f in row]
        if len(fields) != len(HEADER):
            problems.append(f"line {line}: {len(fields)} fields, a line has {len(HEADER)} (team,member,email)")
            continue
        missing = [name for name, value in zip(HEADER, fields, strict=True) if not value]
        if missing:
            problems.append(f"line {line}: the {' and the '.join(missing)} is missing")
            continue
        team, member, email = fields
        try:
            check_team_name(team)
            member = check_member_name(member)
            email = check_email(email)
        except ArenaError as exc:
            problems.append(f"line {line}: {exc}")
            continue
        if (team, member) in seen:
            problems.append(f"line {line}: duplicate member {member!r} of team {team!r} (also on line {seen[team, member]})")
            continue
        seen[team, member] = line
        if email_key(email) in emails:
            problems.append(f"line {line}: e-mail {email!r} is on line {emails[email_key(email)]} too")
            continue
        emails[email_key(email)] = line
        stored = store.member(team, member)
        if stored is not None:
            if email_key(stored.email) != email_key(email):
                problems.append(f"line {line}: {member!r} of team {team!r} is in the ladder with another e-mail")
            else:
                present.append(RosterLine(line, team, member, email))
            continue
        owner = known_emails.get(email_key(email))
        if owner is not None:
            problems.append(f"line {line}: e-mail {email!r} is already {owner[1]!r}'s of team {owner[0]!r}")
            continue
        wrong_team = names.problem(line, team)
        if wrong_team:
            problems.append(wrong_team)
            continue
        if team not in counts:
            counts[team] = sum(1 for m in store.members(team) if not m.revoked)
        counts[team] += 1
        if counts[team] > team_size:
            problems.append(f"line {line}: team {team!r} would have {counts[team]} members (at most {team_size}, [roster] team_size)")
            continue
        add.append(RosterLine(line, team, member, email))
    if problems:
        raise _refusal(problems)
    new_teams = sorted({r.team for r in add if store.team(r.team) is None})
    return RosterPlan(add, new_teams, present)


def reserve_roster(store: TeamTables, plan: RosterPlan) -> int:
    """Reserve the roster's team names and e-mails against self-registration; returns how many were new."""
    lines = [*plan.add, *plan.present]
    return store.reserve(sorted({r.team for r in lines}), [r.email for r in lines])


def open_tokens_file(path: Path) -> io.TextIOWrapper:
    """Create the tokens file for writing: mode 0600 from its first byte, refused if anything is there."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise RosterError(
            f"{path} exists: the tokens of an earlier import may be in it; mail them and remove it, or pass --tokens"
        ) from None
    except OSError as exc:
        raise RosterError(f"cannot create {path}: {exc.strerror}") from None
    os.fchmod(fd, 0o600)  # whatever the umask
    return io.TextIOWrapper(os.fdopen(fd, "wb"), encoding="utf-8", newline="")


def import_roster(store: TeamTables, plan: RosterPlan, tokens_path: Path) -> list[tuple[str, str, str, str]]:
    """Add the plan's members, each token written to ``tokens_path`` first; returns the rows written.

    The file is written and flushed to disk before the store is changed; if
    the store then refuses (a member added meanwhile), the file is removed and
    nothing is imported.  With nothing to add, no file is made.
    """
    rows = [(r.team, r.member, r.email, new_token()) for r in plan.add]
    if not rows:
        return []
    out = open_tokens_file(tokens_path)
    try:
        with out:
            writer = csv.writer(out)
            writer.writerow(TOKENS_HEADER)
            writer.writerows(rows)
            out.flush()
            os.fsync(out.fileno())
        store.import_members(rows)
        reserve_roster(store, plan)
    except BaseException:
        tokens_path.unlink(missing_ok=True)
        raise
    return rows


__all__ = [
    "HEADER", "ROSTER_TEMPLATE", "RosterError", "RosterLine", "RosterPlan", "RosterSettings", "TOKENS_HEADER",
    "check_email", "check_member_name", "check_roster", "check_self_registered_name", "import_roster",
    "new_invite_code", "new_join_code", "open_tokens_file", "parse_roster_settings", "read_roster",
    "read_roster_settings", "reserve_roster", "set_join_code",
]  # fmt: skip
