"""The ladder loop: build what teams submit, and keep playing duplicate pairs between active versions.

It runs under trio in ``arena ladder serve`` (the web site runs beside it, in
another thread, on the same two SQLite files).  Everything about playing is
the table kernel's: a pair is a :class:`~arena.tables.pairs.PairBatch` (one
deal at two tables, partnerships swapped) played by a table player (table
processes here, or a Dask cluster), and each game is stored with
:func:`~arena.tables.rows.store_played` as it ends.  What is the ladder's own:

- which pairing next: :func:`arena.ladder.matchmaking.next_pairing` over the
  current standings (new versions first, then where the order is least certain);
- builds, one at a time, in a worker thread (:mod:`arena.ladder.builds`);
- the standings, refitted after every pair, with a history row per version.

It survives ``kill -9`` at any moment: a pair is written as started before it
plays and each game is stored as it ends, so on restart the pairs left
"playing" are played again (the stored half is kept, the missing half is
played on the same deal), and builds left half-done are built again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import random
import threading
from collections.abc import Callable, Mapping
from typing import Any

import trio

from arena.ladder.builds import MAX_ATTEMPTS, BuildCancelled, build_and_validate
from arena.ladder.config import LadderConfig
from arena.ladder.matchmaking import Standing as MatchStanding
from arena.ladder.matchmaking import next_pairing
from arena.ladder.standings import Standing, standings
from arena.ladder.store import ACTIVE, BUILDING, FAILED, QUEUED, VALIDATING, LadderStore, Version
from arena.match.seeds import bot_seed_key, derive_seed
from arena.referee.botspec import BotSpec
from arena.results.store import ResultsStore, StoredGame
from arena.sandbox.build import LOG_KEEP_CHARS
from arena.tables.containers import prune_run
from arena.tables.pairs import PairBatch, play_pairs
from arena.tables.players import TablePlayer
from arena.tables.rows import GameSlot, store_played
from arena.tables.spec import TableGame

log = logging.getLogger("arena.ladder")

#: How often the loop looks for work when there is none (submissions, a resume, a stop).
IDLE_S = 0.5
#: Seconds the server waits, when it stops, for a cancelled build or validation to end.
BUILD_STOP_S = 30.0
#: Times a pair is started before it is given up (its games void: the platform kept failing).
MAX_PAIR_ATTEMPTS = 3


@dataclasses.dataclass
class LadderState:
    """What the web site shows while the loop runs (read from another thread: replaced whole, never mutated)."""

    standings: tuple[Standing, ...] = ()
    in_play: tuple[tuple[str, str], ...] = ()
    building: str | None = None


def game_ids(seq: int) -> tuple[str, str]:
    return f"L{seq:07d}-t1", f"L{seq:07d}-t2"


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
    ) -> None:
        self.config = config
        self.store = store
        self.results = results
        self.player = player
        self.rng = rng or random.Random()
        self.on_change = on_change
        meta = store.meta()
        self.ladder_id = meta["ladder_id"]
        self.secret = results.secret
        self.stop = threading.Event()
        self.busy: dict[int, tuple[str, str]] = {}
        self.attempts: dict[int, int] = {}
        self.retry: list[tuple[int, str, str]] = []
        self.building: str | None = None
        #: The id of the version being built (set back to queued if the server stops meanwhile).
        self.building_version: int | None = None
        #: Set when the server stops: the build or validation in flight ends within seconds.
        self.build_cancel = threading.Event()
        self.state = LadderState()
        self.games: list[StoredGame] = []
        self.refresh()

    # ------------------------------------------------------------ standings

    def refresh(self) -> None:
        """Refit the standings from the stored games of the active versions."""
        active = [v.entry for v in self.store.active_versions()]
        start = {s.entry: s.elo for s in self.state.standings if s.elo is not None}
        self.games = self.results.games()  # read once per refresh: the standings and _played use it
        rows = standings(self.games, active, start=start)
        self.state = LadderState(tuple(rows), tuple(self.busy.values()), self.building)
        self.on_change(self.state)

    def ratings(self) -> dict[str, tuple[float, float, float, int]]:
        """Each rated active version's (elo, low, high, pairs): a retiring version keeps these."""
        return {
            s.entry: (s.elo, s.low, s.high, s.pairs)  # type: ignore[misc]
            for s in self.state.standings
            if s.elo is not None
        }

    # ------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Play and build until :attr:`stop` is set; then stop the tables (their bots are removed)."""
        for version in self.store.interrupted_builds():
            self.store.set_status(version.id, QUEUED)  # built again (MAX_ATTEMPTS counts the tries)
        self.retry = list(self.store.unfinished_pairs())
        await trio.to_thread.run_sync(prune_run, self.run_id)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._builds)
            try:
                while not self.stop.is_set():
                    started = False
                    if not self.store.paused:
                        while len(self.busy) < self.config.concurrency and not self.stop.is_set():
                            job = self._next_pair()
                            if job is None:
                                break
                            seq, a, b = job
                            self.busy[seq] = (a, b)
                            nursery.start_soon(self._play, seq, a, b)
                            started = True
                    if started:
                        self.refresh()
                    await trio.sleep(IDLE_S)
            finally:
                self.stop.set()
                with trio.CancelScope(shield=True):
                    # The tables stop at once (their bots are stopped and removed); a build or a
                    # validation is cancelled (its containers removed) and built again next time.
                    self.build_cancel.set()
                    while self.busy:
                        await trio.sleep(0.1)
                    with trio.move_on_after(BUILD_STOP_S):
                        while self.building_version is not None:
                            await trio.sleep(0.1)
                    building = self.building_version
                    if building is not None:
                        self.store.set_status(building, QUEUED)
                    await trio.to_thread.run_sync(prune_run, self.run_id)
                nursery.cancel_scope.cancel()

    @property
    def run_id(self) -> str:
        return f"ladder-{self.ladder_id}"

    def _next_pair(self) -> tuple[int, str, str] | None:
        active = {v.entry: v for v in self.store.active_versions()}
        while self.retry:
            seq, a, b = self.retry.pop(0)
            if a in active and b in active and seq not in self.busy:
                return seq, a, b
            self.store.finish_pair(seq, "abandoned")  # a side retired or was disabled meanwhile
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
        pairing = next_pairing(pool, self._played(), busy, self.rng, self.config.matchmaking)
        if pairing is None:
            return None
        a, b = sorted(pairing)
        return self.store.start_pair(a, b), a, b

    def _played(self) -> dict[frozenset[str], int]:
        counts: dict[frozenset[str], int] = {}
        seen: set[str] = set()
        for g in self.games:
            if g.cluster in seen:
                continue
            seen.add(g.cluster)
            key = frozenset((g.side0, g.side1))
            counts[key] = counts.get(key, 0) + 1
        return counts

    async def _play(self, seq: int, a: str, b: str) -> None:
        try:
            versions = {v.entry: v for v in self.store.active_versions()}
            if a not in versions or b not in versions:
                self.store.finish_pair(seq, "abandoned")
                return
            batch = self._batch(seq, versions[a], versions[b])
            await play_pairs(batch, lambda table, game: self._store(seq, batch, table, game), self.stop, self.player)
            if self.stop.is_set():
                return  # stopped on purpose: the pair stays "playing" and is played again on restart
            stored = self.results.finished_ids()
            if all(g in stored for g in game_ids(seq)):
                self.store.finish_pair(seq)
            else:
                self.attempts[seq] = self.attempts.get(seq, 0) + 1
                if self.attempts[seq] >= MAX_PAIR_ATTEMPTS:
                    self.store.finish_pair(seq, "void")
                else:
                    self.retry.append((seq, a, b))
        except Exception:  # noqa: BLE001 - one pair's failure must not stop the ladder
            log.exception("pair %s failed", seq)
            self.retry.append((seq, a, b))
        finally:
            self.busy.pop(seq, None)
            self.refresh()
            self._record_history()

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

    def _store(self, seq: int, batch: PairBatch, table: int, game: TableGame) -> None:
        first, second = batch.names
        side0, side1 = (first, second) if table == 1 else (second, first)
        if game.void is not None:
            self.results.record_void(game.game_id, game.void)
            return
        slot = GameSlot(game.game_id, seq, seq, table, f"L{seq:07d}", side0, side1, batch.deal_seeds[0])
        images = {first: batch.images[0], second: batch.images[1]}
        store_played(
            self.results, self.config.directory, slot, game, ruleset_hash=self.config.rules.hash, images=images
        )

    # ------------------------------------------------------------ builds

    async def _builds(self) -> None:
        """Build queued versions one at a time, oldest first (the worker builds; this task writes the store)."""
        while not self.stop.is_set():
            queued = self.store.versions(status=QUEUED)
            if not queued:
                await trio.sleep(IDLE_S)
                continue
            version = min(queued, key=lambda v: v.id)
            attempts = version.attempts + 1
            if attempts > MAX_ATTEMPTS:
                given_up = f"\nbuild given up after {MAX_ATTEMPTS} attempts (the server stopped during each)\n"
                self.store.set_status(version.id, FAILED, build_log=(version.build_log + given_up)[-LOG_KEEP_CHARS:])
                continue
            self.store.set_status(version.id, BUILDING, attempts=attempts)
            self.building = version.entry
            self.building_version = version.id
            self.refresh()

            def on_phase(phase: str, info: Mapping[str, Any], version_id: int = version.id) -> None:
                with contextlib.suppress(trio.RunFinishedError, trio.Cancelled):  # the server is stopping
                    trio.from_thread.run_sync(
                        lambda: self.store.set_status(version_id, VALIDATING, image_id=info["image_id"], build_log=info["build_log"])
                    )

            try:
                outcome = await trio.to_thread.run_sync(
                    functools.partial(
                        build_and_validate, self.config, version, ladder_id=self.ladder_id, run_id=self.run_id,
                        on_phase=on_phase, cancel=self.build_cancel,
                    ),
                    abandon_on_cancel=True,
                )  # fmt: skip
                if outcome.passed:
                    self.store.set_status(version.id, VALIDATING, validation_log=outcome.validation_log)
                    self.store.activate(version, self.ratings())
                else:
                    self.store.set_status(version.id, FAILED, image_id=outcome.image_id, build_log=outcome.build_log,
                                          validation_log=outcome.validation_log)  # fmt: skip
                log.info("version %s: %s", version.entry, "active" if outcome.passed else outcome.reason)
            except BuildCancelled:
                self.store.set_status(version.id, QUEUED)  # the server is stopping: built again next time
            except Exception:  # noqa: BLE001 - a build that breaks must not stop the ladder
                log.exception("building %s failed", version.entry)
                with contextlib.suppress(Exception):
                    self.store.set_status(version.id, "failed", build_log="the build failed inside the server; see its log")
            finally:
                self.building = None
                self.building_version = None
                self.refresh()


def open_results(config: LadderConfig, ladder_id: str) -> ResultsStore:
    """The ladder's games store, bound to its ruleset (the tournament store's format: ``arena ratings`` reads it)."""
    store = ResultsStore(config.results_path)
    store.claim(f"ladder:{ladder_id}", config.name, config.rules.hash, json.dumps(config.rules.to_dict()))
    return store


def active_entries(store: LadderStore) -> list[str]:
    return [v.entry for v in store.active_versions() if v.status == ACTIVE]


__all__ = ["LadderService", "LadderState", "active_entries", "game_ids", "open_results"]
