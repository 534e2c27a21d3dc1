"""The ladder's leaderboard for grading: one table, from the stores, at a timestamp.

``arena ladder export DIR --csv FILE --json FILE`` (:mod:`arena.commands.ladder_export`)
writes what :func:`export` returns. It reads the ladder's two stores directly (read-only;
fine while the server runs) and uses the standings' one definition
(:mod:`arena.ladder.games.leaderboard`): every stored game, voided pairs out, the listed rows
the active versions of enabled teams. The columns and the JSON schema are in
docs/ladder.md ("Standings and grading").  Both exports take the ladder's
configuration (:class:`Course`: a ``LadderConfig`` is one), loaded by the caller.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
import json
from pathlib import Path
from typing import Any, Protocol

from arena.errors import ArenaError
from arena.ladder.course.calendar import Calendar, iso, phase, utc_now
from arena.ladder.course.final import FinalTable
from arena.ladder.course.final_store import FinalStore
from arena.ladder.course.grades import GradeBands
from arena.ladder.games.leaderboard import ladder_book
from arena.ladder.store import LadderStore
from arena.ladder.teams.names import email_key
from arena.results.store import ResultsStore

#: The export's format version (the JSON's ``format``): a change of columns changes it.
FORMAT = 1
#: The CSV's columns, in order (the JSON rows have the same keys).
COLUMNS = (
    "rank", "team", "version", "entry", "elo", "low", "high", "plus_minus",
    "pairs", "games", "points_per_hand", "at",
)  # fmt: skip


class Course(Protocol):
    """What the exports read of a ladder's configuration (:class:`arena.ladder.config.LadderConfig` is one)."""

    @property
    def directory(self) -> Path: ...
    @property
    def name(self) -> str: ...
    @property
    def ladder_path(self) -> Path: ...
    @property
    def results_path(self) -> Path: ...
    @property
    def calendar(self) -> Calendar: ...
    @property
    def grades(self) -> GradeBands: ...


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of the export: a listed version's place."""

    rank: int | None
    team: str
    version: int
    entry: str
    elo: float | None
    low: float | None
    high: float | None
    plus_minus: float | None
    pairs: int
    games: int
    points_per_hand: float | None


@dataclasses.dataclass(frozen=True)
class Export:
    """The leaderboard at ``at`` (UTC, ISO 8601), with how it was computed."""

    ladder: str
    at: str
    games: int
    error_bars: str
    note: str
    rows: tuple[Row, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "ladder": self.ladder,
            "at": self.at,
            "games": self.games,
            "method": {"error_bars": self.error_bars, "note": self.note, "interval": 0.95},
            "standings": [dataclasses.asdict(r) for r in self.rows],
        }


def export(config: Course, *, at: datetime.datetime | None = None) -> Export:
    """The leaderboard of the ladder ``config`` describes, from its stores (read only)."""
    stamp = (at or datetime.datetime.now(datetime.UTC)).astimezone(datetime.UTC).isoformat(timespec="seconds")
    store = LadderStore(config.ladder_path)
    try:
        results = ResultsStore.open_read_only(config.results_path)
        try:
            book = ladder_book(store, results, results.games())
        finally:
            results.close()
        versions = {v.entry: v for v in store.active_versions()}
    finally:
        store.close()
    fitted = book.ratings()
    rows = []
    for s in book.standings(versions):
        v = versions[s.entry]
        half = None if s.low is None or s.high is None else (s.high - s.low) / 2.0
        rows.append(
            Row(rank=s.rank, team=v.team, version=v.number, entry=s.entry, elo=s.elo, low=s.low,
                high=s.high, plus_minus=half, pairs=s.pairs, games=s.games,
                points_per_hand=s.points_per_hand)
        )
    return Export(
        ladder=config.name,
        at=stamp,
        games=book.games,
        error_bars=fitted.error_method if fitted else "none",
        note=fitted.error_note if fitted else "fewer than two versions have played each other",
        rows=tuple(rows),
    )


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    text = str(value)
    # Team names start with a letter or digit; a store edited by hand must not smuggle a
    # spreadsheet formula into the grading sheet.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(table: Export) -> str:
    """The export as CSV: a header row, then one row per version (best first; unrated: empty rank)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in table.rows:
        values = {**dataclasses.asdict(r), "at": table.at}
        writer.writerow([_cell(values[c]) for c in COLUMNS])
    return out.getvalue()


def to_json(table: Export) -> str:
    """The export as JSON (schema in docs/ladder.md)."""
    return json.dumps(table.to_dict(), indent=2) + "\n"


# ------------------------------------------------------------ the final table, for grading (arena ladder export --final)

#: The final export's CSV columns: one row per member; ``email`` identifies the member in a gradebook.
FINAL_COLUMNS = (
    "email", "name", "team", "rank", "tied", "grade", "elo", "low", "high", "plus_minus", "los_next",
    "pairs", "points_per_hand", "entry", "frozen_at",
)  # fmt: skip
#: The Canvas gradebook import's own columns (then one column per assignment: the grade).
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


class NotFrozen(ArenaError):
    """``--final`` asked of a ladder whose final table is not stored yet: one line with its phase."""


class SharedEmail(ArenaError):
    """``--final`` would write two rows for one e-mail (the gradebook's key): refused, each such e-mail named."""


def check_one_row_per_email(teams: list[dict[str, Any]]) -> None:
    """Refuse a final table in which one e-mail (case-folded) is two members': :class:`SharedEmail`.

    The store lets no new member take a member's e-mail; an older ladder's store
    may still hold such pairs (a forged sign-up): the organiser removes the
    wrong one (``arena ladder team member-remove``) and exports again.
    """
    owners: dict[str, list[str]] = {}
    for t in teams:
        for name, email in t["members"]:
            if email.strip():
                owners.setdefault(email_key(email), []).append(f"{name} of {t['team']}")
    shared = {e: who for e, who in owners.items() if len(who) > 1}
    if shared:
        listed = "; ".join(f"{e} is {', '.join(who)}" for e, who in sorted(shared.items()))
        raise SharedEmail(
            f"refused: the e-mail is the gradebook's key and {len(shared)} e-mail(s) belong to more than one member "
            f"({listed}); remove the wrong member (arena ladder team member-remove DIR TEAM MEMBER) and export again"
        )


def members_of(store: object, team: str) -> list[tuple[str, str]]:
    """``team``'s members as (name, e-mail), one export row each.

    Through the store's roster (``LadderStore.members(team)``: every member, revoked ones
    too, since a revoked token is not a student gone); a store without a roster, or a
    team with no members, gives the team as its own single row (its name, no e-mail).
    """
    members = getattr(store, "members", None)
    found: list[tuple[str, str]] = []
    if callable(members):
        for m in members(team):
            name = getattr(m, "name", None)
            email = getattr(m, "email", None)
            if name is None and isinstance(m, (tuple, list)):
                name, email = m[0], m[1]
            found.append((str(name or ""), str(email or "")))
    return found or [(team, "")]


@dataclasses.dataclass(frozen=True)
class FinalExport:
    """The frozen final table with members and grades (docs/ladder.md, "Running a course")."""

    ladder: str
    frozen_at: str
    reason: str
    settled: bool
    los: float
    resolution: float
    bands: tuple[tuple[float, str], ...]
    teams: tuple[dict[str, Any], ...]
    """Best first: the final row's fields, ``grade``, and ``members`` [(name, email)]; teams with no place last."""

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT, "kind": "final", "ladder": self.ladder, "frozen_at": self.frozen_at,
            "reason": self.reason, "settled": self.settled,
            "rule": {"los": self.los, "resolution": self.resolution, "interval": 0.95,
                     "grades": "the first band with fewer than that percent of ranked teams placed above"},
            "bands": [list(b) for b in self.bands],
            "teams": [{**t, "members": [{"name": n, "email": e} for n, e in t["members"]]} for t in self.teams],
        }  # fmt: skip


def final_export(config: Course) -> FinalExport:
    """The frozen final table of the ladder ``config`` describes, with each team's members and grade.

    Raises :class:`NotFrozen` (one line, with the phase and its dates) before the table is stored.
    """
    store = LadderStore(config.ladder_path)
    finals = FinalStore(config.ladder_path)
    try:
        frozen = finals.frozen()
        if frozen is None:
            cal = config.calendar
            now = phase(utc_now(), cal)
            when = f"; the final evaluation ends by {iso(cal.final_until)}" if cal.final_until else ""
            dated = f" (deadline {iso(cal.deadline)}{when})" if cal.deadline else " (ladder.toml sets no deadline)"
            raise NotFrozen(f"the final table of {config.directory} is not frozen yet: the ladder is {now}{dated}")
        table = FinalTable.from_dict(frozen.body)
        ranked = sum(1 for r in table.rows if r.rank is not None)
        placed = {r.team for r in table.rows}
        teams: list[dict[str, Any]] = []
        for r in table.rows:
            row = dataclasses.asdict(r)
            row["plus_minus"] = None if r.low is None or r.high is None else (r.high - r.low) / 2.0
            row["grade"] = config.grades.grade(r.rank, ranked)
            row["members"] = members_of(store, r.team)
            teams.append(row)
        for team in store.teams():  # every team is graded: one with no final version gets `missing`
            if team.name not in placed:
                teams.append({"rank": None, "team": team.name, "entry": None, "grade": config.grades.grade(None, ranked),
                              "members": members_of(store, team.name)})  # fmt: skip
        check_one_row_per_email(teams)
    finally:
        finals.close()
        store.close()
    return FinalExport(
        ladder=config.name, frozen_at=frozen.frozen_at, reason=frozen.reason, settled=table.settled,
        los=table.los, resolution=table.resolution, bands=config.grades.bands, teams=tuple(teams),
    )  # fmt: skip


def final_to_csv(table: FinalExport) -> str:
    """One row per member (e-mail first: the gradebook's identifier), teams best first."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(FINAL_COLUMNS)
    for t in table.teams:
        for name, email in t["members"]:
            values = {**t, "email": email, "name": name, "frozen_at": table.frozen_at,
                      "tied": "" if t.get("tie_group") is None else t["tie_group"]}  # fmt: skip
            writer.writerow([_cell(values.get(c)) for c in FINAL_COLUMNS])
    return out.getvalue()


def final_to_canvas(table: FinalExport, assignment: str) -> str:
    """The grades in Canvas's gradebook import shape: its five columns, then ``assignment`` (the grade).

    The member's e-mail goes in ``SIS Login ID`` (Canvas matches a row on ID, SIS User ID
    or SIS Login ID; ID and SIS User ID are left empty).
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*CANVAS_COLUMNS, assignment])
    for t in table.teams:
        for name, email in t["members"]:
            writer.writerow([_cell(name), "", "", _cell(email), "", _cell(t.get("grade"))])
    return out.getvalue()


def final_to_json(table: FinalExport) -> str:
    return json.dumps(table.to_dict(), indent=2) + "\n"


__all__ = [
    "CANVAS_COLUMNS",
    "COLUMNS",
    "Course",
    "FINAL_COLUMNS",
    "FORMAT",
    "Export",
    "FinalExport",
    "NotFrozen",
    "SharedEmail",
    "check_one_row_per_email",
    "final_export",
    "final_to_canvas",
    "final_to_csv",
    "final_to_json",
    "members_of",
    "Row",
    "export",
    "to_csv",
    "to_json",
]
