"""A course's calendar: when uploads open, the deadline, and how long the final evaluation may run.

``ladder.toml``'s ``[schedule]`` (UTC, ISO 8601) and ``[final]`` sections become one
:class:`Calendar`.  Every key is optional: a ladder with no dates is open for ever,
as ladders were before calendars.

**Phases follow the clock, not memory.**  :func:`phase` is a pure function of the
time and the calendar (and of one stored fact: whether the final table was frozen
because every neighbour was settled).  The loop and the site both ask it, so a
server restarted in any phase is in that phase at once:

- ``before``: ``opens`` is set and not reached: uploads are refused with the time;
- ``open``: uploads are taken, the ladder plays as always;
- ``final``: ``deadline`` passed: uploads are refused, only the final versions play
  (the final evaluation, :mod:`arena.ladder.course.final`);
- ``frozen``: ``final_until`` passed, or the final evaluation settled every adjacent
  pair: nothing plays, the final table is stored and does not change.

This module needs only the standard library (the site imports it).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Callable

BEFORE = "before"
OPEN = "open"
FINAL = "final"
FROZEN = "frozen"
PHASES = (BEFORE, OPEN, FINAL, FROZEN)

#: After the deadline uploads are refused (the only policy implemented; see docs/ladder.md).
REFUSE = "refuse"
#: ``after_deadline``: uploads after the deadline are built and become active for practice tables only
#: (only the final versions play rated games after the deadline, so they change no standing).
PRACTICE = "practice"

#: What the loop and the site read the time from (tests pass their own to move it).
Clock = Callable[[], datetime.datetime]


def utc_now() -> datetime.datetime:
    """The real clock (UTC, aware)."""
    return datetime.datetime.now(datetime.UTC)


def parse_instant(value: object, key: str) -> datetime.datetime | None:
    """A calendar date: an ISO 8601 text or a TOML date-time; ``""`` or ``None`` is none.

    A time with no offset is taken as UTC (the calendar is in UTC); a bare date is its
    midnight, UTC.  :class:`ValueError` (one line naming ``key``) for anything else.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime.datetime):
        found = value
    elif isinstance(value, datetime.date):
        found = datetime.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        try:
            found = datetime.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            raise ValueError(f"{key}: {value!r} is not an ISO 8601 time such as 2026-03-01T12:00:00Z") from None
    else:
        raise ValueError(f"{key} must be an ISO 8601 time (text) or empty, got {value!r}")
    if found.tzinfo is None:
        found = found.replace(tzinfo=datetime.UTC)
    return found.astimezone(datetime.UTC)


def iso(when: datetime.datetime) -> str:
    """``when`` as the ladder writes times: UTC, to the second (``2026-03-01T12:00:00+00:00``)."""
    return when.astimezone(datetime.UTC).isoformat(timespec="seconds")


@dataclasses.dataclass(frozen=True)
class Calendar:
    """``[schedule]`` and ``[final]``: the dates (each optional) and the final evaluation's knobs."""

    opens: datetime.datetime | None = None
    """Uploads are refused before this (none: open from the start)."""
    deadline: datetime.datetime | None = None
    """Uploads end and the final versions are fixed (none: no final phase, the ladder plays on)."""
    final_until: datetime.datetime | None = None
    """The final evaluation stops here at the latest and the standings freeze (none: when settled)."""
    after_deadline: str = REFUSE
    """What an upload after the deadline gets: refused (``"refuse"``), or built and kept for practice
    tables only (``"practice"``: the final versions are fixed, and only they play rated games)."""
    choose_from: int = 0
    """A team may select its final version among its last this many ranked versions (0: none; its active one)."""
    los: float = 0.95
    """The final evaluation separates two neighbours once the upper one's likelihood of superiority is this."""
    resolution: float = 40.0
    """Elo: neighbours whose difference's 95% interval lies within ±this are declared tied."""

    def __post_init__(self) -> None:
        for key in ("opens", "deadline", "final_until"):
            value = getattr(self, key)
            if value is not None and (value.tzinfo is None or value.utcoffset() != datetime.timedelta(0)):
                raise ValueError(f"{key} must be a UTC time, got {value!r}")
        if self.opens and self.deadline and not self.opens < self.deadline:
            raise ValueError(f"deadline ({iso(self.deadline)}) must come after opens ({iso(self.opens)})")
        if self.final_until is not None:
            if self.deadline is None:
                raise ValueError("final_until needs a deadline (the final evaluation starts at the deadline)")
            if not self.deadline < self.final_until:
                raise ValueError(f"final_until ({iso(self.final_until)}) must come after the deadline ({iso(self.deadline)})")
        if self.after_deadline not in (REFUSE, PRACTICE):
            raise ValueError(f"after_deadline must be {REFUSE!r} or {PRACTICE!r}, got {self.after_deadline!r}")
        if isinstance(self.choose_from, bool) or not isinstance(self.choose_from, int) or not 0 <= self.choose_from <= 100:
            raise ValueError(f"choose_from must be a whole number from 0 to 100, got {self.choose_from!r}")
        if not (isinstance(self.los, (int, float)) and 0.5 < self.los < 1.0):
            raise ValueError(f"los must be a number above 0.5 and below 1, got {self.los!r}")
        if not (isinstance(self.resolution, (int, float)) and math.isfinite(self.resolution) and self.resolution >= 0):
            raise ValueError(f"resolution must be a number >= 0 (Elo), got {self.resolution!r}")

    @property
    def has_final(self) -> bool:
        """True when the ladder has a deadline (and so a final evaluation)."""
        return self.deadline is not None


def phase(now: datetime.datetime, calendar: Calendar, *, settled: bool = False) -> str:
    """The phase at ``now``: ``before``, ``open``, ``final`` or ``frozen`` (see the module docstring).

    ``settled``: the final evaluation froze the table before ``final_until`` (a stored fact).
    """
    if calendar.opens is not None and now < calendar.opens:
        return BEFORE
    if calendar.deadline is None or now < calendar.deadline:
        return OPEN
    if settled or (calendar.final_until is not None and now >= calendar.final_until):
        return FROZEN
    return FINAL


def next_change(now: datetime.datetime, calendar: Calendar) -> tuple[str, datetime.datetime] | None:
    """The next dated change after ``now``: (what happens, when), or None if no date is ahead."""
    for what, when in (("uploads open", calendar.opens), ("deadline", calendar.deadline),
                       ("final standings freeze", calendar.final_until)):  # fmt: skip
        if when is not None and now < when:
            return what, when
    return None


def span(seconds: float) -> str:
    """A duration as the leaderboard writes it: ``3 d 4 h``, ``5 h 12 min``, ``7 min``, ``40 s``."""
    s = max(0, int(seconds))
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min"
    return f"{secs} s"


def countdown(now: datetime.datetime, calendar: Calendar, *, frozen: bool = False) -> str | None:
    """The leaderboard's line about the next change, e.g. ``deadline in 3 d 4 h (2026-03-01 12:00 UTC)``.

    ``frozen``: the final table is stored (nothing is ahead, whatever the dates say).
    """
    if frozen:
        return None
    found = next_change(now, calendar)
    if found is None:
        return None
    what, when = found
    return f"{what} in {span((when - now).total_seconds())} ({when:%Y-%m-%d %H:%M} UTC)"


def upload_refusal(now: datetime.datetime, calendar: Calendar) -> str | None:
    """Why an upload at ``now`` is refused (one line with the time), or None if it is taken."""
    current = phase(now, calendar)
    if current == BEFORE:
        assert calendar.opens is not None
        return f"uploads open at {iso(calendar.opens)} (in {span((calendar.opens - now).total_seconds())})"
    if current in (FINAL, FROZEN) and calendar.after_deadline != PRACTICE:
        assert calendar.deadline is not None
        return f"uploads closed at the deadline, {iso(calendar.deadline)}: the final versions are fixed"
    return None


__all__ = [
    "BEFORE", "FINAL", "FROZEN", "OPEN", "PHASES", "PRACTICE", "REFUSE", "Calendar", "Clock", "countdown", "iso",
    "next_change", "parse_instant", "phase", "span", "upload_refusal", "utc_now",
]  # fmt: skip
