"""Run an SPRT: duplicate pairs until the LLR crosses a bound, resumable at any moment.

The runner is the coordinator and the only writer of the results store. It
keeps ``concurrency / 2`` batches of pairs in play (each batch = two tables
at the same time, each table its own OS process, see :mod:`arena.tables.pairs`),
stores every game as its table process sends it, feeds each completed pair
to the sequential test, and stops the tables as soon as the test is decided,
``--max-pairs`` pairs are in, or the user presses Ctrl-C. A pair whose game
was voided (the platform failed, a table process died) is played again, at
most ``MAX_ATTEMPTS`` times.

Orchestration is trio, as the tournament runner's, and everything about playing
a table is the table kernel's (:mod:`arena.tables`): the table player, image IDs
resolved once at the start, each game's row and the prune of leftovers.
"""

from __future__ import annotations

import dataclasses
import errno
import math
import signal
import threading
from collections.abc import Callable
from typing import Any

import trio

from arena.match.seeds import bot_seed_key
from arena.ratings.pairs import PairOutcome, PairSummary, PointsTally, pentanomial_index, summary_of
from arena.ratings.sprt import SequentialTest, Status
from arena.referee.botspec import BotSpecError
from arena.results.store import ResultsStore, StoreError, storage_error
from arena.sandbox.docker import DockerUnavailable, ImageNotFound, SeatStartError, docker_client
from arena.sandbox.preflight import preflight_images, preflight_run
from arena.sprt.config import SprtConfig, deal_seed, game_id
from arena.sprt.store import open_store, stored_pairs
from arena.tables.containers import prune_run, resolve_image_ids
from arena.tables.pairs import PairBatch, play_pairs
from arena.tables.players import LocalTables, TablePlayer
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot
from arena.tables.spec import TableGame, TableResult

#: What a batch's task tells the loop when it ends: the batch and its tables' results (None: it failed).
_Done = tuple[PairBatch, "dict[int, TableResult] | None"]

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
    used (a missing image, or one that cannot start: each is started once first) and :class:`StoreError` for an output directory
    that holds another test or cannot be written.
    """
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
        self.interrupted = False
        self.failure: str | None = None
        self.fatal: StoreError | None = None

    # ------------------------------------------------------------ the loop

    async def run(self) -> SprtReport:
        send: trio.MemorySendChannel[_Done]
        receive: trio.MemoryReceiveChannel[_Done]
        send, receive = trio.open_memory_channel(math.inf)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_signals)
            try:
                if self.client is not None:
                    # Leftovers of an earlier run of this test that was killed.
                    await trio.to_thread.run_sync(self._prune)
                self._update()
                while not self._stopping():
                    while len(self.running) < self.config.concurrency // 2 and not self._stopping():
                        batch = self._next_batch()
                        if batch is None:
                            break
                        self.running[batch.batch_id] = batch
                        nursery.start_soon(self._play_batch, batch, send)
                        self._update()
                    if not self.running:
                        break
                    batch, results = await receive.receive()
                    self.running.pop(batch.batch_id, None)
                    if results is not None:  # None: the batch's task failed (and the nursery says how)
                        self._batch_done(batch, results)
            finally:
                # Stop the tables still playing and wait for them: their processes stop their bots.
                self.stop.set()
                with trio.CancelScope(shield=True):
                    while self.running:
                        batch, _ = await receive.receive()
                        self.running.pop(batch.batch_id, None)
                    if self.client is not None:
                        await trio.to_thread.run_sync(self._prune)
                nursery.cancel_scope.cancel()  # the signal watcher
        self._update()
        if self.fatal is not None:
            raise self.fatal
        return SprtReport(
            self.snapshot(), self._result(), self.interrupted, self.failure, self.run_id
        )

    async def _play_batch(self, batch: PairBatch, done: trio.MemorySendChannel[_Done]) -> None:
        results = None
        try:
            results = await play_pairs(batch, self._on_game(batch), self.stop, self.player)
        finally:
            # Always said, even when failing or cancelled: the loop waits for every running batch.
            done.send_nowait((batch, results))

    async def _watch_signals(self) -> None:
        """Ctrl-C or SIGTERM: stop the tables (their bots are stopped), keep what is stored."""
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                self.interrupted = True
                self.stop.set()
                self._update()

    def _result(self) -> str:
        if self.test.verdict is not None:
            return self.test.verdict
        if self.failure is not None:
            return FAILED
        return INTERRUPTED if self.interrupted else INCONCLUSIVE

    def _stopping(self) -> bool:
        return (
            self.stop.is_set()
            or self.interrupted
            or self.failure is not None
            or self.fatal is not None
            or self._decided()
        )

    def _decided(self) -> bool:
        limit = self.config.max_pairs
        return self.test.verdict is not None or (limit is not None and self.test.pairs >= limit)

    def _prune(self) -> None:
        # By match id, not by run label: containers of a test started by an older version carry none.
        prune_run(None, f"sprt-{self.run_id}/", self.client)

    # ------------------------------------------------------------ scheduling

    def _in_play(self) -> set[int]:
        return {p for batch in self.running.values() for p in batch.pairs}

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
        config = self.config
        return PairBatch(
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

    def _batch_done(self, batch: PairBatch, results: dict[int, TableResult]) -> None:
        """A batch ended: its unfinished pairs are played again, up to ``MAX_ATTEMPTS`` starts.

        A table that failed (its process killed, the platform down) voids the
        game it was playing: the first of its games not stored. Its later
        games were never started; their pairs are simply played again.
        """
        if self._stopping():
            return  # stopped on purpose: nothing failed, what is missing is played on resume
        errors = [r.error for r in results.values() if r.error is not None]
        for table, result in sorted(results.items()):
            if result.error is None:
                continue
            sent = {g.game_id for g in result.games}
            for pair, gid in zip(batch.pairs, batch.game_ids[table - 1], strict=True):
                if gid not in sent and not self.book.has(pair, table):
                    try:
                        self._void(gid, f"void:platform: {result.error}")
                    except StoreError as exc:  # as on_game: one line, not a traceback
                        self._fatal(exc)
                        return
                    except OSError as exc:
                        if not _disk_full(exc):
                            raise
                        self._fatal(storage_error(exc, self.config.out))
                        return
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

    def _on_game(self, batch: PairBatch) -> Callable[[int, TableGame], None]:
        pair_of = {
            gid: p for ids in batch.game_ids for gid, p in zip(ids, batch.pairs, strict=True)
        }

        def on_game(table: int, game: TableGame) -> None:
            if self.fatal is not None or game.game_id not in pair_of:
                return
            try:
                self._store_game(pair_of[game.game_id], table, game)
            except StoreError as exc:
                self._fatal(exc)
            except OSError as exc:
                if not _disk_full(exc):
                    raise
                self._fatal(storage_error(exc, self.config.out))

        return on_game

    def _fatal(self, exc: StoreError) -> None:
        """The results cannot be written: stop every table (their games in progress are played on resume)."""
        self.fatal = exc
        self.stop.set()

    def _void(self, gid: str, reason: str) -> None:
        self.ledger.void(gid, reason)
        self.voids += 1
        self.progress.on_void(gid, reason)
        self._update()

    def _store_game(self, pair: int, table: int, game: TableGame) -> None:
        """Store one finished game; a pair it completes goes to the test (in storing order)."""
        if self.book.has(pair, table):
            return  # played again because its partner game was missing: the stored one stands
        if game.void is not None:
            self._void(game.game_id, game.void)
            return
        row = self.ledger.record(self._slot(pair, table, game.game_id), game, self.images).row
        if row is None:
            return  # already stored (a copy of a game played twice): nothing was written
        self.games += 1
        completed = self.book.add(row)
        if completed is not None:
            self._count(completed[1])
            if self._decided():
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
