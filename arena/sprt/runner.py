"""Run an SPRT: duplicate pairs until the LLR crosses a bound, resumable at any moment.

The test is a *schedule* of the run loop (:class:`arena.tables.runner.Runner`,
which plays the tables, stores every game through the ledger, owns Ctrl-C and
the prune): it keeps ``concurrency / 2`` batches of pairs in play (each batch
= two tables at the same time, each table its own OS process, see
:mod:`arena.tables.pairs`), feeds each completed pair to the sequential test,
and stops the tables as soon as the test is decided, ``--max-pairs`` pairs are
in, or the user presses Ctrl-C. A pair whose game was voided (the platform
failed, a table process died) is played again, at most ``MAX_ATTEMPTS`` times.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import Any

import trio

from arena.match.seeds import bot_seed_key
from arena.ratings.pairs import PairOutcome, PairSummary, PointsTally, pentanomial_index, summary_of
from arena.ratings.sprt import SequentialTest, Status
from arena.referee.botspec import BotSpecError
from arena.results.store import ResultsStore
from arena.sandbox.docker import DockerUnavailable, ImageNotFound, SeatStartError, docker_client
from arena.sandbox.preflight import preflight_images, preflight_run
from arena.sprt.config import SprtConfig, deal_seed, game_id
from arena.sprt.store import open_store, stored_pairs
from arena.tables.containers import prune_run, resolve_image_ids
from arena.tables.ledger import Ledger, Recorded
from arena.tables.pairs import PairBatch
from arena.tables.players import LocalTables, TablePlayer
from arena.tables.rows import GameSlot
from arena.tables.runlock import hold_directory
from arena.tables.runner import Job, Runner
from arena.tables.spec import TableGame, TableResult

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


def run_sprt(
    config: SprtConfig, progress: Progress | None = None, player: TablePlayer | None = None
) -> SprtReport:
    """Play pairs until the test is decided, ``max_pairs`` is reached, or Ctrl-C; resumes a stored test.

    ``player`` plays one table (default: in its own process on this machine;
    tests pass fakes). Raises :class:`BotSpecError` for a bot that cannot be
    used (a missing image, or one that cannot start: each is started once first), :class:`StoreError` for an output directory
    that holds another test or cannot be written, and :class:`~arena.tables.runlock.DirectoryInUse` for one
    another run holds (nothing touched).
    """
    with hold_directory(config.out, "arena sprt"):  # one test per --out, before anything there is read or written
        client, images = _images(config)
        store, run_id = open_store(config, images)
        try:
            if player is None:
                player = LocalTables()
            run = _Run(config, store, run_id, images, client, progress or Progress(), player)
            return trio.run(run.run)
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
        ids = resolve_image_ids(specs, client)
    except (DockerUnavailable, ImageNotFound) as exc:
        raise BotSpecError(str(exc)) from None
    # Each image started once before any pair: one that cannot start stops the test here, naming
    # its side, instead of forfeiting (or voiding) every pair (issue 24, item 5).
    # Labelled with a run of its own (pruned as it ends): the test's run id is known only once its
    # store is claimed, and a store claimed for an image that cannot start would hold it forever.
    try:
        refused = preflight_images(ids, client=client, limits=config.limits, run=preflight_run())
    except SeatStartError:
        refused = {}  # the platform's fault says nothing of the images: the pairs will void and replay
    except (DockerUnavailable, ImageNotFound) as exc:  # the engine went away, or the image was removed since
        client.close()
        raise BotSpecError(str(exc)) from None
    for name, role in ((new, "NEW (the candidate)"), (old, "OLD (the baseline)")):
        if name in refused:
            client.close()
            raise BotSpecError(f"{role} {name} cannot be tested: {refused[name]}")
    return client, ids


class _Run:
    """The test as a schedule of the run loop (:class:`arena.tables.runner.Runner`): which pairs next, when to stop."""

    def __init__(
        self,
        config: SprtConfig,
        store: ResultsStore,
        run_id: str,
        images: dict[str, str | None],
        client: Any,
        progress: Progress,
        player: TablePlayer,
    ) -> None:
        self.config = config
        self.store = store
        self.run_id = run_id
        self.images = images
        self.client = client
        self.progress = progress
        self.player = player
        self.names = config.names
        #: Keys the deal and bot seeds (None: a store made before secrets keeps its seed's deals).
        self.secret = store.secret
        self.test = SequentialTest(config.settings)
        self.points = PointsTally()
        self.book, done = stored_pairs(store, self.names[0])
        for _, outcome in done:
            self._count(outcome)
        self.resumed = self.test.pairs
        self.games = len(store.finished_ids())
        #: The one writer of the results (the stored-game guard: a late copy writes nothing).
        self.ledger = Ledger(store, config.out, ruleset_hash=config.rules.hash)
        self.voids = 0
        self.attempts: dict[int, int] = {}
        self.retry: set[int] = set()
        self.frontier = 0
        self.running: dict[str, PairBatch] = {}
        #: Set to stop every table (decided, Ctrl-C, a write that failed): each table process
        #: stops its bots and ends; the games in progress are not stored and are played on resume.
        self.stop = threading.Event()
        self.failure: str | None = None

    # ------------------------------------------------------------ the loop

    async def run(self) -> SprtReport:
        runner = Runner(
            self, self.ledger, self.player, capacity=2 * max(1, self.config.concurrency // 2), stop=self.stop,
            # By match id, not by run label: containers of a test started by an older version carry none.
            # Strict: an engine that cannot list or remove them stops the test at its start, in one line.
            prune=(lambda: prune_run(None, f"sprt-{self.run_id}/", self.client, strict=True)) if self.client is not None else None,
        )  # fmt: skip
        self._update()
        try:
            outcome = await runner.run()
        finally:
            self._update()
        return SprtReport(self.snapshot(), self._result(outcome.interrupted), outcome.interrupted, self.failure, self.run_id)

    def _result(self, interrupted: bool) -> str:
        if self.test.verdict is not None:
            return self.test.verdict
        if self.failure is not None:
            return FAILED
        return INTERRUPTED if interrupted else INCONCLUSIVE

    def done(self) -> bool:
        """Decided, ``max_pairs`` in, or given up on the platform (the loop then stops the tables still playing)."""
        limit = self.config.max_pairs
        return (
            self.failure is not None
            or self.test.verdict is not None
            or (limit is not None and self.test.pairs >= limit)
        )

    async def idle(self) -> bool:
        return False  # nothing runs and nothing is left to start: max_pairs' pairs are all in

    # ------------------------------------------------------------ scheduling

    def _in_play(self) -> set[int]:
        return {p for batch in self.running.values() for p in batch.pairs}

    def next_job(self, room: int) -> Job | None:  # (two tables; the capacity is even)
        """The next pairs to play as one batch: pairs to retry first, then new ones (below ``max_pairs``)."""
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
        config = self.config
        batch = PairBatch(
            batch_id=f"sprt-{self.run_id}/d{picks[0]:06d}",
            pairs=tuple(picks),
            deal_seeds=tuple(deal_seed(config.seed, p, self.secret) for p in picks),
            game_ids=(tuple(game_id(p, 1) for p in picks), tuple(game_id(p, 2) for p in picks)),
            new=config.new,
            old=config.old,
            names=self.names,
            rules=config.rules,
            time_control=config.time_control,
            log_dir=config.out / "logs",
            run_id=self.run_id,
            # Image bots start by the image ID found at the start: a tag moved meanwhile changes nothing.
            images=(self.images.get(self.names[0]), self.images.get(self.names[1])),
            limits=config.limits,
            start_timeout=config.start_timeout,
            bot_seed_key=bot_seed_key(self.secret),
        )
        self.running[batch.batch_id] = batch
        slots = {
            gid: self._slot(pair, table, gid)
            for table, ids in enumerate(batch.game_ids, 1)
            for gid, pair in zip(ids, batch.pairs, strict=True)
        }
        self._update()
        return Job(
            key=batch.batch_id,
            tables={n: batch.table(n, local=self.player.local) for n in (1, 2)},
            slots=slots,
            images=self.images,
            log_dirs={n: batch.table_log_dir(n) for n in (1, 2)},
        )

    def job_done(self, job: Job, results: Mapping[int, TableResult], stopped: bool) -> None:
        """A batch ended: its unfinished pairs are played again, up to ``MAX_ATTEMPTS`` starts.

        A table that failed (its process killed, the platform down) voids the
        game it was playing: the first of its games not stored. Its later
        games were never started; their pairs are simply played again.
        """
        batch = self.running.pop(job.key)
        self._update()
        if stopped or self.done():
            return  # stopped on purpose: nothing failed, what is missing is played on resume
        errors = [r.error for r in results.values() if r.error is not None]
        for table, result in sorted(results.items()):
            if result.error is None:
                continue
            sent = {g.game_id for g in result.games}
            for pair, gid in zip(batch.pairs, batch.game_ids[table - 1], strict=True):
                if gid not in sent and not self.book.has(pair, table):
                    self._void(gid, f"void:platform: {result.error}")
                    break
        for pair in batch.pairs:
            if pair in self.book.complete:
                continue
            if self.attempts.get(pair, 0) >= MAX_ATTEMPTS:
                why = errors[0] if errors else "its games were voided"
                self.failure = f"pair {pair} could not be played in {MAX_ATTEMPTS} attempts ({why})"
                self.stop.set()
                return
            self.retry.add(pair)

    # ------------------------------------------------------------ results

    def _void(self, gid: str, reason: str) -> None:
        self.ledger.void(gid, reason)
        self.voids += 1
        self.progress.on_void(gid, reason)
        self._update()

    def recorded(self, job: Job, table: int, game: TableGame, recorded: Recorded) -> None:
        """A stored game; a pair it completes goes to the test (in storing order)."""
        if recorded.void is not None:
            self.voids += 1
            self.progress.on_void(game.game_id, game.void or recorded.void)
            self._update()
            return
        row = recorded.row
        if row is None:
            return  # already stored (a copy of a game played twice): nothing was written
        self.games += 1
        completed = self.book.add(row)
        if completed is not None:
            self._count(completed[1])
            if self.done():
                self.stop.set()  # the test is over: stop the tables still playing
        self._update()

    def _count(self, outcome: PairOutcome) -> None:
        self.test.add(pentanomial_index(outcome.score))
        self.points.add(outcome)

    def _slot(self, pair: int, table: int, gid: str) -> GameSlot:
        """Where a game of pair ``pair`` at table ``table`` (1: NEW is side 0) sits in the test."""
        new, old = self.names
        side0, side1 = (new, old) if table == 1 else (old, new)
        return GameSlot(gid, 0, pair, table, f"d{pair:06d}", side0, side1, deal_seed(self.config.seed, pair, self.secret))

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
