"""The ladder's schedule for the run loop: which duplicate pair plays next, and what each played game means.

A *schedule* of :class:`arena.tables.runner.Runner` (docs/architecture.md
section 11), which plays the tables, owns the prune and hands every game to
the run's :class:`~arena.tables.ledger.Ledger` (the one stored-game guard).
What is the ladder's own here:

- which pair next: one left unfinished (its missing tables only), else a new
  pair picked among those the coordinator's *lineup* says may play (the
  active versions and :func:`arena.ladder.games.matchmaking.next_pairing`
  over the current standings; after the deadline the final versions and the
  final evaluation's order);
- every stored game into the standings' book, game by game, then to the
  coordinator (``stored``: the suspension rule), and every game in play to
  the spectators' hub (:class:`~arena.ladder.games.live.LiveGames`);
- a pair that met the Docker engine's outage is given its attempt back
  (:class:`~arena.ladder.common.engine_watch.EngineWatch`); one out of
  attempts is void, its stored half out of the ratings.

A pair is written as started (and its attempt counted) before it plays, each
game is stored as it ends, so after ``kill -9`` a pair left "playing" plays
only its missing table, on the same deal.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Callable, Mapping
from typing import Protocol

import trio

from arena.ladder.common.engine_watch import EngineWatch
from arena.ladder.common.table_settings import TableSettings
from arena.ladder.games.ids import CLUSTER_FORMAT, game_ids, pair_cluster, pair_of
from arena.ladder.games.live import LiveGames
from arena.ladder.games.matchmaking import Settings as MatchmakingSettings
from arena.ladder.games.matchmaking import Standing as MatchStanding
from arena.ladder.games.matchmaking import next_pairing
from arena.ladder.games.standings import Standing, StandingsBook
from arena.ladder.games.store import GameTables
from arena.ladder.versions.store import Version
from arena.match.seeds import bot_seed_key, derive_seed
from arena.referee.botspec import BotSpec
from arena.results.store import ResultsStore, StoredGame
from arena.tables.ledger import Ledger, Recorded
from arena.tables.pairs import PairBatch
from arena.tables.players import TablePlayer
from arena.tables.rows import GameSlot
from arena.tables.runner import Job
from arena.tables.spec import TableGame, TableResult

log = logging.getLogger("arena.ladder")

#: How often the loop looks for work when there is none (submissions, a resume, a stop).
IDLE_S = 0.5

#: How the next pairing is picked among the versions that may play: (their entries, the busy ones) -> a pair or None.
Picker = Callable[[list[str], set[str]], tuple[str, str] | None]


@dataclasses.dataclass(frozen=True)
class Lineup:
    """Who may play now, why a pair with any other side is abandoned, and how a new pair is picked.

    ``pick`` None: matchmaking's pick over the current standings (:meth:`PairSchedule.matchmaking_pick`).
    """

    versions: Mapping[str, Version]
    gone: str
    pick: Picker | None = None


class ScheduleSettings(TableSettings, Protocol):
    """What the schedule reads of the ladder's configuration (a ``LadderConfig`` is one)."""

    @property
    def matchmaking(self) -> MatchmakingSettings: ...


@dataclasses.dataclass
class PairSchedule:
    """The ladder's pairs for the run loop (see the module docstring); the coordinator composes it.

    ``lineup()``: who may play now (None: nothing starts: paused, frozen, or the engine down);
    ``standings()``: the standings as last published; ``stored(game)``: a game was stored;
    ``changed()``: something the site shows changed; ``pair_ended()``: a pair was stored or failed;
    ``tell(kind, text)``: a console line (``pair``, ``void``, ``failure``).
    """

    settings: ScheduleSettings
    results: ResultsStore
    ledger: Ledger
    player: TablePlayer
    book: StandingsBook
    live_games: LiveGames
    engine: EngineWatch
    run_id: str
    bot_of: Callable[[Version], BotSpec]
    lineup: Callable[[], Lineup | None]
    standings: Callable[[], tuple[Standing, ...]]
    stored: Callable[[StoredGame], None]
    changed: Callable[[], None]
    pair_ended: Callable[[], None]
    tell: Callable[[str, str], None]
    rng: random.Random = dataclasses.field(default_factory=random.Random)
    #: Pairs in play: seq -> (first, second).
    busy: dict[int, tuple[str, str]] = dataclasses.field(default_factory=dict)

    @property
    def secret(self) -> str:
        return self.results.secret

    # ------------------------------------------------------------ arena.tables.runner.Schedule

    def next_job(self, room: int) -> Job | None:
        """A pair left unfinished first (its missing tables), then a new pair; None if none fits in ``room``."""
        lineup = self.lineup()
        if lineup is None:
            return None
        active = lineup.versions
        for pair in self.ledger.unfinished_pairs():
            if pair.seq in self.busy:
                continue
            if pair.first not in active or pair.second not in active:
                self._abandon(pair.seq, lineup.gone)
                continue
            job = self._job(pair.seq, active[pair.first], active[pair.second], room)
            if job is not None:
                return job
        if room < 2 or len(active) < 2:
            return None
        pairing = (lineup.pick or self.matchmaking_pick)(list(active), self.busy_versions())
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
            self.tell("void", f"game {game.game_id} void ({recorded.void}): played again")
        if recorded.row is None:
            return
        self.book.add(recorded.row)
        self.stored(recorded.row)

    def job_done(self, job: Job, results: Mapping[int, TableResult], stopped: bool) -> None:
        seq = pair_of(job.key)
        a, b = self.busy.pop(seq, ("?", "?"))
        for game_id in job.slots:  # a game not stored (stopped, failed) leaves the live list too
            self.live_games.finish(game_id, replay=False)
        if stopped:
            self.ledger.stopped(seq)  # stopped on purpose: that start does not count; played again on restart
            self.changed()
            return
        ids = game_ids(seq)
        missing = self.ledger.missing_tables(ids)
        errors = [r.error for r in results.values() if r.error is not None]
        in_docker = any(spec.uses_docker for spec in job.tables.values())  # (tests may seat local bots)
        if missing and in_docker and self.engine.outage(errors):  # the platform's outage: its attempt given back
            self.ledger.stopped(seq)
            self.engine.failed(errors[0])
            self.tell("pair", f"pair {seq} ({a} vs {b}) waits for the Docker engine")
            self.changed()
            return
        if not missing:
            self.ledger.finish_pair(seq)
            stored = [self.results.game(g) for g in ids]
            score = " ".join(f"{g.score0}:{g.score1}" for g in stored if g is not None)
            self.tell("pair", f"pair {seq} stored: {a} vs {b} {score}")
        else:
            why = errors[0] if errors else "a game was void"
            self.ledger.failed(seq, why)
            self.tell("failure", f"pair {seq} ({a} vs {b}): table {missing[0]} not stored ({why}); played again")
        self.changed()
        self.pair_ended()

    def done(self) -> bool:
        return False  # a ladder plays until it is stopped (a frozen one serves its final table)

    async def idle(self) -> bool:
        await trio.sleep(IDLE_S)
        return True

    def job_failed(self, job: Job, exc: BaseException) -> None:
        """The ladder's own code failed for one pair: told, the pair played again (its attempts bound it).

        A store error here (the failure cannot even be noted) ends the run: the loop stops with its line.
        """
        seq = pair_of(job.key)
        self.busy.pop(seq, None)
        for game_id in job.slots:
            self.live_games.finish(game_id, replay=False)
        log.error("pair %s failed", seq, exc_info=exc)
        self.tell("failure", f"pair {seq} failed: {type(exc).__name__}: {exc}")
        self.ledger.failed(seq, f"{type(exc).__name__}: {exc}")
        self.changed()

    # ------------------------------------------------------------ pairs

    def busy_versions(self) -> set[str]:
        """The versions playing a pair now (a version plays one pair at a time)."""
        return {name for pair in self.busy.values() for name in pair}

    def matchmaking_pick(self, active: list[str], busy: set[str]) -> tuple[str, str] | None:
        """Matchmaking's next pairing among the active versions (its order is the pair's: sorted)."""
        rated = {s.entry: s for s in self.standings()}
        pool = []
        for name in active:
            s = rated.get(name)
            if s is None or s.elo is None:
                pool.append(MatchStanding(name, 1500.0, float("-inf"), float("inf"), s.pairs if s else 0))
            else:
                low = s.low if s.low is not None else float("-inf")  # no interval: not settled
                high = s.high if s.high is not None else float("inf")
                pool.append(MatchStanding(name, s.elo, low, high, s.pairs))
        pairing = next_pairing(pool, self.book.pairs_played(), busy, self.rng, self.settings.matchmaking)
        if pairing is None:
            return None
        a, b = sorted(pairing)
        return a, b

    def _abandon(self, seq: int, reason: str) -> None:
        self.ledger.abandon_pair(seq, reason)
        self.book.exclude_cluster(pair_cluster(seq))
        self.tell("void", f"pair {seq} abandoned: {reason}")

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
            self.tell("void", f"pair {seq} ({a} vs {b}) void: {pair.reason if pair else ''}")
            return None
        again = "" if missing == (1, 2) else f" (table {missing[0]} again)"
        self.tell("pair", f"pair {seq}: {a} vs {b}{again}, attempt {attempt.attempts}")
        batch = self._batch(seq, first, second)
        slots = {}
        for table, game_id in enumerate(ids, 1):
            side0, side1 = (a, b) if table == 1 else (b, a)
            slots[game_id] = GameSlot(game_id, seq, seq, table, pair_cluster(seq), side0, side1, batch.deal_seeds[0])
        self.busy[seq] = (a, b)
        live = bool(getattr(self.player, "local", False))  # spectators see local tables (not a cluster's)
        for n in missing:
            self.live_games.start(ids[n - 1], (a, b) if n == 1 else (b, a))
        self.changed()
        return Job(
            key=pair_cluster(seq),
            tables={n: dataclasses.replace(batch.table(n, local=self.player.local), live=live) for n in missing},
            slots=slots,
            images={a: first.image_id, b: second.image_id},
            log_dirs={n: batch.table_log_dir(n) for n in missing},
        )

    def _batch(self, seq: int, first: Version, second: Version) -> PairBatch:
        settings = self.settings
        ids = game_ids(seq)
        return PairBatch(
            batch_id=f"{self.run_id}/{pair_cluster(seq)}",
            pairs=(seq,),
            deal_seeds=(derive_seed(self.secret, "ladder", seq),),
            game_ids=((ids[0],), (ids[1],)),
            new=self.bot_of(first),
            old=self.bot_of(second),
            names=(first.entry, second.entry),
            rules=settings.rules,
            time_control=settings.time_control,
            log_dir=settings.directory / "logs",
            run_id=self.run_id,
            images=(first.image_id, second.image_id),
            limits=settings.limits,
            start_timeout=settings.start_timeout,
            bot_seed_key=bot_seed_key(self.secret),
        )


def move_legacy_pairs(store: GameTables, results: ResultsStore) -> None:
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


__all__ = ["IDLE_S", "Lineup", "PairSchedule", "Picker", "ScheduleSettings", "move_legacy_pairs"]
