"""The ladder loop: build what teams submit, and keep playing duplicate pairs between active versions.

It runs under trio in ``arena ladder serve`` (the web site runs beside it, in
another thread).  One task, the coordinator, owns the ladder's state and is
the only writer of its games and pairs: every game a table reports goes
through the run's :class:`~arena.tables.ledger.Ledger` (the one stored-game
guard: a game stored once is never written again), and every version status
through the store's compare-and-set :meth:`~arena.ladder.store.LadderStore.transition`.
Builds run beside it in worker threads and hand what they find back to the
coordinator's thread (``trio.from_thread``), never through a shared connection.

What is the ladder's own:

- which pairing next: :func:`arena.ladder.matchmaking.next_pairing` over the
  current standings (new versions first, then where the order is least certain);
- builds, ``builders`` at a time (:mod:`arena.ladder.builds`);
- the standings, kept game by game (:class:`~arena.ladder.standings.StandingsBook`),
  with a history row per version after every pair;
- a newly active version that loses its first games by crash or forfeit is
  suspended and its team's previous good version restored.

It survives ``kill -9`` at any moment: a pair is written as started (and its
attempt counted) before it plays, each game is stored as it ends, so on
restart a pair left "playing" plays only its missing table, on the same deal,
and builds left half-done are built again.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import threading
from collections.abc import Callable, Mapping
from typing import Any

import trio

from arena.ladder import builds
from arena.ladder.config import LadderConfig
from arena.ladder.lifecycle import ACTIVE, BUILDING, FAILED, QUEUED, VALIDATING, IllegalTransition
from arena.ladder.matchmaking import Standing as MatchStanding
from arena.ladder.matchmaking import next_pairing
from arena.ladder.export import ladder_book
from arena.ladder.state import LadderState, game_ids
from arena.ladder.store import LadderStore, Version
from arena.match.seeds import bot_seed_key, derive_seed
from arena.referee.botspec import BotSpec
from arena.results.store import ResultsStore, StoredGame, StoreError
from arena.tables.containers import prune_run
from arena.tables.ledger import Ledger, Recorded
from arena.tables.pairs import PairBatch
from arena.tables.players import TablePlayer
from arena.tables.rows import GameSlot
from arena.tables.runner import Job, Runner
from arena.tables.spec import TableGame, TableResult

log = logging.getLogger("arena.ladder")

#: How often the loop looks for work when there is none (submissions, a resume, a stop).
IDLE_S = 0.5
#: How long a stop waits for tables and validations to end before it stops waiting (they are killed).
STOP_GRACE_S = 20.0


@dataclasses.dataclass(frozen=True)
class LadderEvent:
    """Something the organiser sees at the console: ``kind`` (build, pair, void, suspend, failure, stop) and a line."""

    kind: str
    text: str


def cluster_of(seq: int) -> str:
    return f"L{seq:07d}"


#: The cluster name of a pair as the ledger stores it (formatted with its number).
CLUSTER_FORMAT = "L{seq:07d}"


class LadderService:
    """The loop; :meth:`run` until ``stop`` is set."""

    def __init__(
        self,
        config: LadderConfig,
        store: LadderStore,
        results: ResultsStore,
        player: TablePlayer,
        *,
        rng: random.Random | None = None,
        on_change: Callable[[LadderState], None] = lambda state: None,
        on_event: Callable[[LadderEvent], None] = lambda event: None,
        builders: int = 1,
    ) -> None:
        self.config = config
        self.store = store
        self.results = results
        self.player = player
        self.rng = rng or random.Random()
        self.on_change = on_change
        self.on_event = on_event
        self.builders = max(1, builders)
        self.ladder_id = store.meta()["ladder_id"]
        self.secret = results.secret
        self.ledger = Ledger(results, config.directory, ruleset_hash=config.rules.hash)
        self.stop = threading.Event()
        #: Pairs in play: seq -> (first, second).
        self.busy: dict[int, tuple[str, str]] = {}
        #: Versions being built: version id -> entry.
        self.building: dict[int, str] = {}
        self.state = LadderState()
        self._move_legacy_pairs()
        stored = results.games_in_write_order()
        self.book = ladder_book(store, results, stored)
        #: Each version's first stored games, True where it lost them by its own crash or forfeit.
        self.first_games: dict[str, list[bool]] = {}
        for game in stored:
            self._count(game)
        self.refresh()

    # ------------------------------------------------------------ standings

    def _count(self, game: StoredGame) -> None:
        """Count a stored game for the suspension rule (a version's first games)."""
        if self.config.suspend_after:
            for side in (game.side0, game.side1):
                seen = self.first_games.setdefault(side, [])
                if len(seen) < self.config.suspend_after:
                    seen.append(side in game.forfeit_entries)

    def refresh(self) -> None:
        """The standings of the active versions, from the book (no refit from the stores)."""
        active = [v.entry for v in self.store.active_versions()]
        rows = self.book.standings(active)
        building = ", ".join(sorted(self.building.values())) or None
        self.state = LadderState(tuple(rows), tuple(self.busy.values()), building)
        self.on_change(self.state)

    def ratings(self) -> dict[str, tuple[float, float, float, int]]:
        """Each rated active version's (elo, low, high, pairs): a retiring version keeps these."""
        return {
            s.entry: (s.elo, s.low, s.high, s.pairs)  # type: ignore[misc]
            for s in self.state.standings
            if s.elo is not None
        }

    # ------------------------------------------------------------ the loop

    @property
    def run_id(self) -> str:
        """The label of every container this ladder starts (tables and validations): the prune finds them."""
        return f"ladder-{self.ladder_id}"

    async def run(self) -> None:
        """Play and build until :attr:`stop` is set; then stop the tables and builds (their bots are removed)."""
        for version in self.store.interrupted_builds():
            with _dropped_if_moved():
                self.store.transition(version.id, QUEUED)  # built again (MAX_ATTEMPTS counts the tries)
        runner = Runner(
            self, self.ledger, self.player, capacity=2 * self.config.concurrency, stop=self.stop,
            prune=lambda: prune_run(self.run_id), poll_s=IDLE_S, side=(self._builds,),
            on_error=self._job_failed, watch_signals=False, side_grace_s=STOP_GRACE_S,
        )  # fmt: skip
        try:
            await runner.run()
        except StoreError as exc:
            self.on_event(LadderEvent("failure", f"{exc}; the ladder stops"))
            raise
        finally:
            for version_id in list(self.building):  # a build Docker still runs: built again next time
                with _dropped_if_moved():
                    self.store.transition(version_id, QUEUED)
        self.on_event(LadderEvent("stop", "stopped: what is stored is kept; pairs cut short play their missing table on restart"))

    # ------------------------------------------------------------ the schedule (arena.tables.runner.Schedule)

    def next_job(self) -> Job | None:
        """The next pair to play: one left unfinished first (its missing tables), then matchmaking's pick."""
        if self.store.paused:
            return None
        while True:
            picked = self._next_pair()
            if picked is None:
                return None
            seq, a, b = picked
            job = self._job(seq, a, b)
            if job is not None:
                self.busy[seq] = (a, b)
                self.refresh()
                return job

    def recorded(self, job: Job, table: int, game: TableGame, recorded: Recorded) -> None:
        if recorded.void is not None:
            self.on_event(LadderEvent("void", f"game {game.game_id} void ({recorded.void}): played again"))
        if recorded.row is None:
            return
        self.book.add(recorded.row)
        self._count(recorded.row)
        self._check_suspension(recorded.row)

    def job_done(self, job: Job, results: Mapping[int, TableResult], stopped: bool) -> None:
        seq = self._seq(job)
        a, b = self.busy.pop(seq, ("?", "?"))
        try:
            if stopped:
                self.ledger.stopped(seq)  # stopped on purpose: that start does not count; played again on restart
                return
            ids = game_ids(seq)
            missing = self.ledger.missing_tables(ids)
            if not missing:
                self.ledger.finish_pair(seq)
                stored = [self.results.game(g) for g in ids]
                score = " ".join(f"{g.score0}:{g.score1}" for g in stored if g is not None)
                self.on_event(LadderEvent("pair", f"pair {seq} stored: {a} vs {b} {score}"))
                return
            errors = [r.error for r in results.values() if r.error is not None]
            why = errors[0] if errors else "a game was void"
            self.ledger.failed(seq, why)
            self.on_event(LadderEvent("failure", f"pair {seq} ({a} vs {b}): table {missing[0]} not stored ({why}); played again"))
        finally:
            self.refresh()
            self._record_history()

    def done(self) -> bool:
        return False  # a ladder plays until it is stopped

    async def idle(self) -> bool:
        await trio.sleep(IDLE_S)
        return True

    def _job_failed(self, job: Job, exc: BaseException) -> None:
        """The ladder's own code failed for one pair: told, the pair played again (its attempts bound it)."""
        seq = self._seq(job)
        self.busy.pop(seq, None)
        log.error("pair %s failed", seq, exc_info=exc)
        self.on_event(LadderEvent("failure", f"pair {seq} failed: {type(exc).__name__}: {exc}"))
        try:
            self.ledger.failed(seq, f"{type(exc).__name__}: {exc}")
        except StoreError:
            self.stop.set()
        self.refresh()

    @staticmethod
    def _seq(job: Job) -> int:
        return int(job.key.removeprefix("L"))

    # ------------------------------------------------------------ pairs

    def _next_pair(self) -> tuple[int, str, str] | None:
        active = {v.entry: v for v in self.store.active_versions()}
        for pair in self.ledger.unfinished_pairs():
            if pair.seq in self.busy:
                continue
            if pair.first in active and pair.second in active:
                return pair.seq, pair.first, pair.second
            self._abandon(pair.seq, "a side is no longer active")
        if len(active) < 2:
            return None
        rated = {s.entry: s for s in self.state.standings}
        pool = []
        for name in active:
            s = rated.get(name)
            if s is None or s.elo is None:
                pool.append(MatchStanding(name, 1500.0, float("-inf"), float("inf"), s.pairs if s else 0))
            else:
                low = s.low if s.low is not None else float("-inf")  # no interval: not settled
                high = s.high if s.high is not None else float("inf")
                pool.append(MatchStanding(name, s.elo, low, high, s.pairs))
        busy = {name for pair in self.busy.values() for name in pair}
        pairing = next_pairing(pool, self.book.pairs_played(), busy, self.rng, self.config.matchmaking)
        if pairing is None:
            return None
        a, b = sorted(pairing)
        return self.ledger.plan_pair(a, b, cluster=CLUSTER_FORMAT), a, b

    def _abandon(self, seq: int, reason: str) -> None:
        self.ledger.abandon_pair(seq, reason)
        self.book.exclude_cluster(cluster_of(seq))
        self.on_event(LadderEvent("void", f"pair {seq} abandoned: {reason}"))

    def _job(self, seq: int, a: str, b: str) -> Job | None:
        """Pair ``seq``'s missing tables as a job (its attempt counted), or None (it needs none, or is void)."""
        ids = game_ids(seq)
        missing = self.ledger.missing_tables(ids)
        if not missing:
            self.ledger.finish_pair(seq)
            return None
        attempt = self.ledger.begin_attempt(seq)
        if attempt is None:  # out of attempts: void, its stored half out of the ratings
            self.book.exclude_cluster(cluster_of(seq))
            pair = self.results.pair(seq)
            self.on_event(LadderEvent("void", f"pair {seq} ({a} vs {b}) void: {pair.reason if pair else ''}"))
            return None
        versions = {v.entry: v for v in self.store.active_versions()}
        again = "" if missing == (1, 2) else f" (table {missing[0]} again)"
        self.on_event(LadderEvent("pair", f"pair {seq}: {a} vs {b}{again}, attempt {attempt.attempts}"))
        batch = self._batch(seq, versions[a], versions[b])
        first, second = batch.names
        slots = {}
        for table, game_id in enumerate(ids, 1):
            side0, side1 = (first, second) if table == 1 else (second, first)
            slots[game_id] = GameSlot(game_id, seq, seq, table, cluster_of(seq), side0, side1, batch.deal_seeds[0])
        return Job(
            key=cluster_of(seq),
            tables={n: batch.table(n, local=self.player.local) for n in missing},
            slots=slots,
            images={first: batch.images[0], second: batch.images[1]},
            log_dirs={n: batch.table_log_dir(n) for n in missing},
        )

    def _record_history(self) -> None:
        """One history row per rated active version (the team pages plot them across versions)."""
        rows = [(s.entry, s.pairs, s.elo, s.low, s.high) for s in self.state.standings
                if s.elo is not None and s.low is not None and s.high is not None]  # fmt: skip
        if rows:
            self.store.add_history(rows)  # type: ignore[arg-type]

    def _batch(self, seq: int, first: Version, second: Version) -> PairBatch:
        config = self.config
        ids = game_ids(seq)
        return PairBatch(
            batch_id=f"{self.run_id}/L{seq:07d}",
            pairs=(seq,),
            deal_seeds=(derive_seed(self.secret, "ladder", seq),),
            game_ids=((ids[0],), (ids[1],)),
            new=BotSpec("docker", first.image_id or ""),
            old=BotSpec("docker", second.image_id or ""),
            names=(first.entry, second.entry),
            rules=config.rules,
            time_control=config.time_control,
            log_dir=config.directory / "logs",
            run_id=self.run_id,
            images=(first.image_id, second.image_id),
            limits=config.limits,
            start_timeout=config.start_timeout,
            bot_seed_key=bot_seed_key(self.secret),
        )

    def _check_suspension(self, game: StoredGame) -> None:
        """A newly active version that lost each of its first games by its own crash or forfeit is suspended."""
        k = self.config.suspend_after
        for side in (game.side0, game.side1):
            seen = self.first_games.get(side, [])
            if k == 0 or len(seen) != k or not all(seen):
                continue
            version = self.store.version_by_entry(side)
            if version is None or version.status != ACTIVE:
                continue
            reason = (
                f"suspended: it lost each of its first {k} games by its own crash or forfeit "
                f"({game.forfeit_reason or 'forfeit'}: {(game.forfeit_detail or '')[:200]}); fix it and submit again"
            )
            try:
                restored = self.store.suspend(version, reason)
            except IllegalTransition:
                continue
            self.first_games[side] = []  # told once
            back = f"; {restored.entry} is active again" if restored is not None else ""
            self.on_event(LadderEvent("suspend", f"{side} {reason}{back}"))

    # ------------------------------------------------------------ builds

    async def _builds(self) -> None:
        """Side work of the run: build queued versions, ``builders`` at once, until the ladder stops.

        On stop, validations stop their game (``stop`` is their cancel) and the
        builds still running are waited for a grace, then abandoned (built again next time).
        """
        async with trio.open_nursery() as nursery:
            while not self.stop.is_set():
                if self._start_builds(nursery):
                    self.refresh()
                await trio.sleep(IDLE_S)
            while self.building:
                await trio.sleep(0.1)

    def _start_builds(self, nursery: trio.Nursery) -> bool:
        """Start building the oldest queued versions, up to ``builders`` at once; True if any started."""
        started = False
        for version in sorted(self.store.versions(status=QUEUED), key=lambda v: v.id):  # oldest first
            if len(self.building) >= self.builders:
                break
            if version.id in self.building:
                continue
            attempts = version.attempts + 1
            try:
                if attempts > builds.MAX_ATTEMPTS:
                    self.store.transition(
                        version.id, FAILED, expect=QUEUED,
                        reason=f"build given up after {builds.MAX_ATTEMPTS} attempts (the server stopped during each)",
                    )  # fmt: skip
                    self.on_event(LadderEvent("build", f"{version.entry}: given up after {builds.MAX_ATTEMPTS} attempts"))
                    continue
                self.store.transition(version.id, BUILDING, expect=QUEUED, attempts=attempts)
            except IllegalTransition:
                continue  # disabled meanwhile
            self.building[version.id] = version.entry
            self.on_event(LadderEvent("build", f"{version.entry}: building (attempt {attempts})"))
            nursery.start_soon(self._build, version)
            started = True
        return started

    async def _build(self, version: Version) -> None:
        token = trio.lowlevel.current_trio_token()

        def on_phase(phase: str, fields: Mapping[str, Any]) -> None:  # in the worker thread
            trio.from_thread.run_sync(self._phase, version, phase, dict(fields), trio_token=token)

        try:
            outcome = await trio.to_thread.run_sync(
                lambda: builds.build_and_validate(
                    self.config, version, ladder_id=self.ladder_id, run_id=self.run_id,
                    on_phase=on_phase, cancel=self.stop,
                ),
                abandon_on_cancel=True,
            )  # fmt: skip
            self._built(version, outcome)
        except builds.BuildCancelled:
            with _dropped_if_moved():
                self.store.transition(version.id, QUEUED)  # the server is stopping: built again next time
        except Exception as exc:  # noqa: BLE001 - a build that breaks must not stop the ladder
            log.exception("building %s failed", version.entry)
            with _dropped_if_moved():
                self.store.transition(
                    version.id, FAILED, reason=f"the build failed inside the server ({type(exc).__name__}); see its log"
                )
            self.on_event(LadderEvent("failure", f"{version.entry}: the build failed inside the server: {exc}"))
        finally:
            self.building.pop(version.id, None)
            self.refresh()

    def _phase(self, version: Version, phase: str, fields: dict[str, Any]) -> None:
        """A build's progress, applied on the coordinator's thread (``validating``: built, now playing its check)."""
        if phase != VALIDATING:
            return
        with _dropped_if_moved():
            self.store.transition(version.id, VALIDATING, expect=BUILDING, **fields)
            self.on_event(LadderEvent("build", f"{version.entry}: built {str(fields.get('image_id', ''))[:19]}, validating"))

    def _built(self, version: Version, outcome: builds.BuildOutcome) -> None:
        """A build's outcome, applied on the coordinator's thread (compare-and-set: a disable meanwhile wins)."""
        logs: dict[str, Any] = {"build_log": outcome.build_log, "validation_log": outcome.validation_log}
        if outcome.image_id:
            logs["image_id"] = outcome.image_id
        try:
            if not outcome.passed:
                self.store.transition(version.id, FAILED, reason=outcome.reason or "failed", **logs)
                self.on_event(LadderEvent("build", f"{version.entry}: failed: {outcome.reason}"))
                return
            self.store.transition(version.id, VALIDATING, **logs)  # (from building, or staying validating)
            self.store.activate(version, self.ratings())
        except IllegalTransition as exc:
            self.on_event(LadderEvent("build", f"{version.entry}: result dropped: {exc}"))
            return
        self.first_games.pop(version.entry, None)
        self.on_event(LadderEvent("build", f"{version.entry}: active"))

    # ------------------------------------------------------------ older stores

    def _move_legacy_pairs(self) -> None:
        """Ladders from before the ledger kept their pairs in ladder.sqlite: move the unfinished ones, once."""
        if self.store.meta().get("pairs_moved") == "1":
            return
        legacy = self.store.legacy_pairs()
        if legacy:
            floor = max(seq for seq, *_ in legacy)
            self.results.set_meta("pairs_floor", str(floor))
            for seq, first, second, status in legacy:
                if status == "playing" and self.results.pair(seq) is None:
                    self.results.add_pair(first, second, cluster=CLUSTER_FORMAT, seq=seq)
        self.store.set_meta("pairs_moved", "1")


class _dropped_if_moved:
    """A status write that found the version moved by someone else (the organiser): dropped, logged."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, IllegalTransition):
            log.info("%s", exc)
            return True
        return False


def open_results(config: LadderConfig, ladder_id: str) -> ResultsStore:
    """The ladder's games store, bound to its ruleset (the tournament store's format: ``arena ratings`` reads it)."""
    store = ResultsStore(config.results_path)
    store.claim(f"ladder:{ladder_id}", config.name, config.rules.hash, json.dumps(config.rules.to_dict()))
    return store


def active_entries(store: LadderStore) -> list[str]:
    return [v.entry for v in store.active_versions() if v.status == ACTIVE]


__all__ = ["LadderEvent", "LadderService", "LadderState", "active_entries", "game_ids", "open_results"]
