"""Clocks for the match loop: the real monotonic one and a manual one for tests.

The loop measures every decision with ``clock.now()``; seats bound the real
wait themselves (the referee's timer, never the bot's word).  A
:class:`ManualClock` lets tests script thinking times (a scripted seat
advances the clock) without sleeping.
"""

from __future__ import annotations

import math
import time
from typing import Protocol


class Clock(Protocol):
    """What the match loop needs from a clock."""

    def now(self) -> float:
        """Seconds on a monotonic scale."""
        ...


class MonotonicClock:
    """The real clock."""

    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told.

    A scripted seat calls :meth:`advance` to "think"; the loop then sees the
    elapsed time and applies the time control exactly as with real time.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (a finite number, 0 or more: time never runs backwards)."""
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"a clock only moves forward: cannot advance it by {seconds!r} s")
        self._now += seconds


def oversubscribed_warning(tables: int, cores: int, clock: str = "wall", hard_cap_s: float = 0.0) -> str | None:
    """One line when more seats can think at once than there are cores (else None).

    One seat per table thinks at a time (the others wait for their turn;
    nothing ponders on the referee's clock), so ``tables`` seats can think at
    once.  Past ``cores``, a thinking seat gets only a share of a core: on the
    wall clock it is charged the waiting; on the CPU clock it is charged only
    the CPU it got, but its decisions take longer in wall time, and the wall
    hard cap still applies.
    """
    if tables <= cores:
        return None
    share = f"{tables} tables can think at once on {cores} core{'s' if cores != 1 else ''}"
    if clock == "cpu":
        return (
            f"{share}: a thinking seat gets about {cores / tables:.2f} of a core; the CPU clock charges only "
            f"the CPU it gets, but decisions take longer and the wall hard cap ({hard_cap_s:g} s) still strikes"
        )
    return f"{share}: bots are charged the time they wait for a core (lower the concurrency, or use the CPU clock)"
