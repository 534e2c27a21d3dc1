"""Run an SPRT: duplicate pairs until the LLR crosses a bound, resumable at any moment.

The runner is the coordinator and the only writer of the results store. It
keeps ``concurrency / 2`` batches of pairs in play (each batch = two tables
at the same time, see :mod:`arena.sprt.play`), stores every game as it
finishes, feeds each completed pair to the sequential test, and stops the
tables as soon as the test is decided, ``--max-pairs`` pairs are in, or the
user presses Ctrl-C. A pair whose game was voided (the platform failed) is
played again, at most ``MAX_ATTEMPTS`` times.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import signal
from collections.abc import Callable
from typing import Any

from arena_sdk import __version__ as SDK_VERSION
from arena_sdk.engine import ENGINE_VERSION, team_of

from arena.match import GameOutcome
from arena.match.output import write_record
from arena.ratings.pairs import PairOutcome, PairSummary, PointsTally, pentanomial_index, summary_of
from arena.ratings.sprt import SequentialTest, Status
from arena.referee.botspec import BotSpec, BotSpecError
from arena.sandbox.docker import DockerUnavailable, ImageNotFound, docker_client, image_id, prune
from arena.sprt.config import SprtConfig, deal_seed, game_id
from arena.sprt.play import PairBatch, play_pairs
from arena.sprt.store import open_store, stored_pairs
from arena.tournament.store import GameRow, ResultsStore, StoreError, now, storage_error

#: Times a pair is started before the run gives up on the platform.
MAX_ATTEMPTS = 3

INCONCLUSIVE = "inconclusive"
INTERRUPTED = "interrupted"
FAILED = "failed"


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """Where a running test stands (what the live display shows)."""

    names: tuple[str, str]
    status: Status
    summary: PairSummary
    games: int
    voids: int
    in_play: int
    """Pairs being played now."""
    resumed_pairs: int
    """Pairs that were already in the store when this run started."""
    max_pairs: int | None


@dataclasses.dataclass(frozen=True)
class SprtReport:
    """How a run ended."""

    snapshot: Snapshot
    result: str
    """``H1`` or ``H0`` (decided), ``inconclusive`` (``max_pairs`` reached), ``interrupted`` or ``failed``."""
    interrupted: bool
    failure: str | None
    run_id: str


@dataclasses.dataclass
class Progress:
    """What the CLI is told (always on the runner's thread)."""

    on_update: Callable[[Snapshot], None] = lambda snapshot: None
    on_void: Callable[[str, str], None] = lambda game_id, reason: None


def run_sprt(config: SprtConfig, progress: Progress | None = None) -> SprtReport:
    """Play pairs until the test is decided, ``max_pairs`` is reached, or Ctrl-C; resumes a stored test.

    Raises :class:`BotSpecError` for a bot that cannot be used (a missing
    image) and :class:`StoreError` for an output directory that holds another
    test or cannot be written.
    """
    client, images = _images(config)
    store, run_id = open_store(config, images)
    try:
        run = _Run(config, store, run_id, images, client, progress or Progress())
        return asyncio.run(run.run())
    finally:
        store.close()
        if client is not None:
            client.close()


def _images(config: SprtConfig) -> tuple[Any, dict[str, str | None]]:
    """A Docker client if a bot is an image, and each side's image ID (None for other kinds)."""
    new, old = config.names
    specs = {new: config.new, old: config.old}
    if not any(s.kind == "docker" for s in specs.values()):
        return None, {new: None, old: None}
    try:
        client = docker_client()
        ids = {
            name: image_id(client, s.target) if s.kind == "docker" else None
            for name, s in specs.items()
        }
    except (DockerUnavailable, ImageNotFound) as exc:
        raise BotSpecError(str(exc)) from None
    return client, ids


class _Run:
    def __init__(
        self,
        config: SprtConfig,
        store: ResultsStore,
        run_id: str,
        images: dict[str, str | None],
        client: Any,
        progress: Progress,
    ) -> None:
        self.config = config
        self.store = store
        self.run_id = run_id
        self.images = images
        self.client = client
        self.progress = progress
        self.names = config.names
        self.test = SequentialTest(config.settings)
        self.points = PointsTally()
        self.book, done = stored_pairs(store, self.names[0])
        for _, outcome in done:
            self._count(outcome)
        self.resumed = self.test.pairs
        self.games = len(store.finished_ids())
        self.voids = 0
        self.attempts: dict[int, int] = {}
        self.retry: set[int] = set()
        self.frontier = 0
        self.tasks: dict[asyncio.Future[None], PairBatch] = {}
        self.interrupted = False
        self.failure: str | None = None
        self.fatal: StoreError | None = None

    # ------------------------------------------------------------ the loop

    async def run(self) -> SprtReport:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._interrupt)
        if self.client is not None:
            # Leftovers of an earlier run of this test that was killed.
            await asyncio.to_thread(self._prune)
        self._update()
        try:
            while not self._stopping():
                while len(self.tasks) < self.config.concurrency // 2:
                    batch = self._next_batch()
                    if batch is None:
                        break
                    self.tasks[
                        asyncio.ensure_future(play_pairs(batch, self._on_game(batch), self.client))
                    ] = batch
                    self._update()
                if not self.tasks:
                    break
                finished, _ = await asyncio.wait(self.tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    self._batch_done(task, self.tasks.pop(task))
        finally:
            await self._cancel_all()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            if self.client is not None:
                await asyncio.to_thread(self._prune)
        self._update()
        if self.fatal is not None:
            raise self.fatal
        return SprtReport(
            self.snapshot(), self._result(), self.interrupted, self.failure, self.run_id
        )

    def _result(self) -> str:
        if self.test.verdict is not None:
            return self.test.verdict
        if self.failure is not None:
            return FAILED
        return INTERRUPTED if self.interrupted else INCONCLUSIVE

    def _stopping(self) -> bool:
        return (
            self.interrupted
            or self.failure is not None
            or self.fatal is not None
            or self._decided()
        )

    def _decided(self) -> bool:
        limit = self.config.max_pairs
        return self.test.verdict is not None or (limit is not None and self.test.pairs >= limit)

    def _interrupt(self) -> None:
        """Ctrl-C or SIGTERM: stop the tables (their bots are stopped), keep what is stored."""
        self.interrupted = True
        self._cancel_tasks()

    def _cancel_tasks(self) -> None:
        for task in self.tasks:
            task.cancel()

    async def _cancel_all(self) -> None:
        self._cancel_tasks()
        for task in list(self.tasks):
            with contextlib.suppress(BaseException):
                await task
        self.tasks.clear()

    def _prune(self) -> None:
        with contextlib.suppress(Exception):
            prune(self.client, match_prefix=f"sprt-{self.run_id}/", include_running=True)

    # ------------------------------------------------------------ scheduling

    def _in_play(self) -> set[int]:
        return {p for batch in self.tasks.values() for p in batch.pairs}

    def _next_batch(self) -> PairBatch | None:
        """The next pairs to play: pairs to retry first, then new ones (below ``max_pairs``)."""
        size = self.config.pairs_per_table
        limit = self.config.max_pairs
        busy = self._in_play()
        picks = sorted(self.retry)[:size]
        self.retry.difference_update(picks)
        while len(picks) < size and (limit is None or self.frontier < limit):
            pair = self.frontier
            self.frontier += 1
            if pair not in self.book.complete and pair not in busy and pair not in picks:
                picks.append(pair)
        if not picks:
            return None
        for pair in picks:
            self.attempts[pair] = self.attempts.get(pair, 0) + 1
        seeds = tuple(deal_seed(self.config.seed, p) for p in picks)
        config = self.config
        new, old = (
            self._pinned(spec, name)
            for spec, name in zip((config.new, config.old), self.names, strict=True)
        )
        return PairBatch(
            batch_id=f"sprt-{self.run_id}/d{picks[0]:06d}",
            pairs=tuple(picks),
            deal_seeds=seeds,
            game_ids=(tuple(game_id(p, 1) for p in picks), tuple(game_id(p, 2) for p in picks)),
            new=new,
            old=old,
            rules=config.rules,
            time_control=config.time_control,
            log_dir=config.out / "logs",
            limits=config.limits,
            start_timeout=config.start_timeout,
        )

    def _pinned(self, spec: BotSpec, name: str) -> BotSpec:
        """An image bot started by the image ID found at the start: a tag moved meanwhile changes nothing."""
        image = self.images.get(name)
        return (
            spec
            if spec.kind != "docker" or image is None
            else dataclasses.replace(spec, target=image)
        )

    def _batch_done(self, task: asyncio.Future[None], batch: PairBatch) -> None:
        """A batch ended: its unfinished pairs are played again, up to ``MAX_ATTEMPTS`` starts."""
        error: BaseException | None = None
        if not task.cancelled():
            error = task.exception()
        if isinstance(error, StoreError):
            self.fatal = error
            return
        if isinstance(error, OSError) and _disk_full(error):
            self.fatal = storage_error(error, self.config.out)
            return
        for pair in batch.pairs:
            if pair in self.book.complete or self._stopping():
                continue
            if self.attempts.get(pair, 0) >= MAX_ATTEMPTS:
                why = (
                    f"{type(error).__name__}: {error}"
                    if error is not None
                    else "its games were voided"
                )
                self.failure = f"pair {pair} could not be played in {MAX_ATTEMPTS} attempts ({why})"
                return
            self.retry.add(pair)

    # ------------------------------------------------------------ results

    def _on_game(self, batch: PairBatch) -> Callable[[int, GameOutcome], None]:
        pair_of = {
            gid: p for ids in batch.game_ids for gid, p in zip(ids, batch.pairs, strict=True)
        }

        def on_game(table: int, outcome: GameOutcome) -> None:
            self._store_game(pair_of[outcome.game_id], table, outcome)

        return on_game

    def _store_game(self, pair: int, table: int, outcome: GameOutcome) -> None:
        """Store one finished game; a pair it completes goes to the test (in storing order)."""
        if self.book.has(pair, table):
            return  # played again because its partner game was missing: the stored one stands
        if outcome.void is not None:
            reason = f"{outcome.ending}: {outcome.void.get('detail', '')}"
            self.store.record_void(outcome.game_id, reason)
            self.voids += 1
            self.progress.on_void(outcome.game_id, reason)
            self._update()
            return
        records = self.config.out / "records"
        try:
            write_record(records, outcome)  # the record first, then the row that points to it
        except OSError as exc:
            raise storage_error(exc, records) from None
        row = self._row(pair, table, outcome)
        self.store.record_game(row)
        self.games += 1
        completed = self.book.add(row)
        if completed is not None:
            self._count(completed[1])
            if self._decided():
                self._cancel_tasks()  # the test is over: stop the tables still playing
        self._update()

    def _count(self, outcome: PairOutcome) -> None:
        self.test.add(pentanomial_index(outcome.score))
        self.points.add(outcome)

    def _row(self, pair: int, table: int, outcome: GameOutcome) -> GameRow:
        new, old = self.names
        sides = (new, old) if table == 1 else (old, new)
        n = self.config.rules.players
        forfeit = outcome.forfeit
        strikes = [0, 0]
        for s, st in enumerate(outcome.stats):
            strikes[team_of(n, s)] += st.strikes
        charged: tuple[str, ...] = ()
        if forfeit is not None:
            charged = tuple(sides[0] if t in ("NS", "A") else sides[1] for t in forfeit["teams"])
        return GameRow(
            game_id=outcome.game_id, pairing=0, deal=pair, table_no=table, cluster=f"d{pair:06d}",
            side0=sides[0], side1=sides[1], deal_seed=outcome.deal_seed, ending=outcome.ending,
            winner=None if outcome.winner is None else sides[outcome.winner],
            score0=outcome.result.scores[0], score1=outcome.result.scores[1], hands=outcome.result.hands,
            forfeit_entry=charged[0] if len(charged) == 1 else None, forfeit_entries=charged,
            forfeit_reason=None if forfeit is None else forfeit["reason"],
            forfeit_detail=None if forfeit is None else str(forfeit.get("detail", ""))[:500],
            strikes0=strikes[0], strikes1=strikes[1], decisions=sum(st.decisions for st in outcome.stats),
            think_seconds=round(sum(st.think_s for st in outcome.stats), 6), ruleset_hash=self.config.rules.hash,
            engine_version=ENGINE_VERSION, sdk_version=SDK_VERSION,
            image0=self.images.get(sides[0]), image1=self.images.get(sides[1]),
            record=f"records/{outcome.game_id}.json", finished_at=now(),
        )  # fmt: skip

    def snapshot(self) -> Snapshot:
        return Snapshot(
            names=self.names,
            status=self.test.status(),
            summary=summary_of(self.test.counts, self.points.interval(), len(self.book.halves)),
            games=self.games,
            voids=self.voids,
            in_play=len(self._in_play()),
            resumed_pairs=self.resumed,
            max_pairs=self.config.max_pairs,
        )

    def _update(self) -> None:
        self.progress.on_update(self.snapshot())


def _disk_full(exc: OSError) -> bool:
    return exc.errno in (errno.ENOSPC, errno.EDQUOT)


__all__ = [
    "FAILED",
    "INCONCLUSIVE",
    "INTERRUPTED",
    "MAX_ATTEMPTS",
    "Progress",
    "Snapshot",
    "SprtReport",
    "run_sprt",
]
