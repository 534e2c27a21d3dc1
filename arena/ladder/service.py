"""The ladder loop: build what teams submit, and keep playing duplicate pairs between active versions.

It runs under trio in ``arena ladder serve`` (the web site runs beside it, in
another thread) as a *schedule* of the run loop (:class:`arena.tables.runner.Runner`),
which plays the tables, owns the prune and hands every game to the run's
:class:`~arena.tables.ledger.Ledger` (the one stored-game guard: a game stored
once is never written again).  This task, the coordinator, is the only writer
of the games and pairs, and every version status goes through the store's
compare-and-set :meth:`~arena.ladder.store.LadderStore.transition`.

What is the ladder's own:

- which pair next: one left unfinished (its missing tables only), else
  :func:`arena.ladder.games.matchmaking.next_pairing` over the current standings;
- the standings, kept game by game (:class:`~arena.ladder.games.standings.StandingsBook`),
  with a history row per version after every pair;
- a newly active version that loses its first games by crash or forfeit is
  suspended and its team's previous good version restored;
- builds, as side work of the loop (:class:`~arena.ladder.versions.build_queue.BuildQueue`);
- the course's calendar (:mod:`arena.ladder.course.calendar`): the phase is asked of the
  clock before every pick; after the deadline the final versions are fixed (once,
  stored) and only they play, in the final evaluation's order (:mod:`arena.ladder.course.final`),
  until every neighbour pair is separated or tied or ``final_until`` passes; then the
  final table is stored and nothing more plays.  Each phase change is a console line.

It survives ``kill -9`` at any moment: a pair is written as started (and its
attempt counted) before it plays, each game is stored as it ends, so on
restart a pair left "playing" plays only its missing table, on the same deal,
and builds left half-done are built again.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import random
import threading
from collections.abc import Callable, Mapping

import trio

from arena.ladder.course import final
from arena.ladder.versions.build_queue import BuildQueue
from arena.ladder.course.calendar import BEFORE, FINAL, FROZEN, OPEN, Clock, countdown, iso, phase, utc_now
from arena.ladder.config import LadderConfig
from arena.ladder.common.engine_watch import CHECK_S, EngineWatch
from arena.ladder.course.export import ladder_book
from arena.ladder.course.final_store import FinalStore
from arena.ladder.versions.lifecycle import ACTIVE, QUEUED, RETIRED, IllegalTransition
from arena.ladder.games.live import LiveGames
from arena.ladder.games.matchmaking import Standing as MatchStanding
from arena.ladder.games.matchmaking import next_pairing
from arena.ladder.games.state import CLUSTER_FORMAT, LadderState, game_ids, pair_cluster
from arena.ladder.store import LadderStore, Version
from arena.match.seeds import bot_seed_key, derive_seed
from arena.referee.botspec import BotSpec
from arena.results.store import ResultsStore, StoredGame, StoreError
from arena.sandbox.docker import RUN_LABEL
from arena.sandbox.engine_probe import prober
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
#: How long a stop waits for builds and validations to end before it abandons them.
STOP_GRACE_S = 20.0


@dataclasses.dataclass(frozen=True)
class LadderEvent:
    """Something the organiser sees at the console: ``kind`` (build, pair, void, suspend, failure, phase, stop) and a line."""

    kind: str
    text: str


class LadderService:
    """The ladder's schedule and builds; :meth:`run` until ``stop`` is set."""

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
        clock: Clock = utc_now,
        bot_of: Callable[[Version], BotSpec] | None = None,
    ) -> None:
        self.config = config
        #: The time the calendar's phases are asked at (tests move it).
        self.clock = clock
        #: How a version's seats are started: its image (tests may play local bots instead).
        self.bot_of = bot_of or (lambda version: BotSpec("docker", version.image_id or ""))
        self.finals = FinalStore(config.ladder_path)
        #: The phase last seen (None before the first look): a change is told once.
        self.phase: str | None = None
        #: The final versions' entries once fixed (read back from the store on a restart).
        self.final_entries: list[str] | None = None
        self.store = store
        self.results = results
        self.player = player
        self.rng = rng or random.Random()
        self.on_change = on_change
        self.on_event = on_event
        self.ladder_id = store.meta()["ladder_id"]
        self.secret = results.secret
        self.ledger = Ledger(results, config.directory, ruleset_hash=config.rules.hash)
        self.stop = threading.Event()
        #: Whether the Docker engine starts containers (arena.ladder.common.engine_watch): nothing starts while it cannot.
        self.engine = EngineWatch(
            lambda text: self.on_event(LadderEvent("failure", text)),
            probe=prober(config.submissions.base_image, labels={RUN_LABEL: self.run_id}),
            background=True, check_every=CHECK_S, changed=lambda: self.refresh(),
        )  # fmt: skip
        self.builds = BuildQueue(
            config, store, ladder_id=self.ladder_id, run_id=self.run_id, stop=self.stop, builders=builders,
            activate=lambda version: store.activate(version, self.ratings()),
            tell=lambda text: self.on_event(LadderEvent("build", text)), changed=self.refresh, engine=self.engine,
        )  # fmt: skip
        #: Pairs in play: seq -> (first, second).
        self.busy: dict[int, tuple[str, str]] = {}
        #: The games in play as spectators see them (arena.ladder.games.live): the site reads it through the state.
        self.live_games = LiveGames(config.rules.players, self.stop)
        self.state = LadderState(live=self.live_games)
        _move_legacy_pairs(store, results)
        stored = results.games_in_write_order()
        self.book = ladder_book(store, results, stored)
        #: Each version's first stored games, True where it lost them by its own crash or forfeit.
        self.first_games: dict[str, list[bool]] = {}
        for game in stored:
            self._count(game)
        self.refresh()
        self.advance()

    @property
    def run_id(self) -> str:
        """The label of every container this ladder starts (tables and validations): the prune finds them."""
        return f"ladder-{self.ladder_id}"

    # ------------------------------------------------------------ standings

    def listed(self) -> list[str]:
        """The versions the standings list: the final ones once the final evaluation began, else the active ones."""
        if self.phase in (FINAL, FROZEN) and self.final_entries is not None:
            return list(self._final_versions())
        return [v.entry for v in self.store.active_versions()]

    def refresh(self) -> None:
        """The standings of the listed versions, from the book (no refit from the stores)."""
        rows = self.book.standings(self.listed())
        if self.phase == FINAL:  # the site shows the final table as it stands
            calendar = self.config.calendar
            live = final.final_table(rows, iso(self.clock()), calendar.los, calendar.resolution, self.book.pairs_played())
            self.finals.set_live(live.to_dict())
        building = ", ".join(sorted(self.builds.building.values())) or None
        engine = self.engine.reason if self.engine.down else None
        self.state = LadderState(tuple(rows), tuple(self.busy.values()), building, live=self.live_games, engine_down=engine)
        self.on_change(self.state)

    def ratings(self) -> dict[str, tuple[float, float, float, int]]:
        """Each rated active version's (elo, low, high, pairs): a retiring version keeps these."""
        return {
            s.entry: (s.elo, s.low, s.high, s.pairs)  # type: ignore[misc]
            for s in self.state.standings
            if s.elo is not None
        }

    def _record_history(self) -> None:
        """One history row per rated active version (the team pages plot them across versions)."""
        rows = [(s.entry, s.pairs, s.elo, s.low, s.high) for s in self.state.standings
                if s.elo is not None and s.low is not None and s.high is not None]  # fmt: skip
        if rows:
            self.store.add_history(rows)  # type: ignore[arg-type]

    # ------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Play and build until :attr:`stop` is set; then stop the tables and builds (their bots are removed).

        Raises :class:`~arena.results.store.StoreError` when the stores cannot be written (after the clean-up).
        """
        for version in self.store.interrupted_builds():
            _queue_again(self.store, version)  # built again (MAX_ATTEMPTS counts the tries)
        runner = Runner(
            self, self.ledger, self.player, capacity=2 * self.config.concurrency, stop=self.stop,
            prune=lambda: prune_run(self.run_id), poll_s=IDLE_S, side=(self.builds.run,),
            on_error=self._job_failed, watch_signals=False, side_grace_s=STOP_GRACE_S,
        )  # fmt: skip
        try:
            await runner.run()
        except StoreError as exc:
            self.on_event(LadderEvent("failure", f"{exc}; the ladder stops"))
            raise
        finally:
            self.live_games.close()
            self.close()
        self.on_event(LadderEvent("stop", "stopped: what is stored is kept; pairs cut short play their missing table on restart"))

    def close(self) -> None:
        """Close the loop's own connections (the stores it was given are its caller's to close)."""
        self.finals.close()

    # ------------------------------------------------------------ the schedule (arena.tables.runner.Schedule)

    def next_job(self, room: int) -> Job | None:
        """A pair left unfinished first (its missing tables), then matchmaking's pick; None if none fits in ``room``.

        After the deadline only final versions play, in the final evaluation's order; once frozen, nothing.
        """
        current = self.advance()
        if self.store.paused or current == FROZEN or not self.engine.ready():
            return None
        if current == FINAL:
            active = self._final_versions()
            gone = "not a final version (the deadline passed)"
        else:
            active = {v.entry: v for v in self.store.active_versions()}
            gone = "a side is no longer active"
        for pair in self.ledger.unfinished_pairs():
            if pair.seq in self.busy:
                continue
            if pair.first not in active or pair.second not in active:
                self._abandon(pair.seq, gone)
                continue
            job = self._job(pair.seq, active[pair.first], active[pair.second], room)
            if job is not None:
                return job
        if room < 2 or len(active) < 2:
            return None
        pairing = self._pick_final() if current == FINAL else self._pick(list(active))
        if pairing is None:
            return None
        a, b = pairing
        return self._job(self.ledger.plan_pair(a, b, cluster=CLUSTER_FORMAT), active[a], active[b], room)

    def live(self, game_id: str, to_move: int, view: bytes) -> None:
        """A decision of a running game (the runner calls this for live tables): to the spectators' hub."""
        self.live_games.publish(game_id, to_move, view)

    def recorded(self, job: Job, table: int, game: TableGame, recorded: Recorded) -> None:
        game_id = recorded.row.game_id if recorded.row is not None else getattr(game, "game_id", None)
        if game_id is not None:
            self.live_games.finish(game_id, replay=recorded.row is not None)
        if recorded.void is not None:
            self.on_event(LadderEvent("void", f"game {game.game_id} void ({recorded.void}): played again"))
        if recorded.row is None:
            return
        self.book.add(recorded.row)
        self._count(recorded.row)
        self._check_suspension(recorded.row)

    def job_done(self, job: Job, results: Mapping[int, TableResult], stopped: bool) -> None:
        seq = _seq(job)
        a, b = self.busy.pop(seq, ("?", "?"))
        for game_id in job.slots:  # a game not stored (stopped, failed) leaves the live list too
            self.live_games.finish(game_id, replay=False)
        if stopped:
            self.ledger.stopped(seq)  # stopped on purpose: that start does not count; played again on restart
            self.refresh()
            return
        ids = game_ids(seq)
        missing = self.ledger.missing_tables(ids)
        errors = [r.error for r in results.values() if r.error is not None]
        in_docker = any(spec.uses_docker for spec in job.tables.values())  # (tests may seat local bots)
        if missing and in_docker and self.engine.outage(errors):  # the platform's outage: its attempt given back
            self.ledger.stopped(seq)
            self.engine.failed(errors[0])
            self.on_event(LadderEvent("pair", f"pair {seq} ({a} vs {b}) waits for the Docker engine"))
            self.refresh()
            return
        if not missing:
            self.ledger.finish_pair(seq)
            stored = [self.results.game(g) for g in ids]
            score = " ".join(f"{g.score0}:{g.score1}" for g in stored if g is not None)
            self.on_event(LadderEvent("pair", f"pair {seq} stored: {a} vs {b} {score}"))
        else:
            why = errors[0] if errors else "a game was void"
            self.ledger.failed(seq, why)
            self.on_event(LadderEvent("failure", f"pair {seq} ({a} vs {b}): table {missing[0]} not stored ({why}); played again"))
        self.refresh()
        self._record_history()

    def done(self) -> bool:
        return False  # a ladder plays until it is stopped (a frozen one serves its final table)

    # ------------------------------------------------------------ the calendar

    def advance(self) -> str:
        """The phase now, by the clock; every step into it taken once (told at the console).

        Entering the final phase fixes the final versions (stored: a restart reads them back);
        a final evaluation that is settled, or whose ``final_until`` passed, stores the final
        table (once: it never changes after).
        """
        calendar = self.config.calendar
        now = self.clock()
        frozen = self.finals.frozen()
        current = phase(now, calendar, settled=frozen is not None)
        if current in (FINAL, FROZEN) and self.final_entries is None:
            self._fix_finals(now)
        if current != self.phase:
            before, self.phase = self.phase, current
            self.refresh()
            if current == FROZEN and frozen is None:  # final_until passed (while running, or while stopped)
                self._freeze(now, f"final_until ({iso(calendar.final_until)}) passed")
            self._tell_phase(before, current, now)
        if current == FINAL and final.settled(self.state.standings, self._verdicts()):
            self._freeze(now, "settled: every neighbour pair is separated or tied")
            return self.advance()
        return current

    def _tell_phase(self, before: str | None, current: str, now: datetime.datetime) -> None:
        """One console line for the phase the loop is now in (and the next dated change, if any)."""
        what = {
            BEFORE: "uploads are refused until the opening",
            OPEN: "uploads are taken and the ladder plays",
            FINAL: f"the final evaluation: only the {len(self.final_entries or [])} final versions play",
            FROZEN: "the final table is stored; nothing more plays",
        }[current]
        ahead = countdown(now, self.config.calendar, frozen=current == FROZEN)
        change = current if before is None else f"{before} -> {current}"
        self.on_event(LadderEvent("phase", f"phase {change}: {what}" + (f"; {ahead}" if ahead else "")))

    def _fix_finals(self, now: datetime.datetime) -> None:
        """Each team's final version, fixed once (the stored ones on a restart)."""
        candidates = final.fix_candidates(self.store, self.config.calendar, self.finals.choices())
        fixed, made = self.finals.fix(candidates, iso(now))
        self.final_entries = [f.entry for f in fixed]
        if made:
            told = ", ".join(f"{f.entry}{' (selected)' if f.how == final.SELECTED else ''}" for f in fixed) or "none"
            self.on_event(LadderEvent("phase", f"final versions fixed at the deadline: {told}"))

    def _final_versions(self) -> dict[str, Version]:
        """The final versions that may play: their team still enabled, the version not disabled."""
        out = {}
        for entry in self.final_entries or []:
            version = self.store.version_by_entry(entry)
            team = self.store.team(version.team) if version is not None else None
            if version is not None and team is not None and not team.disabled and version.status in (ACTIVE, RETIRED):
                out[entry] = version
        return out

    def _verdicts(self) -> list[final.Verdict]:
        calendar = self.config.calendar
        return final.verdicts(self.state.standings, calendar.los, calendar.resolution, self.book.pairs_played())

    def _pick_final(self) -> tuple[str, str] | None:
        """The final evaluation's next pair among the final versions that may play."""
        playing = set(self._final_versions())
        rows = [s for s in self.state.standings if s.entry in playing]
        busy = {name for pair in self.busy.values() for name in pair}
        found = [v for v in self._verdicts() if v.upper in playing and v.lower in playing]
        return final.final_pairing(rows, found, busy, self.book.pairs_played())

    def _freeze(self, now: datetime.datetime, reason: str) -> None:
        """Store the final table (the first stored stays: a restart never changes it) and tell it."""
        calendar = self.config.calendar
        table = final.final_table(self.state.standings, iso(now), calendar.los, calendar.resolution, self.book.pairs_played())
        _, made = self.finals.freeze(iso(now), reason, table.to_dict())
        if made:
            top = ", ".join(f"{r.rank or '–'}. {r.entry}" for r in table.rows[:5])
            self.on_event(LadderEvent("phase", f"final table frozen ({reason}): {top}"))

    async def idle(self) -> bool:
        await trio.sleep(IDLE_S)
        return True

    def _job_failed(self, job: Job, exc: BaseException) -> None:
        """The ladder's own code failed for one pair: told, the pair played again (its attempts bound it).

        A store error here (the failure cannot even be noted) ends the run: the loop stops with its line.
        """
        seq = _seq(job)
        self.busy.pop(seq, None)
        for game_id in job.slots:
            self.live_games.finish(game_id, replay=False)
        log.error("pair %s failed", seq, exc_info=exc)
        self.on_event(LadderEvent("failure", f"pair {seq} failed: {type(exc).__name__}: {exc}"))
        self.ledger.failed(seq, f"{type(exc).__name__}: {exc}")
        self.refresh()

    # ------------------------------------------------------------ pairs

    def _pick(self, active: list[str]) -> tuple[str, str] | None:
        """Matchmaking's next pairing among the active versions (its order is the pair's: sorted)."""
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
        return a, b

    def _abandon(self, seq: int, reason: str) -> None:
        self.ledger.abandon_pair(seq, reason)
        self.book.exclude_cluster(pair_cluster(seq))
        self.on_event(LadderEvent("void", f"pair {seq} abandoned: {reason}"))

    def _job(self, seq: int, first: Version, second: Version, room: int) -> Job | None:
        """Pair ``seq``'s missing tables as a job (its attempt counted); None if it needs none, is void or does not fit."""
        ids = game_ids(seq)
        missing = self.ledger.missing_tables(ids)
        if not missing:
            self.ledger.finish_pair(seq)
            return None
        if len(missing) > room:
            return None  # played when a table's room frees up
        a, b = first.entry, second.entry
        attempt = self.ledger.begin_attempt(seq)
        if attempt is None:  # out of attempts: void, its stored half out of the ratings
            self.book.exclude_cluster(pair_cluster(seq))
            pair = self.results.pair(seq)
            self.on_event(LadderEvent("void", f"pair {seq} ({a} vs {b}) void: {pair.reason if pair else ''}"))
            return None
        again = "" if missing == (1, 2) else f" (table {missing[0]} again)"
        self.on_event(LadderEvent("pair", f"pair {seq}: {a} vs {b}{again}, attempt {attempt.attempts}"))
        batch = self._batch(seq, first, second)
        slots = {}
        for table, game_id in enumerate(ids, 1):
            side0, side1 = (a, b) if table == 1 else (b, a)
            slots[game_id] = GameSlot(game_id, seq, seq, table, pair_cluster(seq), side0, side1, batch.deal_seeds[0])
        self.busy[seq] = (a, b)
        live = bool(getattr(self.player, "local", False))  # spectators see local tables (not a cluster's)
        for n in missing:
            self.live_games.start(ids[n - 1], (a, b) if n == 1 else (b, a))
        self.refresh()
        return Job(
            key=pair_cluster(seq),
            tables={n: dataclasses.replace(batch.table(n, local=self.player.local), live=live) for n in missing},
            slots=slots,
            images={a: first.image_id, b: second.image_id},
            log_dirs={n: batch.table_log_dir(n) for n in missing},
        )

    def _batch(self, seq: int, first: Version, second: Version) -> PairBatch:
        config = self.config
        ids = game_ids(seq)
        return PairBatch(
            batch_id=f"{self.run_id}/{pair_cluster(seq)}",
            pairs=(seq,),
            deal_seeds=(derive_seed(self.secret, "ladder", seq),),
            game_ids=((ids[0],), (ids[1],)),
            new=self.bot_of(first),
            old=self.bot_of(second),
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

    # ------------------------------------------------------------ suspension

    def _count(self, game: StoredGame) -> None:
        """Count a stored game for the suspension rule (each version's first games)."""
        if self.config.suspend_after:
            for side in (game.side0, game.side1):
                seen = self.first_games.setdefault(side, [])
                if len(seen) < self.config.suspend_after:
                    seen.append(side in game.forfeit_entries)

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


def _seq(job: Job) -> int:
    return int(job.key.removeprefix("L"))


def _queue_again(store: LadderStore, version: Version) -> None:
    try:
        store.transition(version.id, QUEUED)
    except IllegalTransition:
        pass  # disabled meanwhile: it stays so


def _move_legacy_pairs(store: LadderStore, results: ResultsStore) -> None:
    """Ladders from before the ledger kept their pairs in ladder.sqlite: move the unfinished ones, once.

    New pairs are numbered above every old one (``pairs_floor``): their game ids are taken.
    """
    if store.meta().get("pairs_moved") == "1":
        return
    legacy = store.legacy_pairs()
    if legacy:
        results.set_meta("pairs_floor", str(max(seq for seq, *_ in legacy)))
        for seq, first, second, status in legacy:
            if status == "playing" and results.pair(seq) is None:
                results.add_pair(first, second, cluster=CLUSTER_FORMAT, seq=seq)
    store.set_meta("pairs_moved", "1")


def open_results(config: LadderConfig, ladder_id: str) -> ResultsStore:
    """The ladder's games store, bound to its ruleset (the tournament store's format: ``arena ratings`` reads it)."""
    store = ResultsStore(config.results_path)
    store.claim(f"ladder:{ladder_id}", config.name, config.rules.hash, json.dumps(config.rules.to_dict()))
    return store


__all__ = ["LadderEvent", "LadderService", "LadderState", "game_ids", "open_results"]
