"""Run an SPRT: duplicate pairs until the LLR crosses a bound, resumable at any moment.

The test is a *schedule* of the run loop (:class:`arena.tables.runner.Runner`,
which plays the tables, stores every game through the ledger, owns Ctrl-C and
the prune): it keeps ``concurrency / 2`` batches of pairs in play (each batch
= two tables at the same time, each table its own OS process, see
:mod:`arena.tables.pairs`), feeds each completed pair to the sequential test,
and stops the tables as soon as the test is decided, ``--max-pairs`` pairs are
in, or the user presses Ctrl-C.

Its pairs are the ledger's, as the ladder's are (:mod:`arena.tables.ledger`):
each is stored before it first plays and each start of its tables is an
attempt stored with it, so a restart (even after kill -9) keeps them.  A pair
left unfinished (a table failed, a game was void, the run was killed) plays
only its missing tables again, in log directories of their own (a stored
game's logs and record never change); after the ledger's ``MAX_PAIR_ATTEMPTS``
starts it is void and the test fails with what happened at its last attempt
(:func:`arena.tables.pairs.unfinished`).  A pair given up by an earlier run is left out
on resume (told once), and ``--max-pairs`` counts the pairs the test can use.
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
from arena.results.store import PAIR_PLAYING, PAIR_VOID, ResultsStore, StoredGame, storage_error
from arena.sandbox.docker import DockerUnavailable, ImageNotFound, SeatStartError, docker_client
from arena.sandbox.preflight import preflight_images, preflight_run
from arena.sprt.config import SprtConfig, deal_seed, game_id, pair_cluster
from arena.sprt.store import open_store, stored_pairs
from arena.tables.containers import prune_run, resolve_image_ids
from arena.tables.ledger import Ledger, Recorded
from arena.tables.logs import new_log_dirs
from arena.tables.pairs import PairBatch, unfinished
from arena.tables.players import LocalTables, TablePlayer
from arena.tables.runlock import hold_directory
from arena.tables.runner import Job, Runner
from arena.tables.spec import TableGame, TableResult

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
    void_pairs: tuple[tuple[int, str], ...] = ()
    """The pairs given up (out of attempts, in this run or an earlier one) and why: left out of the test."""


@dataclasses.dataclass
class Progress:
    """What the CLI is told (always on the runner's thread)."""

    on_update: Callable[[Snapshot], None] = lambda snapshot: None
    on_void: Callable[[str, str], None] = lambda game_id, reason: None
    on_notice: Callable[[str], None] = lambda message: None
    """Something the user should know that does not stop the test (one line)."""


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
    """The test as a schedule of the run loop (:class:`arena.tables.runner.Runner`): which pairs next, when to stop.

    Its pairs are the ledger's (:mod:`arena.tables.ledger`): pair ``p`` is
    stored as pair ``p`` (cluster ``dNNNNNN``) before it first plays, each
    start of its tables is an attempt stored with it (a restart keeps them),
    a pair played again plays only its missing tables, and a pair out of
    attempts is void with the reason of its last attempt.
    """

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
        #: The one writer of the results and the pairs (the stored-game guard: a late copy writes nothing).
        self.ledger = Ledger(store, config.out, ruleset_hash=config.rules.hash)
        self.voids = 0
        #: Pairs to play again (their missing tables only), and pairs given up (void, never played again).
        self.retry: set[int] = set()
        self.given_up: dict[int, str] = {}
        self.frontier = 0
        self.running: dict[str, PairBatch] = {}
        #: Set to stop every table (decided, Ctrl-C, a write that failed): each table process
        #: stops its bots and ends; the games in progress are not stored and are played on resume.
        self.stop = threading.Event()
        self.failure: str | None = None
        self._resume_pairs()

    def _resume_pairs(self) -> None:
        """Pairs a stopped or killed run left: the unfinished ones played again (their attempts kept), the void ones not."""
        for pair in self.store.pairs():
            if pair.status == PAIR_VOID:
                self.given_up[pair.seq] = pair.reason
                self.progress.on_notice(f"pair {pair.seq} was given up before ({pair.reason}): it is left out of the test")
            elif pair.status == PAIR_PLAYING:
                if self._finished(pair.seq):
                    continue
                self.retry.add(pair.seq)

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
        void_pairs = tuple(sorted(self.given_up.items()))
        return SprtReport(
            self.snapshot(), self._result(outcome.interrupted), outcome.interrupted, self.failure, self.run_id, void_pairs
        )

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

    def _ids(self, pair: int) -> tuple[str, str]:
        return game_id(pair, 1), game_id(pair, 2)

    def _finished(self, pair: int) -> bool:
        """Whether both of ``pair``'s games are stored: then it is marked done and counted (once)."""
        ids = self._ids(pair)
        if self.ledger.missing_tables(ids):
            return False
        self.ledger.finish_pair(pair)
        for game in ids:  # stored by an earlier run of this directory and not read yet: counted now
            row = self.store.game(game)
            if row is not None and not self.book.has(pair, row.table_no):
                self._add(row)
        return True

    def _choose(self, room: int) -> tuple[list[int], tuple[int, ...]]:
        """The next batch and its tables: pairs to play again first (those missing the same tables), then new
        ones (whole pairs, below ``max_pairs``); each chosen pair's start is counted. Empty: none fits in ``room``."""
        chosen: list[int] = []
        tables: tuple[int, ...] = ()
        busy = self._in_play()
        for pair in sorted(self.retry - busy):
            if len(chosen) == self.config.pairs_per_table:
                break
            missing = self.ledger.missing_tables(self._ids(pair))
            if not missing:  # stored meanwhile (another writer's copy): done, and counted
                self.retry.discard(pair)
                self._finished(pair)
            elif not (chosen and missing != tables) and len(missing) <= room:
                chosen.append(pair)
                tables = missing
        if tables in ((), (1, 2)) and room >= 2:  # new pairs join a batch of whole pairs only
            chosen += self._new_pairs(self.config.pairs_per_table - len(chosen), busy)
            tables = (1, 2) if chosen else ()
        started = []
        for pair in chosen:
            if not self._start(pair):  # out of attempts: the test fails; the others' starts are given back
                for other in started:
                    self.ledger.stopped(other)
                return [], ()
            started.append(pair)
        return chosen, tables

    def _new_pairs(self, wanted: int, busy: set[int]) -> list[int]:
        """Up to ``wanted`` pairs never started, in order (a given-up pair is no pair played: ``--max-pairs``
        counts the pairs the test can use)."""
        limit = self.config.max_pairs
        found: list[int] = []
        while len(found) < wanted and (limit is None or self.frontier < limit + len(self.given_up)):
            pair = self.frontier
            self.frontier += 1
            if pair in self.book.complete or pair in busy or pair in self.given_up or pair in self.retry:
                continue
            missing = self.ledger.missing_tables(self._ids(pair))
            if not missing:
                self._finished(pair)
            elif missing != (1, 2):  # half of it stored (a store from before pairs were kept): on its own
                self.retry.add(pair)
            else:
                found.append(pair)
        return found

    def _start(self, pair: int) -> bool:
        """Count a start of ``pair`` (written as playing first); False when it is out of attempts (the test fails)."""
        new, old = self.names
        before = self.ledger.numbered_pair(pair, new, old, cluster=pair_cluster(pair))
        if self.ledger.begin_attempt(pair) is not None:
            self.retry.discard(pair)
            return True
        why = before.reason or "every attempt was cut short (the test was killed while the pair played)"
        self.given_up[pair] = why
        self.retry.discard(pair)
        self.failure = f"pair {pair} could not be played in {before.attempts} attempts: {why}"
        self.stop.set()
        return False

    def next_job(self, room: int) -> Job | None:
        """The next batch of pairs (its missing tables only), or None when nothing fits in ``room``."""
        pairs, tables = self._choose(room)
        if not pairs:
            return None
        batch = self._batch(pairs, tables)
        self.running[batch.batch_id] = batch
        self._update()
        return batch.job(tables, pair_cluster, local=self.player.local, images=self.images)

    def _batch(self, pairs: list[int], tables: tuple[int, ...]) -> PairBatch:
        """The batch of ``pairs``, named so that its tables' log directories are new ones (a stored game's stay)."""
        config = self.config
        logs = config.out / "logs"
        try:
            name = new_log_dirs(logs, pair_cluster(pairs[0]), tables)
        except OSError as exc:  # the output's disk: the run stops with that one line
            raise storage_error(exc, logs) from None
        return PairBatch(
            batch_id=f"sprt-{self.run_id}/{name}",
            pairs=tuple(pairs),
            deal_seeds=tuple(deal_seed(config.seed, p, self.secret) for p in pairs),
            game_ids=(tuple(game_id(p, 1) for p in pairs), tuple(game_id(p, 2) for p in pairs)),
            new=config.new,
            old=config.old,
            names=self.names,
            rules=config.rules,
            time_control=config.time_control,
            log_dir=logs,
            run_id=self.run_id,
            # Image bots start by the image ID found at the start: a tag moved meanwhile changes nothing.
            images=(self.images.get(self.names[0]), self.images.get(self.names[1])),
            limits=config.limits,
            start_timeout=config.start_timeout,
            bot_seed_key=bot_seed_key(self.secret),
        )

    def job_done(self, job: Job, results: Mapping[int, TableResult], stopped: bool) -> None:
        """A batch ended: each of its pairs is done, played again (its missing tables: the ledger bounds its
        attempts), or, stopped on purpose, given its start back."""
        batch = self.running.pop(job.key)
        self._update()
        left = [p for p in batch.pairs if not self._finished(p)]
        if not left:
            return
        if stopped or self.done():  # stopped on purpose: nothing failed, what is missing is played on resume
            for pair in left:
                self.ledger.stopped(pair)
            return
        void_games = {game: r.void for game, r in job.reported.items() if r.void is not None}
        found = unfinished(batch, job.tables, results, void_games, self.ledger.stored)
        for game, reason in found.voids:
            self._void(game, reason)
        for pair in left:
            self.ledger.failed(pair, found.reasons.get(pair, "its games were not stored"))
            if pair in found.untried:
                self.ledger.stopped(pair)  # no table reached it: that start does not count
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
            return  # already stored (a copy of a game played twice): nothing was written; job_done counts it
        self._add(row)
        self._update()

    def _add(self, row: StoredGame) -> None:
        """A stored game into the book; the pair it completes to the test."""
        self.games += 1
        completed = self.book.add(row)
        if completed is not None:
            self._count(completed[1])
            if self.done():
                self.stop.set()  # the test is over: stop the tables still playing

    def _count(self, outcome: PairOutcome) -> None:
        self.test.add(pentanomial_index(outcome.score))
        self.points.add(outcome)

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
    "Progress",
    "Snapshot",
    "SprtReport",
    "run_sprt",
]
