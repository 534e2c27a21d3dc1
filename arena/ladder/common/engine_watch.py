"""The Docker engine's outages, as the ladder sees them: the platform's, never a pair's or a team's.

When the engine does not answer (restarted, stopped, its socket gone), every
table and build that starts fails at once.  Counted as attempts, a ten-second
restart would void every pair the loop could start meanwhile and fail the
builds in hand: history lost to a fault nobody's bot made.  Instead the
first failure marks the engine down; pairs and builds that met it are given
their attempt back, and nothing new starts until the engine is well again
(asked with a growing pause, 1 s to 30 s).  The organiser is told once when
it goes, once when it is back; the site shows it meanwhile.

"Well" means the engine *starts a container*, not only that it answers: an
engine caught in Docker 20.10's libnetwork deadlock answers pings and never
starts a container again (:mod:`arena.sandbox.engine_probe`).  The ladder's
watch asks for a start after every failure of a pair or a build, while the
engine is down, and every :data:`CHECK_S` seconds while all is well; in the
ladder those starts run in a thread of their own (``background=True``) so a
wedged engine never holds the coordinator.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from arena.sandbox.docker import DockerUnavailable, docker_client

#: The prefix a table's error has when no engine answered (arena.tables.task).
UNAVAILABLE = "DockerUnavailable"
#: The pause between pings grows from FIRST_S to LAST_S.
FIRST_S = 1.0
LAST_S = 30.0
#: How often an engine thought well is asked to start a container all the same (seconds).
CHECK_S = 60.0
#: What the organiser is told when a check of a well engine finds it cannot start a container.
CANNOT_START = "the Docker engine answers but could not start a container"


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
    """Whether the ladder may start tables and builds: not while the engine is known to be down.

    ``probe`` says whether the engine is well (the ladder's starts a container;
    the default only pings).  ``background``: probes while down, and the
    periodic checks (every ``check_every`` seconds; None: never) run in a
    thread, and :meth:`ready` never waits for one.  :meth:`outage` always
    asks in the caller's thread: it is asked once, after a failure.
    """

    def __init__(
        self,
        tell: Callable[[str], None],
        *,
        probe: Callable[[], bool] = engine_answers,
        clock: Callable[[], float] = time.monotonic,
        background: bool = False,
        check_every: float | None = None,
        changed: Callable[[], None] | None = None,
    ) -> None:
        self.tell = tell
        self.probe = probe
        self.clock = clock
        self.check_every = check_every
        #: Called when the engine goes down or comes back (the site shows it).
        self.changed = changed or (lambda: None)
        self.down_since: float | None = None
        #: Why it went down, in a line (None while well).
        self.reason: str | None = None
        self._pause = FIRST_S
        self._next_ping = 0.0
        self._next_check = clock() + check_every if check_every is not None else None
        self._asker = _BackgroundAsk(probe) if background else _InlineAsk(probe)

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def outage(self, errors: list[str]) -> bool:
        """Whether a job's platform errors are the engine's outage: all "no engine answers", or it is not well now.

        The second catches a container start cut by the engine going away
        (``SeatStartError: ... ConnectionError``) and a start the engine never
        answers (a wedged engine): one probe, only after a failure.
        """
        return engine_unavailable(errors) or (bool(errors) and not self.probe())

    def failed(self, why: str) -> None:
        """A table or build met no engine: nothing new starts until it is well again."""
        now = self.clock()
        if self.down_since is None:
            self.down_since = now
            self.reason = why[:200]
            self._pause = FIRST_S
            self._asker.forget()  # a check begun while it seemed well says nothing now
            self.tell(f"the Docker engine is not available ({why[:200]}): pairs and builds wait for it, no attempt counted")
            self.changed()
        self._next_ping = now + self._pause

    def ready(self) -> bool:
        """True if tables and builds may start (a probe, at most once per pause, while the engine is down)."""
        now = self.clock()
        if self.down_since is None:
            return self._check_while_well(now)
        if now < self._next_ping:
            return False
        answer = self._asker.ask()
        if answer is None:  # a probe under way
            return False
        if answer:
            self.tell(f"the Docker engine is available again (after {now - self.down_since:.0f} s): pairs and builds go on")
            self.down_since = None
            self.reason = None
            if self.check_every is not None:
                self._next_check = now + self.check_every
            self.changed()
            return True
        self._pause = min(LAST_S, self._pause * 2)
        self._next_ping = now + self._pause
        return False

    def _check_while_well(self, now: float) -> bool:
        """Now and then, a well engine is asked to start a container too (a wedge shows no other way)."""
        if self._next_check is None or now < self._next_check:
            return True
        answer = self._asker.ask()
        if answer is None:
            return True  # asked; the answer comes at a later call
        assert self.check_every is not None
        self._next_check = now + self.check_every
        if not answer:
            self.failed(CANNOT_START)
            return False
        return True


class _InlineAsk:
    """Asks the probe in the caller's thread."""

    def __init__(self, probe: Callable[[], bool]) -> None:
        self.probe = probe

    def ask(self) -> bool | None:
        return self.probe()

    def forget(self) -> None:
        pass


class _BackgroundAsk:
    """Asks the probe in a thread of its own: None until its answer is there, then the answer (once)."""

    def __init__(self, probe: Callable[[], bool]) -> None:
        self.probe = probe
        self._lock = threading.Lock()
        self._generation = 0
        self._running = False
        self._answer: bool | None = None

    def ask(self) -> bool | None:
        with self._lock:
            if self._answer is not None:
                answer, self._answer = self._answer, None
                return answer
            if not self._running:
                self._running = True
                generation = self._generation
                threading.Thread(target=self._run, args=(generation,), name="arena-engine-watch", daemon=True).start()
            return None

    def forget(self) -> None:
        """An answer not yet read, or one still coming, is dropped."""
        with self._lock:
            self._generation += 1
            self._answer = None

    def _run(self, generation: int) -> None:
        try:
            answer = bool(self.probe())
        except Exception:  # noqa: BLE001 - a probe that breaks says the engine is not well
            answer = False
        with self._lock:
            self._running = False
            if generation == self._generation:
                self._answer = answer


__all__ = ["CANNOT_START", "CHECK_S", "UNAVAILABLE", "EngineWatch", "engine_answers", "engine_unavailable"]
