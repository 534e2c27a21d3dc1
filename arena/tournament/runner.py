"""Run a tournament: tables in parallel under a concurrency limit, resumable.

Orchestration is trio; each table (a match with fixed seats) runs its gRPC
referee and match loop on its own asyncio event loop in a worker thread, and
meets the scheduler once per game (to store the result) — never once per
decision.  Results go to SQLite as games finish, so a run stopped at any point
(Ctrl-C, SIGTERM, even SIGKILL) resumes by playing only the missing games.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import json
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import trio

from arena.match import GameOutcome, MatchSpec
from arena.match.output import write_record
from arena.referee.local_match import play_seated
from arena.sandbox.docker import DockerUnavailable, docker_client, image_id, prune
from arena.tournament.config import Entry, TournamentConfig
from arena.tournament.schedule import ScheduledGame, Table, schedule, tables
from arena.tournament.store import GameRow, ResultsStore, StoreError, now, storage_error
from arena_sdk import __version__ as SDK_VERSION
from arena_sdk.engine import ENGINE_VERSION, team_of

#: Ending stored for the games a disqualified entry no longer plays.
DISQUALIFIED = "forfeit:disqualified"
#: Before replaying voided games, how long to wait for a Docker engine that
#: does not answer (it was restarted): retries spent while it is down are lost.
DOCKER_WAIT_S = 300.0


@dataclasses.dataclass
class RunReport:
    """What a run did."""

    total: int
    already_done: int
    played: int
    voided: int
    interrupted: bool
    unfinished: list[str]


@dataclasses.dataclass
class Progress:
    """Callbacks the CLI uses to show progress (all called on the trio thread)."""

    on_start: Callable[[int, int], None] = lambda total, done: None
    on_game: Callable[[GameRow], None] = lambda row: None
    on_void: Callable[[str, str], None] = lambda game_id, reason: None


def store_path(config: TournamentConfig) -> Path:
    return config.output / "results.sqlite"


def open_store(config: TournamentConfig) -> ResultsStore:
    """The tournament's store, bound to this file (refuses another file's store)."""
    store = ResultsStore(store_path(config))
    store.claim(config.file_hash, config.name, config.rules.hash, json.dumps(config.rules.to_dict()))
    return store


def run_tournament(config: TournamentConfig, progress: Progress | None = None) -> RunReport:
    """Play every missing game of the tournament; returns when done or interrupted."""
    store = open_store(config)
    try:
        return trio.run(_run, config, store, progress or Progress())
    finally:
        store.close()


def _images(config: TournamentConfig) -> dict[str, str | None]:
    """Each entry's image ID (provenance), None for local commands."""
    ids: dict[str, str | None] = {e.name: None for e in config.entries}
    docker_entries = [e for e in config.entries if e.bot.kind == "docker"]
    if docker_entries:
        client = docker_client()
        # Leftovers of an earlier run that was killed: remove them before resuming.
        prune(client, f"{config.name}/", include_running=True)
        for entry in docker_entries:
            ids[entry.name] = image_id(client, entry.bot.target)
    return ids


async def _run(config: TournamentConfig, store: ResultsStore, progress: Progress) -> RunReport:
    games = schedule(config)
    by_id = {g.game_id: g for g in games}
    images = await trio.to_thread.run_sync(_images, config)
    entries = {e.name: e for e in config.entries}
    done_before = store.finished_ids()
    progress.on_start(len(games), len(done_before & set(by_id)))
    stop = threading.Event()
    state = {"played": 0, "voided": 0}
    #: A write that cannot be made (disk full): the run stops and raises it.
    fatal: list[StoreError] = []
    uses_docker = any(e.bot.kind == "docker" for e in config.entries)

    def store_outcome(game: ScheduledGame, outcome: GameOutcome) -> None:
        if outcome.void is not None:
            store.record_void(game.game_id, f"{outcome.ending}: {outcome.void.get('detail', '')}")
            state["voided"] += 1
            progress.on_void(game.game_id, outcome.ending)
            return
        row = _row(config, game, outcome, images)
        store.record_game(row)
        state["played"] += 1
        progress.on_game(row)
        # Disqualify as soon as an entry is over the share: its tables not yet
        # started are skipped (and stored as forfeits at the end of the round).
        _mark_disqualified(config, store, (game.side0, game.side1))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch_signals, stop, nursery.cancel_scope)
        try:
            for round_no in range(config.faults.void_retries + 1):
                pending = _pending(games, store, config)
                if not pending or stop.is_set() or fatal:
                    break
                if round_no > 0 and uses_docker:
                    # Replaying voids: the engine may be restarting; leftovers of voided tables go.
                    await trio.to_thread.run_sync(_docker_back, config, stop)
                _apply_disqualifications(config, store, by_id, images, progress)
                pending = _pending(games, store, config)
                limiter = trio.CapacityLimiter(config.concurrency)
                async with trio.open_nursery() as tables_nursery:
                    for table in tables(pending):
                        # start() returns once the table holds a slot: tables start in
                        # schedule order (trio runs new tasks in no fixed order), so the
                        # two tables of a pairing play at the same time.
                        await tables_nursery.start(
                            _run_table, config, table, entries, limiter, stop, store_outcome, store, fatal
                        )
                if fatal:
                    break
                _apply_disqualifications(config, store, by_id, images, progress)
        except StoreError as exc:
            fatal.append(exc)
        nursery.cancel_scope.cancel()
    if uses_docker:
        await trio.to_thread.run_sync(_prune_leftovers, config)
    if fatal:
        raise fatal[0]
    unfinished = sorted(set(by_id) - store.finished_ids())
    return RunReport(
        total=len(games),
        already_done=len(done_before & set(by_id)),
        played=state["played"],
        voided=state["voided"],
        interrupted=stop.is_set(),
        unfinished=unfinished,
    )


def _pending(games: list[ScheduledGame], store: ResultsStore, config: TournamentConfig) -> list[ScheduledGame]:
    """Games not yet stored and not out of void retries."""
    done = store.finished_ids()
    voids = store.void_attempts()
    return [
        g for g in games
        if g.game_id not in done and voids.get(g.game_id, 0) <= config.faults.void_retries
    ]  # fmt: skip


def _prune_leftovers(config: TournamentConfig) -> None:
    """Remove this tournament's containers (no table is running): those a failed daemon left."""
    with contextlib.suppress(Exception):
        prune(docker_client(), f"{config.name}/", include_running=True)


def _docker_back(config: TournamentConfig, stop: threading.Event) -> None:
    """Wait (at most ``DOCKER_WAIT_S``) for the Docker engine to answer, then prune leftovers."""
    deadline = time.monotonic() + DOCKER_WAIT_S
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            docker_client().close()
            break
        except DockerUnavailable:
            time.sleep(0.5)
    _prune_leftovers(config)


def _storage_failure(exc: BaseException, where: Path) -> StoreError | None:
    """The error to stop the run with if ``exc`` is a write the output's disk cannot take."""
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return storage_error(exc, where)
    return None


async def _watch_signals(stop: threading.Event, scope: trio.CancelScope) -> None:
    """Ctrl-C or SIGTERM: stop starting tables, let running ones clean up."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            stop.set()
            return


async def _run_table(
    config: TournamentConfig,
    table: Table,
    entries: dict[str, Entry],
    limiter: trio.CapacityLimiter,
    stop: threading.Event,
    store_outcome: Callable[[ScheduledGame, GameOutcome], None],
    store: ResultsStore,
    fatal: list[StoreError],
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    async with limiter:
        task_status.started()
        if stop.is_set():
            return
        disqualified = store.disqualified()
        if table.side0 in disqualified or table.side1 in disqualified:
            return  # recorded as forfeits by _apply_disqualifications
        games = {g.game_id: g for g in table.games}

        def on_game(outcome: GameOutcome) -> None:  # runs in the table's thread
            records = config.output / "records"
            try:
                write_record(records, outcome)  # first the record, then the row that points to it
            except OSError as exc:
                raise storage_error(exc, records) from None
            trio.from_thread.run_sync(store_outcome, games[outcome.game_id], outcome)

        try:
            try:
                await trio.to_thread.run_sync(_play_table_blocking, config, table, entries, stop, on_game)
            except Exception as exc:
                if _storage_failure(exc, config.output) is not None:
                    raise
                # The platform failed for the whole table: void what is left.
                finished = store.finished_ids()
                for game in table.games:
                    if game.game_id not in finished:
                        store.record_void(game.game_id, f"void:platform: {type(exc).__name__}: {exc}")
        except Exception as exc:
            failure = _storage_failure(exc, config.output)
            if failure is None:
                raise
            # The results cannot be written: stop every table (their games in
            # progress are not stored and will be played on resume).
            fatal.append(failure)
            stop.set()


def _play_table_blocking(
    config: TournamentConfig,
    table: Table,
    entries: dict[str, Entry],
    stop: threading.Event,
    on_game: Callable[[GameOutcome], None],
) -> None:
    """Play one table on a fresh asyncio loop in this worker thread."""
    asyncio.run(_play_table(config, table, entries, stop, on_game))


async def _play_table(
    config: TournamentConfig,
    table: Table,
    entries: dict[str, Entry],
    stop: threading.Event,
    on_game: Callable[[GameOutcome], None],
) -> None:
    n = config.rules.players
    sides = (entries[table.side0].bot, entries[table.side1].bot)
    seat_bots = [sides[team_of(n, s)] for s in range(n)]
    spec = MatchSpec(
        match_id=f"{config.name}/{table.table_id}",
        rules=config.rules,
        deal_seeds=tuple(g.deal_seed for g in table.games),
        time_control=config.time_control,
        game_ids=tuple(g.game_id for g in table.games),
    )
    play = asyncio.ensure_future(
        play_seated(
            spec, seat_bots,
            log_dir=config.output / "logs" / table.table_id, limits=config.limits,
            start_timeout=config.start_timeout, on_game_end=on_game,
        )  # fmt: skip
    )
    while not play.done():
        if stop.is_set():
            play.cancel()  # host_match stops and removes the bots on the way out
            with contextlib.suppress(asyncio.CancelledError):
                await play
            return
        await asyncio.wait({play}, timeout=0.1)
    play.result()


def _row(config: TournamentConfig, game: ScheduledGame, outcome: GameOutcome, images: dict[str, str | None]) -> GameRow:
    n = config.rules.players
    sides = (game.side0, game.side1)
    forfeit = outcome.forfeit
    forfeit_entry = None
    if forfeit is not None:
        teams = forfeit["teams"]
        names = [sides[0] if t in ("NS", "A") else sides[1] for t in teams]
        forfeit_entry = ",".join(names)
    strikes = [0, 0]
    for s, st in enumerate(outcome.stats):
        strikes[team_of(n, s)] += st.strikes
    return GameRow(
        game_id=game.game_id,
        pairing=game.pairing,
        deal=game.deal,
        table_no=game.table,
        cluster=game.cluster,
        side0=game.side0,
        side1=game.side1,
        deal_seed=game.deal_seed,
        ending=outcome.ending,
        winner=None if outcome.winner is None else sides[outcome.winner],
        score0=outcome.result.scores[0],
        score1=outcome.result.scores[1],
        hands=outcome.result.hands,
        forfeit_entry=forfeit_entry,
        forfeit_reason=None if forfeit is None else forfeit["reason"],
        forfeit_detail=None if forfeit is None else str(forfeit.get("detail", ""))[:500],
        strikes0=strikes[0],
        strikes1=strikes[1],
        decisions=sum(st.decisions for st in outcome.stats),
        think_seconds=round(sum(st.think_s for st in outcome.stats), 6),
        ruleset_hash=config.rules.hash,
        engine_version=ENGINE_VERSION,
        sdk_version=SDK_VERSION,
        image0=images.get(game.side0),
        image1=images.get(game.side1),
        record=f"records/{game.game_id}.json",
        finished_at=now(),
    )


def _mark_disqualified(
    config: TournamentConfig, store: ResultsStore, only: tuple[str, ...] | None = None
) -> None:
    """Disqualify the entries (all, or ``only`` these) whose forfeits exceed the policy's share of their games."""
    policy = config.faults
    already = store.disqualified()
    for entry in only if only is not None else tuple(e.name for e in config.entries):
        if entry in already:
            continue
        played = [r for r in store.games_of(entry) if r.ending != DISQUALIFIED]
        forfeits = [r for r in played if r.forfeit_entry and entry in r.forfeit_entry.split(",")]
        if len(played) >= policy.disqualify_min_games and len(forfeits) > policy.disqualify_share * len(played):
            store.disqualify(entry, f"forfeited {len(forfeits)} of {len(played)} games")


def _apply_disqualifications(
    config: TournamentConfig,
    store: ResultsStore,
    by_id: dict[str, ScheduledGame],
    images: dict[str, str | None],
    progress: Progress,
) -> None:
    """Disqualify entries over the forfeit share; their unplayed games become forfeits."""
    _mark_disqualified(config, store)
    disqualified = store.disqualified()
    if not disqualified:
        return
    finished = store.finished_ids()
    for game in by_id.values():
        if game.game_id in finished:
            continue
        out = [s for s in (game.side0, game.side1) if s in disqualified]
        if not out:
            continue
        winner = None if len(out) == 2 else (game.side1 if out[0] == game.side0 else game.side0)
        row = GameRow(
            game_id=game.game_id, pairing=game.pairing, deal=game.deal, table_no=game.table,
            cluster=game.cluster, side0=game.side0, side1=game.side1, deal_seed=game.deal_seed,
            ending=DISQUALIFIED, winner=winner, score0=0, score1=0, hands=0,
            forfeit_entry=",".join(out), forfeit_reason="disqualified",
            forfeit_detail=f"disqualified: {disqualified[out[0]]}", strikes0=0, strikes1=0,
            decisions=0, think_seconds=0.0, ruleset_hash=config.rules.hash,
            engine_version=ENGINE_VERSION, sdk_version=SDK_VERSION,
            image0=images.get(game.side0), image1=images.get(game.side1), record=None, finished_at=now(),
        )  # fmt: skip
        store.record_game(row)
        progress.on_game(row)


__all__ = ["DISQUALIFIED", "Progress", "RunReport", "open_store", "run_tournament"]
