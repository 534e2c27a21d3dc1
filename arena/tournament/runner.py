"""Run a tournament: tables in parallel under a concurrency limit, resumable.

Orchestration is trio.  Each table (fixed seats playing a list of games) is
one call of the table task (:func:`arena.tournament.table.play_table`) made
from a plain spec: locally in its own process (:mod:`arena.tournament.processes`,
so ``concurrency = N`` uses N cores), or on a Dask cluster
(:mod:`arena.tournament.cluster`).  The coordinator meets a table once per
game (to store the result), never once per decision, and is the only writer
of the results.  Results go to SQLite as games finish, so a run stopped at
any point (Ctrl-C, SIGTERM, even SIGKILL) resumes by playing only the missing
games.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import trio

from arena.match.output import write_record
from arena.match.timing import team_timing
from arena.sandbox.docker import DockerUnavailable, docker_client, image_id, prune
from arena.tournament.config import Entry, TournamentConfig
from arena.tournament.schedule import ScheduledGame, Table, schedule, tables
from arena.tournament.store import GameRow, ResultsStore, SideTime, StoreError, now, storage_error
from arena.tournament.table import ImageMismatch, SeatSpec, TableGame, TableResult, TableSpec
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


class TablePlayer(Protocol):
    """Where tables are played: table processes on this machine, or a cluster."""

    def capacity(self, config: TournamentConfig) -> int:
        """How many tables to have running at once."""
        ...

    async def play(
        self, spec: TableSpec, on_game: Callable[[TableGame], None], stop: threading.Event
    ) -> TableResult:
        """Play one table; ``on_game`` may be called per game as it ends (on the trio thread)."""
        ...


class RunStopped(Exception):
    """The run cannot go on (the cluster is gone, no machine has an image): one line for the organiser."""


class LocalTables:
    """Each table in its own process on this machine."""

    def __init__(self, cleanup: Callable[[TableSpec], None] | None = None) -> None:
        self.cleanup = cleanup

    def capacity(self, config: TournamentConfig) -> int:
        return config.concurrency

    async def play(
        self, spec: TableSpec, on_game: Callable[[TableGame], None], stop: threading.Event
    ) -> TableResult:
        from arena.tournament.processes import play_table_in_process

        return await play_table_in_process(spec, on_game, stop, self.cleanup)


def store_path(config: TournamentConfig) -> Path:
    return config.output / "results.sqlite"


def open_store(config: TournamentConfig) -> ResultsStore:
    """The tournament's store, bound to this file (refuses another file's store)."""
    store = ResultsStore(store_path(config))
    try:
        store.claim(
            config.file_hash, config.name, config.rules.hash, json.dumps(config.rules.to_dict()),
            aliases=config.legacy_hashes,
        )  # fmt: skip
    except BaseException:
        store.close()
        raise
    return store


def run_tournament(
    config: TournamentConfig, progress: Progress | None = None, scheduler: str | None = None
) -> RunReport:
    """Play every missing game of the tournament; returns when done or interrupted.

    With ``scheduler`` (a Dask scheduler's address) the tables are tasks on
    that cluster; it is reached before anything is stored
    (:class:`~arena.tournament.cluster.ClusterError` if it cannot be used).
    A run that cannot go on raises :class:`RunStopped` (what is stored is kept).
    """
    cluster = None
    if scheduler is not None:
        from arena.tournament.cluster import ClusterTables

        cluster = ClusterTables.connect(scheduler)
    try:
        store = open_store(config)
        try:
            return trio.run(_run, config, store, progress or Progress(), cluster or _local_tables(config))
        finally:
            store.close()
    finally:
        if cluster is not None:
            cluster.close()


def resolve_images(config: TournamentConfig, store: ResultsStore) -> dict[str, str | None]:
    """Each entry's image ID (provenance, and what its containers start from), None for local commands.

    The first run of an output directory records them; a resumed run refuses
    an entry whose tag now names another image (its games would compare two
    different bots under one name).  Leftovers of an earlier, killed run of
    this directory are removed first: only this run's (``arena.run`` label).
    """
    ids: dict[str, str | None] = {e.name: None for e in config.entries}
    docker_entries = [e for e in config.entries if e.bot.kind == "docker"]
    if not docker_entries:
        return ids
    client = docker_client()
    try:
        meta = store.meta()
        for entry in docker_entries:
            found = image_id(client, entry.bot.target)
            before = meta.get(f"image:{entry.name}")
            if before is not None and before != found:
                raise StoreError(
                    f"entry {entry.name!r}: {entry.bot.target} is now image {found}, but this tournament "
                    f"was started with {before}; restore that image (or tag) to resume, or use another output directory"
                )
            ids[entry.name] = found
        for entry in docker_entries:
            if f"image:{entry.name}" not in meta:
                store.set_meta(f"image:{entry.name}", str(ids[entry.name]))
        prune(client, run=store.run_id, include_running=True)
    finally:
        client.close()
    return ids


def table_spec(
    config: TournamentConfig,
    table: Table,
    entries: dict[str, Entry],
    images: dict[str, str | None],
    run_id: str,
    *,
    local: bool = True,
) -> TableSpec:
    """The plain spec of one table (``local``: the bots' logs go straight to the output directory)."""
    n = config.rules.players
    sides = (table.side0, table.side1)
    seats = []
    for s in range(n):
        entry = entries[sides[team_of(n, s)]]
        seats.append(SeatSpec(entry.name, entry.bot.kind, entry.bot.target, entry.bot.env, images.get(entry.name)))
    return TableSpec(
        table_id=table.table_id,
        match_id=f"{config.name}/{table.table_id}",
        run_id=run_id,
        rules=config.rules.to_dict(),
        game_ids=tuple(g.game_id for g in table.games),
        deal_seeds=tuple(g.deal_seed for g in table.games),
        time_control=dataclasses.asdict(config.time_control),
        limits=dataclasses.asdict(config.limits),
        start_timeout=config.start_timeout,
        seats=tuple(seats),
        log_dir=str((config.output / "logs" / table.table_id).resolve()) if local else None,
        check_tags=not local,
    )


def _local_tables(config: TournamentConfig) -> LocalTables:
    uses_docker = any(e.bot.kind == "docker" for e in config.entries)
    return LocalTables(_prune_table if uses_docker else None)


def _prune_table(spec: TableSpec) -> None:
    """Remove a dead table process's containers (this run's, this table's)."""
    _prune_leftovers(spec.run_id, spec.match_id)


async def _run(
    config: TournamentConfig,
    store: ResultsStore,
    progress: Progress,
    player: TablePlayer,
) -> RunReport:
    games = schedule(config)
    by_id = {g.game_id: g for g in games}
    images = await trio.to_thread.run_sync(resolve_images, config, store)
    run_id = store.run_id
    entries = {e.name: e for e in config.entries}
    done_before = store.finished_ids()
    progress.on_start(len(games), len(done_before & set(by_id)))
    stop = threading.Event()
    state = {"played": 0, "voided": 0}
    #: A write that cannot be made (disk full), or a run that cannot go on: it stops and raises it.
    fatal: list[Exception] = []
    uses_docker = any(e.bot.kind == "docker" for e in config.entries)

    def store_game(game: ScheduledGame, played: TableGame) -> None:
        if game.game_id in store.finished_ids():
            return  # a late copy of a game already stored (a table replayed elsewhere): dropped
        if played.void is not None:
            store.record_void(game.game_id, played.void)
            state["voided"] += 1
            progress.on_void(game.game_id, played.ending)
            return
        records = config.output / "records"
        try:  # first the record, then the row that points to it
            write_record(records, played)  # type: ignore[arg-type]  # it reads only game_id and record
        except OSError as exc:
            raise storage_error(exc, records) from None
        row = _row(config, game, played, images)
        if store.record_game(row):
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
                    await trio.to_thread.run_sync(_docker_back, run_id, stop)
                _apply_disqualifications(config, store, by_id, images, progress)
                pending = _pending(games, store, config)
                limiter = trio.CapacityLimiter(max(1, player.capacity(config)))
                async with trio.open_nursery() as tables_nursery:
                    for table in tables(pending):
                        # start() returns once the table holds a slot: tables start in
                        # schedule order (trio runs new tasks in no fixed order), so the
                        # two tables of a pairing play at the same time.
                        spec = table_spec(config, table, entries, images, run_id, local=isinstance(player, LocalTables))
                        await tables_nursery.start(
                            _run_table, config, table, spec, player, limiter, stop, store_game, store, fatal
                        )
                if fatal:
                    break
                _apply_disqualifications(config, store, by_id, images, progress)
        except StoreError as exc:
            fatal.append(exc)
        nursery.cancel_scope.cancel()
    if uses_docker:
        await trio.to_thread.run_sync(_prune_leftovers, run_id)
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


def _prune_leftovers(run_id: str, match_prefix: str | None = None) -> None:
    """Remove this run's containers (of one table, with ``match_prefix``): those a failed daemon or table left."""
    try:
        client = docker_client()
    except DockerUnavailable:
        return
    try:
        prune(client, match_prefix, run=run_id, include_running=True)
    except Exception:  # noqa: BLE001 - best effort: the next run prunes them
        pass
    finally:
        client.close()


def _docker_back(run_id: str, stop: threading.Event) -> None:
    """Wait (at most ``DOCKER_WAIT_S``) for the Docker engine to answer, then prune leftovers."""
    deadline = time.monotonic() + DOCKER_WAIT_S
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            docker_client().close()
            break
        except DockerUnavailable:
            time.sleep(0.5)
    _prune_leftovers(run_id)


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
    spec: TableSpec,
    player: TablePlayer,
    limiter: trio.CapacityLimiter,
    stop: threading.Event,
    store_game: Callable[[ScheduledGame, TableGame], None],
    store: ResultsStore,
    fatal: list[Exception],
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
        seen: set[str] = set()

        def on_game(played: TableGame) -> None:
            if played.game_id in seen or played.game_id not in games:
                return
            seen.add(played.game_id)
            try:
                store_game(games[played.game_id], played)
            except Exception as exc:
                failure = _storage_failure(exc, config.output)
                if failure is None:
                    raise
                # The results cannot be written: stop every table (their games in
                # progress are not stored and will be played on resume).
                if not fatal:
                    fatal.append(failure)
                stop.set()

        try:
            result = await player.play(spec, on_game, stop)
        except (RunStopped, ImageMismatch) as exc:
            if not fatal:
                fatal.append(exc if isinstance(exc, RunStopped) else RunStopped(str(exc)))
            stop.set()
            return
        for played in result.games:  # a player that returns the games only at the end
            on_game(played)
        if result.error is not None and not fatal:
            # The platform failed for the whole table: void what is left.
            try:
                finished = store.finished_ids()
                for game in table.games:
                    if game.game_id not in finished and game.game_id not in seen:
                        store.record_void(game.game_id, f"void:platform: {result.error}")
            except StoreError as exc:
                fatal.append(exc)
                stop.set()
        if result.logs:
            _write_logs(config.output / "logs" / table.table_id, result.logs)


def _write_logs(directory: Path, logs: dict[str, bytes]) -> None:
    """The bots' logs a remote table returned, next to the local ones."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in logs.items():
            (directory / Path(name).name).write_bytes(data)
    except OSError:
        pass  # logs are a courtesy; the results are what must not be lost


def _row(config: TournamentConfig, game: ScheduledGame, played: TableGame, images: dict[str, str | None]) -> GameRow:
    sides = (game.side0, game.side1)
    charged = tuple(sides[side] for side in played.forfeit_sides)
    return GameRow(
        game_id=game.game_id,
        pairing=game.pairing,
        deal=game.deal,
        table_no=game.table,
        cluster=game.cluster,
        side0=game.side0,
        side1=game.side1,
        deal_seed=game.deal_seed,
        ending=played.ending,
        winner=None if played.winner is None else sides[played.winner],
        score0=played.scores[0],
        score1=played.scores[1],
        hands=played.hands,
        forfeit_entry=charged[0] if len(charged) == 1 else None,
        forfeit_reason=played.forfeit_reason,
        forfeit_detail=played.forfeit_detail,
        strikes0=played.strikes[0],
        strikes1=played.strikes[1],
        decisions=played.decisions,
        think_seconds=played.think_seconds,
        ruleset_hash=config.rules.hash,
        engine_version=ENGINE_VERSION,
        sdk_version=SDK_VERSION,
        image0=images.get(game.side0),
        image1=images.get(game.side1),
        record=f"records/{game.game_id}.json",
        finished_at=now(),
        forfeit_entries=charged,
        side_times=side_times(played.record, sides),
    )


def side_times(record: dict[str, Any], sides: tuple[str, str]) -> tuple[SideTime, ...]:
    """Each side's time figures from a game's record (the sides whose decisions carry times)."""
    return tuple(
        SideTime.from_figures(side, sides[side], figures)
        for side, figures in enumerate(team_timing(record))
        if figures is not None
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
        forfeits = [r for r in played if entry in r.forfeit_entries]
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
            forfeit_entry=out[0] if len(out) == 1 else None, forfeit_entries=tuple(out),
            forfeit_reason="disqualified",
            forfeit_detail=f"disqualified: {disqualified[out[0]]}", strikes0=0, strikes1=0,
            decisions=0, think_seconds=0.0, ruleset_hash=config.rules.hash,
            engine_version=ENGINE_VERSION, sdk_version=SDK_VERSION,
            image0=images.get(game.side0), image1=images.get(game.side1), record=None, finished_at=now(),
        )  # fmt: skip
        store.record_game(row)
        progress.on_game(row)


__all__ = [
    "DISQUALIFIED", "LocalTables", "Progress", "RunReport", "RunStopped", "TablePlayer", "open_store",
    "resolve_images", "run_tournament", "table_spec",
]  # fmt: skip
