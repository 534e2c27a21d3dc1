"""``[schedule]``, ``[final]`` and ``[grades]`` of ``ladder.toml``: the course's calendar and its grade bands.

This package owns the three sections: their parsers (into a
:class:`~arena.ladder.course.calendar.Calendar` and
:class:`~arena.ladder.course.grades.GradeBands`) and the text ``arena ladder
init`` writes for them.  The configuration loader (:mod:`arena.ladder.config`)
composes them with the other packages' sections.  A bad value is one
:class:`~arena.toml_keys.ConfigError` line naming the section.
"""

from __future__ import annotations

from typing import Any

from arena.ladder.course.calendar import Calendar, parse_instant
from arena.ladder.course.grades import GradeBands, parse_bands
from arena.toml_keys import ConfigError, read_key

#: The keys of each section this package owns.
KEYS: dict[str, set[str]] = {
    "schedule": {"opens", "deadline", "final_until", "after_deadline"},
    "final": {"choose_from", "los", "resolution"},
    "grades": {"bands", "missing"},
}


def parse_calendar(sched: dict[str, Any], final: dict[str, Any]) -> Calendar:
    """``[schedule]`` and ``[final]`` as a :class:`Calendar`; :class:`ConfigError` (one line) for a bad key."""
    try:
        dates = {key: parse_instant(sched.get(key), key) for key in ("opens", "deadline", "final_until")}
        return Calendar(
            **dates,
            after_deadline=read_key(sched, "after_deadline", str, Calendar.after_deadline, "schedule"),
            choose_from=read_key(final, "choose_from", int, Calendar.choose_from, "final"),
            los=float(read_key(final, "los", (int, float), Calendar.los, "final")),
            resolution=float(read_key(final, "resolution", (int, float), Calendar.resolution, "final")),
        )
    except ConfigError:
        raise
    except ValueError as exc:
        where = "final" if str(exc).split(" ", 1)[0] in ("choose_from", "los", "resolution") else "schedule"
        raise ConfigError(f"[{where}] {exc}") from None


def parse_grades(table: dict[str, Any]) -> GradeBands:
    """``[grades]`` as :class:`GradeBands`; :class:`ConfigError` (one line) for a bad band."""
    try:
        return GradeBands(parse_bands(table.get("bands", [])), read_key(table, "missing", str, "", "grades"))
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(f"[grades] {exc}") from None


COURSE_TEMPLATE = """[schedule]                     # a course's calendar, UTC, ISO 8601 (docs/ladder.md, "Running a course"); "" = none
opens = ""                     # uploads are refused before this, e.g. "2026-02-02T08:00:00Z"
deadline = ""                  # uploads end, each team's final version is fixed, the final evaluation starts
final_until = ""               # the final evaluation ends by this at the latest and the standings freeze
after_deadline = "refuse"      # uploads after the deadline: "refuse", or "practice" (built, for practice tables only, never rated)

[final]                        # the final evaluation, after the deadline: only final versions play
choose_from = 0                # a team may select its final version among its last N ranked ones (0: its active one)
los = 0.95                     # neighbours are separated once the upper one's likelihood of superiority reaches this
resolution = 40.0              # Elo: neighbours whose difference is shown to be within ±this are declared tied

[grades]                       # the grade column of `arena ladder export DIR --final`
bands = []                     # e.g. [[10, "A"], [35, "B"], [70, "C"], [100, "D"]]: grade of the first band with
                               # fewer than that percent of ranked teams above the team (ties share a place)
missing = ""                   # the grade of a team with no rated final version
"""


__all__ = ["COURSE_TEMPLATE", "KEYS", "parse_calendar", "parse_grades"]
