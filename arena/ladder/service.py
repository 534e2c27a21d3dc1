"""The ladder loop: build what teams submit, and keep playing duplicate pairs between active versions.

It runs under trio in ``arena ladder serve`` (the web site runs beside it, in
another thread) as a *schedule* of the run loop (:class:`arena.tables.runner.Runner`),
which plays the tables, owns the prune and hands every game to the run's
:class:`~arena.tables.ledger.Ledger` (the one stored-game guard: a game stored
once is never written again).  This task, the coordinator, is the only writer
of the games and pairs, and every version status goes through the store's
compare-and-set :meth:`~arena.ladder.versions.store.VersionTables.transition`.

:class:`LadderService` only composes the packages' parts, one job each:

- the schedule (:class:`arena.ladder.games.schedule.PairSchedule`): which pair
  next, what a stored game means, the standings kept game by game
  (:class:`~arena.ladder.games.standings.StandingsBook`);
- the calendar's steps (:class:`arena.ladder.course.evaluation.FinalEvaluation`):
  the phase, asked of the clock before every pick; after the deadline only the
  final versions play, then the final table is stored and nothing more plays;
- the suspension rule (:class:`arena.ladder.versions.suspension.Suspension`);
- builds, as side work of the loop (:class:`~arena.ladder.versions.build_queue.BuildQueue`);
- the Docker engine's outages (:class:`~arena.ladder.common.engine_watch.EngineWatch`);
- the state for the site (:meth:`LadderService.refresh`: the listed versions'
  standings, pairs in play, the build running, the engine), with a history
  row per rated version after every pair.

It survives ``kill -9`` at any moment: a pair is written as started (and its
attempt counted) before it plays, each game is stored as it ends, so on
restart a pair left "playing" plays only its missing table, on the same deal,
and builds left half-done are built again.
"""

from __future__ import annotations

import dataclasses
import json
import random
import threading
from collections.abc import Callable, Mapping

from arena.ladder.common.engine_watch import CHECK_S, EngineWatch
from arena.ladder.config import LadderConfig
from arena.ladder.course.calendar import FINAL, FROZEN, Clock, utc_now
from arena.ladder.course.evaluation import FinalEvaluation
from arena.ladder.games.leaderboard import ladder_book
from arena.ladder.games.live import LiveGames
from arena.ladder.games.schedule import IDLE_S, Lineup, PairSchedule, move_legacy_pairs
from arena.ladder.games.state import LadderState
from arena.ladder.store import LadderStore
from arena.ladder.versions.build_queue import BuildQueue
from arena.ladder.versions.store import Version
from arena.ladder.versions.suspension import Suspension
from arena.referee.botspec import BotSpec
from arena.results.store import ResultsStore, StoredGame
from arena.storage.sqlite import StoreError
from arena.sandbox.docker import RUN_LABEL
from arena.sandbox.engine_probe import prober
from arena.tables.containers import prune_run
from arena.tables.ledger import Ledger, Recorded
from arena.tables.players import TablePlayer
from arena.tables.runner import Job, Runner
from arena.tables.spec import TableGame, TableResult

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
        self.config, self.store, self.results, self.player = config, store, results, player
        self.on_change, self.on_event = on_change, on_event
        self.ladder_id = store.meta()["ladder_id"]
        self.ledger = Ledger(results, config.directory, ruleset_hash=config.rules.hash)
        self.stop = threading.Event()
        #: The games in play as spectators see them (arena.ladder.games.live): the site reads it through the state.
        self.live_games = LiveGames(config.rules.players, self.stop)
        self.state = LadderState(live=self.live_games)
        move_legacy_pairs(store, results)
        stored = results.games_in_write_order()
        self.book = ladder_book(store, results, stored)
        self.engine = self._engine_watch()
        self.builds = self._build_queue(builders)
        self.suspension = Suspension(store, config.suspend_after, lambda text: self._tell("suspend", text))
        self.evaluation = FinalEvaluation(
            store, config.calendar, clock, self.book, standings=lambda: self.state.standings, refresh=self.refresh,
            tell=lambda text: self._tell("phase", text),
        )  # fmt: skip
        self.schedule = PairSchedule(
            settings=config, results=results, ledger=self.ledger, player=player, book=self.book,
            live_games=self.live_games, engine=self.engine, run_id=self.run_id,
            # How a version's seats are started: its image (tests may play local bots instead).
            bot_of=bot_of or (lambda version: BotSpec("docker", version.image_id or "")),
            lineup=self._lineup, standings=lambda: self.state.standings, stored=self._stored,
            changed=self.refresh, pair_ended=self._record_history, tell=self._tell, rng=rng or random.Random(),
        )  # fmt: skip
        for game in stored:
            self.suspension.count(game)
        self.refresh()
        self.advance()

    def _engine_watch(self) -> EngineWatch:
        """Whether the Docker engine starts containers (arena.ladder.common.engine_watch): nothing starts while it cannot."""
        return EngineWatch(
            lambda text: self._tell("failure", text),
            probe=prober(self.config.submissions.base_image, labels={RUN_LABEL: self.run_id}),
            background=True, check_every=CHECK_S, changed=lambda: self.refresh(),
        )  # fmt: skip

    def _build_queue(self, builders: int) -> BuildQueue:
        return BuildQueue(
            self.config, self.store, ladder_id=self.ladder_id, run_id=self.run_id, stop=self.stop, builders=builders,
            activate=lambda version: self.store.activate(version, self.ratings()),
            tell=lambda text: self._tell("build", text), changed=self.refresh, engine=self.engine,
        )  # fmt: skip

    @property
    def run_id(self) -> str:
        """The label of every container this ladder starts (tables and validations): the prune finds them."""
        return f"ladder-{self.ladder_id}"

    @property
    def phase(self) -> str | None:
        """The calendar's phase last seen (None before the first look)."""
        return self.evaluation.phase

    @property
    def final_entries(self) -> list[str] | None:
        """The final versions' entries once fixed at the deadline."""
        return self.evaluation.final_entries

    def _tell(self, kind: str, text: str) -> None:
        self.on_event(LadderEvent(kind, text))

    # ------------------------------------------------------------ the state for the site

    def listed(self) -> list[str]:
        """The versions the standings list: the final ones once the final evaluation began, else the active ones."""
        final = self.evaluation.listed()
        return final if final is not None else [v.entry for v in self.store.active_versions()]

    def refresh(self) -> None:
        """The standings of the listed versions, from the book (no refit from the stores), published to the site."""
        rows = self.book.standings(self.listed())
        self.evaluation.show_live(rows)  # the final table as it stands, during the final evaluation
        building = ", ".join(sorted(self.builds.building.values())) or None
        engine = self.engine.reason if self.engine.down else None
        in_play = tuple(self.schedule.busy.values())
        self.state = LadderState(tuple(rows), in_play, building, live=self.live_games, engine_down=engine)
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
            self.store.queue_again(version)  # built again (MAX_BUILD_ATTEMPTS counts the tries)
        runner = Runner(
            self, self.ledger, self.player, capacity=2 * self.config.concurrency, stop=self.stop,
            prune=lambda: prune_run(self.run_id), poll_s=IDLE_S, side=(self.builds.run,),
            on_error=self.schedule.job_failed, watch_signals=False, side_grace_s=STOP_GRACE_S,
        )  # fmt: skip
        try:
            await runner.run()
        except StoreError as exc:
            self._tell("failure", f"{exc}; the ladder stops")
            raise
        finally:
            self.live_games.close()
            self.close()
        self._tell("stop", "stopped: what is stored is kept; pairs cut short play their missing table on restart")

    def close(self) -> None:
        """Close the loop's own connections (the stores it was given are its caller's to close)."""
        self.evaluation.close()

    def advance(self) -> str:
        """The phase now, by the clock; every step into it taken once (:meth:`FinalEvaluation.advance`)."""
        return self.evaluation.advance()

    def _lineup(self) -> Lineup | None:
        """Who may play now: None while paused, frozen or the engine is down; the final versions after the deadline."""
        current = self.advance()
        if self.store.paused or current == FROZEN or not self.engine.ready():
            return None
        if current == FINAL:
            return Lineup(self.evaluation.final_versions(), "not a final version (the deadline passed)",
                          self.evaluation.pick)  # fmt: skip
        return Lineup({v.entry: v for v in self.store.active_versions()}, "a side is no longer active")

    def _stored(self, game: StoredGame) -> None:
        """A game was stored (and counted in the standings): the suspension rule sees it."""
        self.suspension.count(game)
        self.suspension.check(game)

    # ------------------------------------------------------------ the run loop's schedule: the pairs'

    def next_job(self, room: int) -> Job | None:
        """A pair left unfinished first (its missing tables), then a new pair (:class:`PairSchedule`)."""
        return self.schedule.next_job(room)

    def live(self, game_id: str, to_move: int, view: bytes) -> None:
        self.schedule.live(game_id, to_move, view)

    def recorded(self, job: Job, table: int, game: TableGame, recorded: Recorded) -> None:
        self.schedule.recorded(job, table, game, recorded)

    def job_done(self, job: Job, results: Mapping[int, TableResult], stopped: bool) -> None:
        self.schedule.job_done(job, results, stopped)

    def done(self) -> bool:
        return self.schedule.done()

    async def idle(self) -> bool:
        return await self.schedule.idle()


def open_results(config: LadderConfig, ladder_id: str) -> ResultsStore:
    """The ladder's games store, bound to its ruleset (the tournament store's format: ``arena ratings`` reads it)."""
    store = ResultsStore(config.results_path)
    store.claim(f"ladder:{ladder_id}", config.name, config.rules.hash, json.dumps(config.rules.to_dict()))
    return store


__all__ = ["LadderEvent", "LadderService", "open_results"]
