"""The run loop: ask the schedule for tables, play them with the table kernel, record through the ledger.

Tournaments, ``arena sprt`` and the ladder differ only in their
:class:`Schedule` (which tables next, what a stored game means to them, when
to stop); this loop is the rest, once:

- it owns the run's ``stop`` event and its signals (Ctrl-C, SIGTERM: stop
  starting tables, stop the running ones, keep what is stored);
- it keeps at most ``capacity`` tables playing, starting jobs in the order the
  schedule gives them (the tables of one job start together);
- every game a table reports goes through the :class:`~arena.tables.ledger.Ledger`
  (the one stored-game guard) on this task, and then to the schedule;
- a store error (a full disk) stops every table and ends the run with that error;
- it prunes the run's leftovers (containers under its run label) when it
  starts (a prune that raises an :class:`~arena.errors.ArenaError` ends the run
  with that line before anything plays) and when it stops (a failure there is
  logged: the results are stored, the next start prunes).

Work beside the loop (the ladder's image builds) runs as ``side`` tasks in the
loop's nursery and hands its results to the coordinator on this thread.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import signal
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Protocol

import trio

from arena.errors import ArenaError
from arena.results.store import StoreError, storage_error
from arena.tables.ledger import Ledger, Recorded
from arena.tables.logs import write_logs
from arena.tables.players import RunStopped, TablePlayer
from arena.tables.rows import GameSlot
from arena.tables.spec import TableGame, TableResult, TableSpec
from arena.tables.task import ImageMismatch

log = logging.getLogger("arena.tables")


@dataclasses.dataclass(frozen=True)
class Job:
    """Tables a schedule wants played at once: a tournament table, a batch of duplicate pairs, a ladder pair."""

    key: str
    tables: Mapping[int, TableSpec]
    """The tables by number (a pair's 1 and 2, or the ones still missing)."""
    slots: Mapping[str, GameSlot]
    """Where each of the job's games sits in the run; a reported game not here is not the job's (ignored)."""
    images: Mapping[str, str | None]
    """Each entry's image ID (recorded with its games)."""
    log_dirs: Mapping[int, Path] = dataclasses.field(default_factory=dict)
    """Where a remote table's logs are written on this machine (a local table writes its own)."""
    reported: dict[str, Recorded] = dataclasses.field(default_factory=dict, compare=False)
    """What the ledger did with each game the job's tables reported (the loop fills it as they come)."""


class Schedule(Protocol):
    """A runner's own logic: which tables next, what each stored game means, when to stop."""

    def next_job(self, room: int) -> Job | None:
        """The next tables to play now (at most ``room`` of them), or None (nothing to start at the moment)."""
        ...

    def recorded(self, job: Job, table: int, game: TableGame, recorded: Recorded) -> None:
        """A game of ``job`` went through the ledger (stored, void, or a late copy dropped)."""
        ...

    def job_done(self, job: Job, results: Mapping[int, TableResult], stopped: bool) -> None:
        """All of ``job``'s tables ended (``stopped``: the run is stopping; nothing failed)."""
        ...

    def done(self) -> bool:
        """The stop test: nothing more will be played (a test decided, a run out of work)."""
        ...

    async def idle(self) -> bool:
        """Nothing runs and nothing can start: True to look again (new work may come), False to end."""
        ...


@dataclasses.dataclass
class RunOutcome:
    interrupted: bool
    """Stopped by Ctrl-C or SIGTERM (the loop's own watcher; a caller that sets ``stop`` knows why)."""


class Runner:
    """One run of a schedule; :meth:`run` returns when the schedule is done, stopped, or a store fails."""

    def __init__(
        self,
        schedule: Schedule,
        ledger: Ledger,
        player: TablePlayer,
        *,
        capacity: int,
        stop: threading.Event | None = None,
        prune: Callable[[], None] | None = None,
        poll_s: float | None = None,
        side: tuple[Callable[[], Awaitable[None]], ...] = (),
        on_error: Callable[[Job, BaseException], None] | None = None,
        fatal_image_mismatch: bool = False,
        watch_signals: bool = True,
        side_grace_s: float = 20.0,
    ) -> None:
        self.schedule = schedule
        self.ledger = ledger
        self.player = player
        self.capacity = max(1, capacity)
        self.stop = stop or threading.Event()
        self.prune = prune
        #: How often to look for new work while tables play (None: only when a job ends).
        self.poll_s = poll_s
        self.side = side
        #: A job whose own code raised (not a table's fault): told here; None re-raises it.
        self.on_error = on_error
        #: An image gone from this machine since the start stops the run (tournaments) instead of failing one job.
        self.fatal_image_mismatch = fatal_image_mismatch
        #: Ctrl-C and SIGTERM stop the run (off when the caller watches them itself and sets ``stop``).
        self.watch_signals = watch_signals
        #: How long side work gets to end by itself once the run stops.
        self.side_grace_s = side_grace_s
        self.running: dict[str, int] = {}
        #: The start's prune failed (the engine is unusable): the end's is not tried.
        self.prune_failed = False
        self.interrupted = False
        self.fatal: Exception | None = None

    async def run(self) -> RunOutcome:
        """Play until done; raises the store error (or :class:`RunStopped`) that stopped it, after cleaning up."""
        ended_send, ended = trio.open_memory_channel[str](math.inf)
        sides_left = [0]
        sides_ended = trio.Event()
        async with trio.open_nursery() as nursery:
            if self.watch_signals:  # first: a Ctrl-C during the prune below stops the run cleanly too
                nursery.start_soon(self._watch_signals)
            try:
                await self._prune_at_start()
                sides_left[0] = len(self.side)
                for task in self.side:
                    nursery.start_soon(self._side, task, sides_left, sides_ended)
                while not self._stopping() and not self.schedule.done():
                    self._start_jobs(nursery, ended_send)
                    if self._stopping() or self.schedule.done():
                        break
                    if not self.running:
                        try:
                            more = await self.schedule.idle()
                        except StoreError as exc:  # between rounds a schedule writes too (forfeits, a grown file)
                            self._fail(exc)
                            break
                        if not more:
                            break
                        continue
                    with trio.move_on_after(self.poll_s if self.poll_s is not None else math.inf):
                        await ended.receive()
            finally:
                self.stop.set()
                with trio.CancelScope(shield=True):
                    # The tables stop at once (their processes stop and remove their bots).
                    while self.running:
                        await ended.receive()
                    # Side work sees ``stop`` and ends itself; what does not within the grace is cancelled.
                    if sides_left[0] > 0:
                        with trio.move_on_after(self.side_grace_s):
                            await sides_ended.wait()
                    if self.prune is not None and not self.prune_failed:
                        await trio.to_thread.run_sync(self._prune_at_end)
                nursery.cancel_scope.cancel()
        if self.fatal is not None:
            raise self.fatal
        return RunOutcome(self.interrupted)

    async def _prune_at_start(self) -> None:
        """The leftovers of an earlier run of this one (containers, half-written records), before anything plays.

        An engine error there ends the run.

        The prune raises :class:`~arena.errors.ArenaError` (one line) when it
        cannot do its work: nothing is started, and the end's prune is not tried.
        """
        # The runner is its directory's one writer (the caller holds its lock): a temporary
        # record there is a killed run's, never put in place; it goes before anything is written.
        try:
            await trio.to_thread.run_sync(self.ledger.remove_leftovers)
        except OSError as exc:  # an unwritable records directory: one line, nothing started
            self.prune_failed = True
            self._fail(storage_error(exc, self.ledger.output / "records"))
            return
        if self.prune is None:
            return
        try:
            await trio.to_thread.run_sync(self.prune)
        except ArenaError as exc:
            self.prune_failed = True
            self._fail(exc)

    def _prune_at_end(self) -> None:
        """The run's leftovers once it stopped: a failure is logged (the next run's prune removes them)."""
        assert self.prune is not None
        try:
            self.prune()
        except Exception as exc:  # noqa: BLE001 - the results are stored; the next start prunes strictly
            log.warning("the run's leftover containers could not be removed at its end: %s", exc)

    async def _side(self, task: Callable[[], Awaitable[None]], left: list[int], ended: trio.Event) -> None:
        try:
            await task()
        finally:
            left[0] -= 1
            if left[0] == 0:
                ended.set()

    # ------------------------------------------------------------ jobs

    def _stopping(self) -> bool:
        return self.stop.is_set() or self.fatal is not None

    def _start_jobs(self, nursery: trio.Nursery, ended: trio.MemorySendChannel[str]) -> None:
        while not self._stopping() and (room := self.capacity - sum(self.running.values())) > 0:
            try:
                job = self.schedule.next_job(room)
            except StoreError as exc:  # planning writes too (a pair written as started)
                self._fail(exc)
                return
            if job is None:
                return
            self.running[job.key] = len(job.tables)
            nursery.start_soon(self._play_job, job, ended)

    async def _play_job(self, job: Job, ended: trio.MemorySendChannel[str]) -> None:
        results: dict[int, TableResult] = {}
        seen: set[str] = set()
        try:
            try:
                async with trio.open_nursery() as tables:
                    for number, spec in job.tables.items():
                        tables.start_soon(self._play_table, job, number, spec, seen, results)
            except BaseExceptionGroup as group:  # the schedule's own code raised while a game was recorded
                raise _single(group) from None
            self.schedule.job_done(job, results, self._stopping())
        except StoreError as exc:
            self._fail(exc)
        except Exception as exc:
            if self.on_error is None:
                raise
            try:
                self.on_error(job, exc)
            except StoreError as again:  # telling it needed a write the disk could not take
                self._fail(again)
        finally:
            self.running.pop(job.key, None)
            ended.send_nowait(job.key)

    async def _play_table(
        self, job: Job, number: int, spec: TableSpec, seen: set[str], results: dict[int, TableResult]
    ) -> None:
        own: list[BaseException] = []  # an error of the coordinator's code is not the table's

        def report(game: TableGame) -> None:
            slot = job.slots.get(game.game_id)
            if slot is None or game.game_id in seen or self.fatal is not None:
                return
            seen.add(game.game_id)
            try:
                recorded = self.ledger.record(slot, game, job.images)
            except StoreError as exc:
                self._fail(exc)
                return
            except OSError as exc:  # the record could not be written: the output's disk
                self._fail(storage_error(exc, self.ledger.output))
                return
            job.reported[game.game_id] = recorded
            try:
                self.schedule.recorded(job, number, game, recorded)
            except StoreError as exc:  # what a game means to the schedule may be written too (a disqualification)
                self._fail(exc)
            except BaseException as exc:
                own.append(exc)
                raise

        live = getattr(self.schedule, "live", None)  # a schedule with spectators (the ladder), local tables only
        try:
            if live is not None and getattr(spec, "live", False):
                result = await self.player.play(spec, report, self.stop, on_live=live)  # type: ignore[call-arg]
            else:
                result = await self.player.play(spec, report, self.stop)
        except RunStopped as exc:
            self._fail(exc)
            result = TableResult(spec.table_id, [], {}, error=str(exc))
        except ImageMismatch as exc:  # the image is gone from this machine since the start
            if self.fatal_image_mismatch:
                self._fail(RunStopped(str(exc)))
            result = TableResult(spec.table_id, [], {}, error=f"ImageMismatch: {exc}")
        except Exception as exc:
            if own:
                raise
            # A platform fault of this table (it could not start): its games are played again.
            result = TableResult(spec.table_id, [], {}, error=f"{type(exc).__name__}: {exc}")
        for game in result.games:  # a player that returns its games only at the end
            report(game)
        results[number] = result
        if result.logs and number in job.log_dirs:  # a remote table's logs, kept where a local one writes them
            write_logs(job.log_dirs[number], result.logs)

    def _fail(self, exc: Exception) -> None:
        """Stop every table; the run ends raising ``exc`` (their games in progress are played on resume)."""
        if self.fatal is None:
            self.fatal = exc
        self.stop.set()

    async def _watch_signals(self) -> None:
        """Ctrl-C or SIGTERM: stop starting tables, stop the running ones (their bots are removed).

        The receiver stays open until the run ends: a second Ctrl-C during the
        clean-up is taken too, not raised as KeyboardInterrupt in its middle.
        """
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                self.interrupted = True
                self.stop.set()


def _single(group: BaseExceptionGroup) -> BaseException:  # type: ignore[type-arg]
    """The one exception a nursery wrapped (trio always groups them), or the group itself when there are several."""
    while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
        group = group.exceptions[0]  # type: ignore[assignment]
    return group


__all__ = ["Job", "RunOutcome", "Runner", "Schedule"]
