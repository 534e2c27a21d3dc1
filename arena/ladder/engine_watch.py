"""The Docker engine's outages, as the ladder sees them: the platform's, never a pair's or a team's.

When the engine does not answer (restarted, stopped, its socket gone), every
table and build that starts fails at once.  Counted as attempts, a ten-second
restart would void every pair the loop could start meanwhile and fail the
builds in hand: history lost to a fault nobody's bot made.  Instead the
first failure marks the engine down; pairs and builds that met it are given
their attempt back, and nothing new starts until the engine answers a ping
again (asked with a growing pause, 1 s to 30 s).  The organiser is told
once when it goes, once when it is back.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from arena.sandbox.docker import DockerUnavailable, docker_client

#: The prefix a table's error has when no engine answered (arena.tables.task).
UNAVAILABLE = "DockerUnavailable"
#: The pause between pings grows from FIRST_S to LAST_S.
FIRST_S = 1.0
LAST_S = 30.0


def engine_answers(timeout: float = 5.0) -> bool:
    """Whether the engine ``DOCKER_HOST`` names answers a ping within ``timeout`` seconds."""
    try:
        docker_client(timeout).close()
    except DockerUnavailable:
        return False
    return True


def engine_unavailable(errors: list[str]) -> bool:
    """Whether a job's errors are all the engine's absence (nothing of the bots' or the ladder's)."""
    return bool(errors) and all(e.startswith(UNAVAILABLE) for e in errors)


class EngineWatch:
    """Whether the ladder may start tables and builds: not while the engine is known to be down."""

    def __init__(
        self,
        tell: Callable[[str], None],
        *,
        probe: Callable[[], bool] = engine_answers,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tell = tell
        self.probe = probe
        self.clock = clock
        self.down_since: float | None = None
        self._pause = FIRST_S
        self._next_ping = 0.0

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def outage(self, errors: list[str]) -> bool:
        """Whether a job's platform errors are the engine's outage: all "no engine answers", or it does not answer now.

        The second catches a container start cut by the engine going away
        (``SeatStartError: ... ConnectionError``): one ping, only after a failure.
        """
        return engine_unavailable(errors) or (bool(errors) and not self.probe())

    def failed(self, why: str) -> None:
        """A table or build met no engine: nothing new starts until it answers again."""
        now = self.clock()
        if self.down_since is None:
            self.down_since = now
            self._pause = FIRST_S
            self.tell(
                f"the Docker engine does not answer ({why[:200]}): pairs and builds wait for it, no attempt counted"
            )
        self._next_ping = now + self._pause

    def ready(self) -> bool:
        """True if tables and builds may start (a ping, at most once per pause, while the engine is down)."""
        if self.down_since is None:
            return True
        now = self.clock()
        if now < self._next_ping:
            return False
        if self.probe():
            self.tell(
                f"the Docker engine answers again (after {now - self.down_since:.0f} s): pairs and builds go on"
            )
            self.down_since = None
            return True
        self._pause = min(LAST_S, self._pause * 2)
        self._next_ping = now + self._pause
        return False


__all__ = ["UNAVAILABLE", "EngineWatch", "engine_answers", "engine_unavailable"]
