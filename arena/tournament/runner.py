"""Run a tournament: tables in parallel under a concurrency limit, resumable.

Orchestration is trio; everything about playing a table is the table kernel's
(:mod:`arena.tables`): the table spec, the table player (local table
processes, or a Dask cluster with ``--scheduler``), image IDs resolved once at
the start, the row of each game and the prune of leftovers.  What is the
tournament's own lives here: the schedule's tables in order, resume, void
replays, and the disqualification policy (:mod:`arena.tournament.disqualify`).
The coordinator meets a table once per game (to store the result), never once
per decision, and is the only writer of the results.  Results go to SQLite as
games finish, so a run stopped at any point (Ctrl-C, SIGTERM, even SIGKILL)
resumes by playing only the missing games.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import trio

from arena.match.seeds import bot_seed_key
from arena.results.store import ResultsStore, StoredGame, StoreError, storage_error
from arena.sandbox.docker import docker_client
from arena.tables.containers import prune_run, resolve_image_ids, wait_for_docker
from arena.tables.players import LocalTables, RunStopped, TablePlayer
from arena.tables.rows import store_played
from arena.tables.spec import SeatSpec, TableGame, TableSpec, seat_specs
from arena.tables.task import ImageMismatch
from arena.tournament.config import Entry, TournamentConfig
from arena.tournament.disqualify import DISQUALIFIED, forfeit_unplayed, mark_disqualified
from arena.tournament.preflight import preflight_entries
from arena.tournament.schedule import ScheduledGame, Table, schedule, tables


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
    on_game: Callable[[StoredGame], None] = lambda row: None
    on_void: Callable[[str, str], None] = lambda game_id, reason: None
    on_notice: Callable[[str], None] = lambda message: None
    """Something the organiser should know that does not stop the run (one line)."""


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
    config: TournamentConfig,
    progress: Progress | None = None,
    scheduler: str | None = None,
    *,
    insecure: bool = False,
) -> RunReport:
    """Play every missing game of the tournament; returns when done or interrupted.

    With ``scheduler`` (a Dask scheduler's address) the tables are tasks on
    that cluster (``insecure``, or the file's ``[cluster] insecure``: plain
    tcp:// on a private network is accepted); it is reached before anything is stored
    (:class:`~arena.tables.cluster.ClusterError` if it cannot be used).
    A run that cannot go on raises :class:`~arena.tables.players.RunStopped` (what is stored is kept).
    """
    cluster = None
    if scheduler is not None:
        from arena.tables.cluster import ClusterTables

        cluster = ClusterTables.connect(scheduler, insecure=insecure or config.insecure)
    try:
        store = open_store(config)
        try:
            player: TablePlayer = cluster if cluster is not None else LocalTables()
            return trio.run(_run, config, store, progress or Progress(), player)
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
    bots = {e.name: e.bot for e in config.entries}
    if not any(bot.kind == "docker" for bot in bots.values()):
        return {name: None for name in bots}
    client = docker_client()
    try:
        ids = resolve_image_ids(bots, client)
        meta = store.meta()
        for name, found in ids.items():
            before = meta.get(f"image:{name}")
            if found is not None and before is not None and before != found:
                raise StoreError(
                    f"entry {name!r}: {bots[name].target} is now image {found}, but this tournament "
                    f"was started with {before}; restore that image (or tag) to resume, or use another output directory"
                )
        for name, found in ids.items():
            if found is not None and f"image:{name}" not in meta:
                store.set_meta(f"image:{name}", found)
        prune_run(store.run_id, client=client)
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
    bot_seed_key: str = "",
) -> TableSpec:
    """The spec of one table (``local``: the bots' logs go straight to the output directory)."""
    sides = tuple(_seat(entries[name], images) for name in (table.side0, table.side1))
    return TableSpec(
        table_id=table.table_id,
        match_id=f"{config.name}/{table.table_id}",
        run_id=run_id,
        rules=config.rules,
        game_ids=tuple(g.game_id for g in table.games),
        deal_seeds=tuple(g.deal_seed for g in table.games),
        time_control=config.time_control,
        limits=config.limits,
        start_timeout=config.start_timeout,
        seats=seat_specs(config.rules, (sides[0], sides[1])),
        log_dir=str((config.output / "logs" / table.table_id).resolve()) if local else None,
        check_tags=not local,
        bot_seed_key=bot_seed_key,
    )


def _seat(entry: Entry, images: dict[str, str | None]) -> SeatSpec:
    return SeatSpec(entry.name, entry.bot.kind, entry.bot.target, entry.bot.env, images.get(entry.name))


async def _run(
    config: TournamentConfig,
    store: ResultsStore,
    progress: Progress,
    player: TablePlayer,
) -> RunReport:
    secret = store.secret
    if secret is None:
        progress.on_notice(
            "this output directory was started before run secrets: its deals follow from the tournament "
            "seed alone, so a bot that guesses the seed can compute them; start a new output directory "
            "to play with a secret"
        )
    games = schedule(config, secret)
    seed_key = bot_seed_key(secret)
    by_id = {g.game_id: g for g in games}
    images = await trio.to_thread.run_sync(resolve_images, config, store)
    run_id = store.run_id
    # Each image started once: one that cannot start is disqualified before its games are scheduled.
    await trio.to_thread.run_sync(preflight_entries, store, images, config.limits, progress.on_notice)
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
        row = store_played(store, config.output, game.slot, played, ruleset_hash=config.rules.hash, images=images)
        if row is not None:
            state["played"] += 1
            progress.on_game(row)
        # Disqualify as soon as an entry is over the share: its tables not yet
        # started are skipped (and stored as forfeits at the end of the round).
        mark_disqualified(config.faults, store, (game.side0, game.side1))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch_signals, stop, nursery.cancel_scope)
        try:
            for round_no in range(config.faults.void_retries + 1):
                pending = _pending(games, store, config)
                if not pending or stop.is_set() or fatal:
                    break
                if round_no > 0 and uses_docker:
                    # Replaying voids: the engine may be restarting; leftovers of voided tables go.
                    await trio.to_thread.run_sync(wait_for_docker, run_id, stop)
                _apply_disqualifications(config, store, by_id, images, progress)
                pending = _pending(games, store, config)
                limiter = trio.CapacityLimiter(max(1, player.capacity(config.concurrency)))
                async with trio.open_nursery() as tables_nursery:
                    for table in tables(pending):
                        # start() returns once the table holds a slot: tables start in
                        # schedule order (trio runs new tasks in no fixed order), so the
                        # two tables of a pairing play at the same time.
                        spec = table_spec(config, table, entries, images, run_id, local=player.local, bot_seed_key=seed_key)
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
        await trio.to_thread.run_sync(prune_run, run_id)
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


def _apply_disqualifications(
    config: TournamentConfig,
    store: ResultsStore,
    by_id: dict[str, ScheduledGame],
    images: dict[str, str | None],
    progress: Progress,
) -> None:
    """Disqualify entries over the forfeit share; their unplayed games become forfeits."""
    mark_disqualified(config.faults, store, (e.name for e in config.entries))
    forfeit_unplayed(
        store, (g.slot for g in by_id.values()), ruleset_hash=config.rules.hash, images=images,
        on_row=progress.on_game,
    )  # fmt: skip


__all__ = ["DISQUALIFIED", "Progress", "RunReport", "open_store", "resolve_images", "run_tournament", "table_spec"]
