"""The course's calendar on a team's own page: the phase, the countdown, its final version, uploads open or not.

One definition with the rest of the site: the phase and the countdown are
:mod:`arena.ladder.course.calendar`'s, the upload refusal is the one the
upload route applies (:func:`~arena.ladder.course.calendar.upload_refusal`),
and the final version is the stored one once the deadline fixed it
(:meth:`~arena.ladder.course.final_store.FinalStore.final_versions`); before
that, the one that would be final now: the team's selection when it made one
among its last ``choose_from`` ranked versions, else its active version
(:func:`~arena.ladder.course.final.active_at`, as at the deadline).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.ladder.course.calendar import BEFORE, FINAL, FROZEN, OPEN, Calendar, countdown, phase, upload_refusal, utc_now
from arena.ladder.course.final import active_at, choosable
from arena.ladder.course.final_store import FinalStore
from arena.ladder.versions.store import Version


def team_calendar(calendar: Calendar, finals: FinalStore, team: str, versions: Sequence[Version]) -> dict[str, Any]:
    """What a team's page shows of the calendar (``has_calendar`` False: a ladder without dates)."""
    now = utc_now()
    frozen = finals.frozen() is not None
    current = phase(now, calendar, settled=frozen)
    final, fixed = _final_entry(calendar, finals, team, versions, current)
    return {
        "has_calendar": calendar.opens is not None or calendar.deadline is not None,
        "phase": current,
        "countdown": countdown(now, calendar, frozen=current == FROZEN),
        "uploads_closed": upload_refusal(now, calendar),
        "final": final,
        "final_fixed": fixed,
    }


def _final_entry(
    calendar: Calendar, finals: FinalStore, team: str, versions: Sequence[Version], current: str
) -> tuple[str | None, bool]:
    """The team's final version (entry) and whether it is fixed (the deadline passed), or would be now."""
    if current in (FINAL, FROZEN):
        fixed = {f.team: f.entry for f in finals.final_versions() or []}
        return fixed.get(team), True
    if calendar.deadline is None or current not in (BEFORE, OPEN):
        return None, False
    chosen = finals.choices().get(team)
    if chosen is not None and chosen in {v.entry for v in choosable(list(versions), calendar.choose_from)}:
        return chosen, False
    found = active_at(versions, utc_now())  # before the deadline: what would be fixed if it were now
    return (found.entry if found is not None else None), False


__all__ = ["team_calendar"]
