"""The ladder's builds, as side work of its run loop: queued versions built ``builders`` at a time.

A build runs in a worker thread (:func:`arena.ladder.versions.builds.build_and_validate`:
Docker's SDK is synchronous) and never touches the stores: what it finds (its
phases, its outcome) is handed back to the coordinator's trio thread, which
writes it, compare-and-set (:meth:`~arena.ladder.versions.store.VersionTables.transition`),
so an organiser's disable meanwhile wins and the build's result is dropped.
Attempts are counted before a build starts (a server killed mid-build counts
one); after ``MAX_BUILD_ATTEMPTS`` the version fails with that reason.  When the
ladder stops, validations stop their game (the run's ``stop`` is their
cancel), and a build still running in Docker is abandoned and queued again,
its attempt given back (a stop on purpose, Ctrl-C or SIGTERM, is not the
build's fault: as for pairs, only starts cut by a kill count).  A build or
validation that meets no Docker engine is queued again with its attempt given
back, and no build starts until the engine answers (arena.ladder.common.engine_watch).

The builders are shared in turn across teams (:func:`next_to_build`), not
first come first served: a team with a build running gets another builder
only when no other team waits, so one team's uploads that each run to
``build_timeout`` delay another team's upload by one build at most.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import trio

from arena.ladder.versions import builds
from arena.ladder.common.engine_watch import EngineWatch
from arena.ladder.versions.lifecycle import BUILDING, FAILED, QUEUED, VALIDATING, IllegalTransition
from arena.ladder.versions.store import Version, VersionTables

log = logging.getLogger("arena.ladder")

#: How often the queue looks for queued versions.
POLL_S = 0.5


class BuildQueue:
    """Builds queued versions until ``stop``; :meth:`run` is a side task of the ladder's run loop."""

    def __init__(
        self,
        config: builds.BuildSettings,
        store: VersionTables,
        *,
        ladder_id: str,
        run_id: str,
        stop: threading.Event,
        builders: int,
        activate: Callable[[Version], None],
        tell: Callable[[str], None],
        changed: Callable[[], None],
        engine: EngineWatch | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.ladder_id = ladder_id
        self.run_id = run_id
        self.stop = stop
        self.builders = max(1, builders)
        #: Makes a validated version its team's active one (the loop's: it knows the ratings to keep).
        self.activate = activate
        self.tell = tell
        self.changed = changed
        #: Shared with the loop's pairs: no build starts while the engine is known to be down.
        self.engine = engine or EngineWatch(tell)
        #: Versions being built: version id -> entry.
        self.building: dict[int, str] = {}
        #: Versions being built: version id -> team (whose turn it was).
        self._teams: dict[int, str] = {}
        #: When each team last got a builder (a ticket number): the one served longest ago goes first.
        self._turns: dict[str, int] = {}
        self._tickets = itertools.count()

    async def run(self) -> None:
        """Build until the ladder stops; then wait for the builds in hand (the loop bounds the wait)."""
        async with trio.open_nursery() as nursery:
            while not self.stop.is_set():
                if self._start(nursery):
                    self.changed()
                await trio.sleep(POLL_S)
            while self.building:
                await trio.sleep(0.1)

    def _start(self, nursery: trio.Nursery) -> bool:
        """Start queued versions, up to ``builders`` at once, in turn across teams; True if any started."""
        started = False
        if not self.engine.ready():
            return False
        queued = [v for v in self.store.versions(status=QUEUED) if v.id not in self.building]
        while queued and len(self.building) < self.builders and not self.stop.is_set():
            version = next_to_build(queued, Counter(self._teams.values()), self._turns)
            assert version is not None
            queued.remove(version)
            attempts = version.attempts + 1
            try:
                if attempts > builds.MAX_BUILD_ATTEMPTS:
                    why = f"build given up after {builds.MAX_BUILD_ATTEMPTS} attempts (the server stopped during each)"
                    self.store.transition(version.id, FAILED, expect=QUEUED, reason=why)
                    self.tell(f"{version.entry}: {why}")
                    continue
                self.store.transition(version.id, BUILDING, expect=QUEUED, attempts=attempts)
            except IllegalTransition:
                continue  # disabled meanwhile
            self.building[version.id] = version.entry
            self._teams[version.id] = version.team
            self._turns[version.team] = next(self._tickets)
            self.tell(f"{version.entry}: building (attempt {attempts})")
            nursery.start_soon(self._build, version)
            started = True
        return started

    async def _build(self, version: Version) -> None:
        token = trio.lowlevel.current_trio_token()

        def on_phase(phase: str, fields: Mapping[str, Any]) -> None:  # in the worker thread
            trio.from_thread.run_sync(self._phase, version, phase, dict(fields), trio_token=token)

        def build() -> builds.BuildOutcome:
            return builds.build_and_validate(
                self.config, version, ladder_id=self.ladder_id, run_id=self.run_id, on_phase=on_phase, cancel=self.stop
            )

        try:
            outcome = await trio.to_thread.run_sync(build, abandon_on_cancel=True)
            self._built(version, outcome)
        except builds.EngineDown as exc:  # the platform's outage, not the team's: built again once it answers
            self.store.queue_again(version, attempts=version.attempts)
            self.engine.failed(str(exc))
            self.tell(f"{version.entry}: waits for the Docker engine (queued again, no attempt counted)")
        except builds.BuildCancelled:  # the ladder is stopping and the build stopped: built again next time
            self.store.queue_again(version, attempts=version.attempts)  # a stop on purpose gives its attempt back
        except trio.Cancelled:  # the ladder stopped waiting: the build is abandoned in Docker, built again next time
            self.store.queue_again(version, attempts=version.attempts)
            raise
        except Exception as exc:  # noqa: BLE001 - a build that breaks must not stop the ladder
            log.exception("building %s failed", version.entry)
            try:
                self.store.transition(
                    version.id, FAILED, reason=f"the build failed inside the server ({type(exc).__name__}); see its log"
                )
            except IllegalTransition:
                pass
            self.tell(f"{version.entry}: the build failed inside the server: {exc}")
        finally:
            self.building.pop(version.id, None)
            self._teams.pop(version.id, None)
            self.changed()

    def _phase(self, version: Version, phase: str, fields: dict[str, Any]) -> None:
        """A build's progress, on the coordinator's thread (``validating``: built, now playing its check)."""
        if phase != VALIDATING:
            return
        try:
            self.store.transition(version.id, VALIDATING, expect=BUILDING, **fields)
        except IllegalTransition as exc:
            log.info("%s", exc)
            return
        self.tell(f"{version.entry}: built {str(fields.get('image_id', ''))[:19]}, validating")

    def _built(self, version: Version, outcome: builds.BuildOutcome) -> None:
        """A build's outcome, on the coordinator's thread (compare-and-set: a disable meanwhile wins)."""
        logs: dict[str, Any] = {"build_log": outcome.build_log, "validation_log": outcome.validation_log}
        if outcome.image_id:
            logs["image_id"] = outcome.image_id
        try:
            if not outcome.passed:
                self.store.transition(version.id, FAILED, reason=outcome.reason or "failed", **logs)
                self.tell(f"{version.entry}: failed: {outcome.reason}")
                return
            self.store.transition(version.id, VALIDATING, **logs)  # (from building, or staying validating)
            self.activate(version)
        except IllegalTransition as exc:
            self.tell(f"{version.entry}: result dropped: {exc}")
            return
        self.tell(f"{version.entry}: active")


def next_to_build(queued: Iterable[Version], running: Mapping[str, int], turns: Mapping[str, int]) -> Version | None:
    """The queued version to build next: in turn across teams, never first come first served.

    The team with the fewest builds running goes first (so no team gets a
    second builder while another team waits), then the team whose last turn
    is oldest (one that never had one first), then the team with the oldest
    upload; the version is that team's oldest queued one.  ``running``: builds
    running per team; ``turns``: each team's last turn (larger is later).
    """
    oldest: dict[str, Version] = {}
    for version in queued:
        if version.team not in oldest or version.id < oldest[version.team].id:
            oldest[version.team] = version
    if not oldest:
        return None
    team = min(oldest, key=lambda t: (running.get(t, 0), turns.get(t, -1), oldest[t].id))
    return oldest[team]


__all__ = ["BuildQueue", "next_to_build"]
