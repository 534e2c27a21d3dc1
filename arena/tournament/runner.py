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

A tournament grows: entries added to its file (after it finished, or while it
runs) are accepted (:mod:`arena.tournament.growth`), their pairings get new
numbers in the store and only they are played; a running tournament re-reads
its file after each batch of tables.  An entry whose image was rebuilt plays on
as a new version (``name@2``) when the organiser accepts it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import trio

from arena.errors import ArenaError
from arena.match.seeds import bot_seed_key
from arena.results.store import STORE_NAME, ResultsStore, StoredGame, StoreError
from arena.sandbox.docker import docker_client
from arena.tables.containers import prune_run, resolve_image_ids, wait_for_docker
from arena.tables.ledger import Ledger, Recorded
from arena.tables.players import LocalTables, TablePlayer
from arena.tables.runlock import hold_directory
from arena.tables.runner import Job, Runner
from arena.tables.spec import SeatSpec, TableGame, TableResult, TableSpec, seat_specs
from arena.tournament.config import Entry, TournamentConfig, load_config
from arena.tournament.disqualify import DISQUALIFIED, forfeit_unplayed, mark_disqualified
from arena.tournament.growth import Growth, check_growth, known_entries
from arena.tournament.preflight import preflight_entries
from arena.tournament.schedule import (
    VERSION_MARK,
    ScheduledGame,
    Table,
    labelled_pairings,
    schedule,
    tables,
)


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
    return config.output / STORE_NAME


def open_store(config: TournamentConfig, on_growth: Callable[[Growth], None] | None = None) -> ResultsStore:
    """The tournament's store, bound to this file (refuses another file's store).

    A file that only grew since the store was bound (entries added or
    removed) is accepted and ``on_growth`` told what changed.
    """
    store = ResultsStore(store_path(config))
    try:
        growth = accept_growth(store, config)
        store.claim(
            config.file_hash, config.name, config.rules.hash, json.dumps(config.rules.to_dict()),
            aliases=config.legacy_hashes, content=config.content,
        )  # fmt: skip
    except BaseException:
        store.close()
        raise
    if growth is not None and on_growth is not None:
        on_growth(growth)
    return store


#: The store's meta key of every entry it has had (name -> bot and env), removed ones too.
KNOWN_ENTRIES = "entries"


def accept_growth(store: ResultsStore, config: TournamentConfig) -> Growth | None:
    """Bind ``store`` to ``config``'s file if that only grew since; None when it is the same file (or new).

    Raises :class:`~arena.tournament.growth.ChangedTournament` naming what
    changed otherwise, and :class:`StoreError` for a store bound before stores
    kept their file's content (what changed cannot be told).
    """
    bound = store.meta().get("file_hash")
    if bound is None or not config.content or bound == config.file_hash or bound in config.legacy_hashes:
        return None
    where = str(store.path)
    before = store.bound_content()
    if before is None:
        raise StoreError(
            f"{where} holds a tournament played from a different file (hash {bound[:12]}, this file "
            f"{config.file_hash[:12]}), started before stores kept their file, so what changed cannot be told: "
            "restore the original file and run it once, then add entries; or use another output directory"
        )
    known = known_entries(before, json.loads(store.meta().get(KNOWN_ENTRIES, "{}")))
    growth = check_growth(before, config.content, where, known)
    store.rebind(config.file_hash, config.content)
    # Removed entries stay known: one added back must be the same bot (its stored games are that bot's).
    store.set_meta(KNOWN_ENTRIES, json.dumps(known_entries(config.content, known), sort_keys=True))
    return growth


def run_tournament(
    config: TournamentConfig,
    progress: Progress | None = None,
    scheduler: str | None = None,
    *,
    insecure: bool = False,
    accept_rebuilt: bool = False,
) -> RunReport:
    """Play every missing game of the tournament; returns when done or interrupted.

    With ``scheduler`` (a Dask scheduler's address) the tables are tasks on
    that cluster (``insecure``, or the file's ``[cluster] insecure``: plain
    tcp:// on a private network is accepted); it is reached before anything is stored
    (:class:`~arena.tables.cluster.ClusterError` if it cannot be used).
    A run that cannot go on raises :class:`~arena.tables.players.RunStopped` (what is stored is kept);
    an output directory another run holds, :class:`~arena.tables.runlock.DirectoryInUse` (nothing touched).
    ``accept_rebuilt``: an entry whose image was rebuilt since it played plays
    on as a new version (:func:`resolve_images`) instead of being refused.
    """
    # One runner per output directory, before anything is opened there (a second run is refused).
    with hold_directory(config.output, "arena tournament run"):
        cluster = None
        if scheduler is not None:
            from arena.tables.cluster import ClusterTables

            cluster = ClusterTables.connect(scheduler, insecure=insecure or config.insecure)
        progress = progress or Progress()
        try:
            store = open_store(config, lambda growth: progress.on_notice(_grown(growth)))
            try:
                player: TablePlayer = cluster if cluster is not None else LocalTables()
                return trio.run(_run, config, store, progress, player, accept_rebuilt)
            finally:
                store.close()
        finally:
            if cluster is not None:
                cluster.close()


def entry_labels(config: TournamentConfig, store: ResultsStore) -> dict[str, str]:
    """Each entry's current version as the store knows it: ``name``, or ``name@N`` after a rebuild."""
    meta = store.meta()
    return {e.name: _label(e.name, int(meta.get(f"version:{e.name}", "1"))) for e in config.entries}


def _label(name: str, version: int) -> str:
    return name if version <= 1 else f"{name}{VERSION_MARK}{version}"


def resolve_images(
    config: TournamentConfig, store: ResultsStore, *, accept_rebuilt: bool = False,
    notice: Callable[[str], None] = lambda message: None,
) -> dict[str, str | None]:
    """Each entry's image ID keyed by its current label (:func:`entry_labels`), None for local commands.

    The first run of an output directory records them; a resumed run refuses
    an entry whose tag now names another image (its games would compare two
    different bots under one name), unless ``accept_rebuilt``: the entry then
    becomes a new version ``name@N`` (``notice`` says so) whose pairings are
    played anew, and the games of the earlier version stay its own.
    Leftovers of an earlier, killed run of this directory are removed first:
    only this run's (``arena.run`` label).
    """
    bots = {e.name: e.bot for e in config.entries}
    if not any(bot.kind == "docker" for bot in bots.values()):
        return {label: None for label in entry_labels(config, store).values()}
    client = docker_client()
    try:
        ids = resolve_image_ids(bots, client)
        meta = store.meta()
        for name, found in ids.items():
            version = int(meta.get(f"version:{name}", "1"))
            before = meta.get(f"image:{_label(name, version)}")
            if found is None or before is None or before == found:
                continue
            if not accept_rebuilt:
                raise StoreError(
                    f"entry {name!r}: {bots[name].target} is now image {found}, but this tournament "
                    f"was started with {before}; run again with --accept-rebuilt to enter the rebuilt image as a "
                    f"new version, {_label(name, version + 1)} (the games {_label(name, version)} played stay its "
                    "own), or restore that image (or tag) to resume, or use another output directory"
                )
            new = _label(name, version + 1)
            with store.transaction() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    [(f"version:{name}", str(version + 1)), (f"image:{new}", found)],
                )
            notice(
                f"entry {name!r}: {bots[name].target} was rebuilt ({before[:19]} -> {found[:19]}): it plays on as "
                f"{new}, its pairings anew; the games of {_label(name, version)} are kept and rated apart"
            )
        labels = entry_labels(config, store)
        meta = store.meta()
        for name, found in ids.items():
            if found is not None and f"image:{labels[name]}" not in meta:
                store.set_meta(f"image:{labels[name]}", found)
        prune_run(store.run_id, client=client, strict=True)  # before anything starts: an engine error is one line
    finally:
        client.close()
    return {labels[name]: found for name, found in ids.items()}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a run plays: the games, and each entry under its current label with its image."""

    games: list[ScheduledGame]
    entries: dict[str, Entry]
    """Keyed by label; each entry renamed to its label (what its seats and rows carry)."""
    images: dict[str, str | None]

    @property
    def by_id(self) -> dict[str, ScheduledGame]:
        return {g.game_id: g for g in self.games}


def plan_run(
    config: TournamentConfig, store: ResultsStore, *, accept_rebuilt: bool = False,
    notice: Callable[[str], None] = lambda message: None,
) -> Plan:
    """Resolve images (and versions), number the pairings in the store, and schedule every game."""
    images = resolve_images(config, store, accept_rebuilt=accept_rebuilt, notice=notice)
    labels = entry_labels(config, store)
    numbers = store.pairing_numbers(labelled_pairings(config, labels))
    entries = {labels[e.name]: dataclasses.replace(e, name=labels[e.name]) for e in config.entries}
    return Plan(schedule(config, store.secret, numbers, labels), entries, images)


def _grown(growth: Growth) -> str:
    return f"the tournament file grew ({growth.summary()}): only the new pairings are played"


def reread(
    config: TournamentConfig, store: ResultsStore, *, accept_rebuilt: bool = False,
    notice: Callable[[str], None] = lambda message: None,
) -> tuple[TournamentConfig, Plan] | None:
    """The file again, between batches: the grown config and its plan, or None if it did not grow.

    A change the tournament cannot take (or a file that no longer reads) is
    told through ``notice`` and the run goes on with the file as it started.
    The command line's output and concurrency are kept.
    """
    try:
        new = load_config(config.source, check_images=False)
    except ArenaError as exc:
        notice(f"the tournament file cannot be read again ({exc}); this run goes on with it as it started")
        return None
    if not new.content or new.content == config.content:
        return None
    new = dataclasses.replace(new, output=config.output, concurrency=config.concurrency, legacy_hashes=())
    try:
        growth = accept_growth(store, new)
        plan = plan_run(new, store, accept_rebuilt=accept_rebuilt, notice=notice)
    except ArenaError as exc:
        if store.meta().get("file_hash") == new.file_hash:  # accepted, but its entries cannot play: back
            store.rebind(config.file_hash, config.content)
        notice(f"{exc}; this run goes on with the file as it started")
        return None
    if growth is not None:
        notice(_grown(growth))
    return new, plan


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
    accept_rebuilt: bool = False,
) -> RunReport:
    secret = store.secret
    if secret is None:
        progress.on_notice(
            "this output directory was started before run secrets: its deals follow from the tournament "
            "seed alone, so a bot that guesses the seed can compute them; start a new output directory "
            "to play with a secret"
        )
    plan = await trio.to_thread.run_sync(
        functools.partial(plan_run, config, store, accept_rebuilt=accept_rebuilt, notice=progress.on_notice)
    )
    # Each image started once: one that cannot start is disqualified before its games are scheduled.
    await trio.to_thread.run_sync(preflight_entries, store, plan.images, config.limits, progress.on_notice)
    done_before = store.finished_ids()
    progress.on_start(len(plan.games), len(done_before & set(plan.by_id)))
    stop = threading.Event()
    schedule = RoundRobin(config, plan, store, player, progress, accept_rebuilt, bot_seed_key(secret), stop)
    runner = Runner(
        schedule, Ledger(store, config.output, ruleset_hash=config.rules.hash), player,
        capacity=player.capacity(config.concurrency), stop=stop, prune=schedule.prune, fatal_image_mismatch=True,
    )  # fmt: skip
    outcome = await runner.run()
    by_id = schedule.plan.by_id
    return RunReport(
        total=len(schedule.plan.games),
        already_done=len(done_before & set(by_id)),
        played=schedule.played,
        voided=schedule.voided,
        interrupted=outcome.interrupted,
        unfinished=sorted(set(by_id) - store.finished_ids()),
    )


class RoundRobin:
    """The tournament as a schedule of the run loop (:class:`arena.tables.runner.Runner`).

    Its tables in schedule order (so a pairing's two tables play at the same
    time); when a round is out of tables, the voided games again (up to
    ``void_retries`` rounds more, after the Docker engine is back); then the
    file again, for entries added while it ran.  Entries over the forfeit
    share are disqualified as soon as a game puts them there: their tables not
    yet started are skipped and stored as forfeits at the end of the round.
    """

    def __init__(
        self,
        config: TournamentConfig,
        plan: Plan,
        store: ResultsStore,
        player: TablePlayer,
        progress: Progress,
        accept_rebuilt: bool,
        seed_key: str,
        stop: threading.Event,
    ) -> None:
        self.config = config
        self.stop = stop
        self.plan = plan
        self.store = store
        self.player = player
        self.progress = progress
        self.accept_rebuilt = accept_rebuilt
        self.seed_key = seed_key
        self.played = 0
        self.voided = 0
        # Entries added while the run goes on may bring Docker in: prune whenever any plan used it.
        self.uses_docker = any(e.bot.kind == "docker" for e in config.entries)
        self.round = 0
        self.queue = self._round_tables()
        self.tables: dict[str, Table] = {}

    def prune(self) -> None:
        """The run's leftover containers (at the start and at the end), when its bots are images.

        Strict: the run loop ends the run with the engine's error when the start's prune fails (and logs the end's).
        """
        if self.uses_docker:
            prune_run(self.store.run_id, strict=True)

    # ------------------------------------------------------------ rounds

    def _round_tables(self) -> list[Table]:
        """This round's tables: the games not yet stored and not out of void retries, disqualifications applied."""
        _apply_disqualifications(self.config, self.plan, self.store, self.plan.by_id, self.progress)
        return list(tables(_pending(self.plan.games, self.store, self.config)))

    def next_job(self, room: int) -> Job | None:  # (one table: it always fits)
        disqualified = self.store.disqualified()
        while self.queue:
            table = self.queue.pop(0)
            if table.side0 in disqualified or table.side1 in disqualified:
                continue  # recorded as forfeits at the end of the round
            spec = table_spec(
                self.config, table, self.plan.entries, self.plan.images, self.store.run_id,
                local=self.player.local, bot_seed_key=self.seed_key,
            )  # fmt: skip
            self.tables[table.table_id] = table
            return Job(
                key=table.table_id,
                tables={1: spec},
                slots={g.game_id: g.slot for g in table.games},
                images=self.plan.images,  # (read when the job starts: the latest, after the file grew)
                log_dirs={1: self.config.output / "logs" / table.table_id},
            )
        return None

    def done(self) -> bool:
        return False  # the loop asks idle() when a round is out of tables

    async def idle(self) -> bool:
        """The round is over: the voided games again, or the file again; False when neither has anything."""
        _apply_disqualifications(self.config, self.plan, self.store, self.plan.by_id, self.progress)
        if self.round < self.config.faults.void_retries and _pending(self.plan.games, self.store, self.config):
            self.round += 1
            if self.uses_docker:  # replaying voids: the engine may be restarting; leftovers of voided tables go
                await trio.to_thread.run_sync(wait_for_docker, self.store.run_id, self.stop)
            self.queue = self._round_tables()
            return True
        # Between batches: entries added to the file meanwhile are played in this run.
        config = self.config
        grown = await trio.to_thread.run_sync(
            functools.partial(reread, config, self.store, accept_rebuilt=self.accept_rebuilt, notice=self.progress.on_notice)
        )
        if grown is None:
            return False
        known = self.plan.images
        self.config, self.plan = grown
        # The images of entries added meanwhile are started once too, as at the start.
        added = {label: image for label, image in self.plan.images.items() if label not in known}
        if any(image is not None for image in added.values()):
            await trio.to_thread.run_sync(preflight_entries, self.store, added, self.config.limits, self.progress.on_notice)
        self.uses_docker = self.uses_docker or any(e.bot.kind == "docker" for e in self.config.entries)
        self.progress.on_start(len(self.plan.games), len(self.store.finished_ids() & set(self.plan.by_id)))
        self.round = 0
        self.queue = self._round_tables()
        return True

    # ------------------------------------------------------------ games

    def recorded(self, job: Job, table: int, game: TableGame, recorded: Recorded) -> None:
        if recorded.void is not None:
            self.voided += 1
            self.progress.on_void(game.game_id, recorded.void)
            return
        if recorded.row is None:
            return  # a late copy of a game already stored (a table replayed elsewhere): nothing written
        self.played += 1
        self.progress.on_game(recorded.row)
        # Disqualify as soon as an entry is over the share: its tables not yet
        # started are skipped (and stored as forfeits at the end of the round).
        mark_disqualified(self.config.faults, self.store, (recorded.row.side0, recorded.row.side1))

    def job_done(self, job: Job, results: Mapping[int, TableResult], stopped: bool) -> None:
        table = self.tables.pop(job.key)
        result = results.get(1)
        if result is not None and result.error is not None and not stopped:
            # The platform failed for the whole table: void what is left (what it reported is in job.reported).
            finished = self.store.finished_ids()
            for game in table.games:
                if game.game_id not in finished and game.game_id not in job.reported:
                    self.store.record_void(game.game_id, f"void:platform: {result.error}")  # (no table reported it)
        name_logs(self.config.output / "logs" / table.table_id, job.tables[1])


def _pending(games: list[ScheduledGame], store: ResultsStore, config: TournamentConfig) -> list[ScheduledGame]:
    """Games not yet stored and not out of void retries."""
    done = store.finished_ids()
    voids = store.void_attempts()
    return [
        g for g in games
        if g.game_id not in done and voids.get(g.game_id, 0) <= config.faults.void_retries
    ]  # fmt: skip


def log_name(entry: str, seat: int) -> str:
    """The file name of a bot's log in its table's log directory: ``<entry>-seat<N>.log``."""
    return f"{entry}-seat{seat}.log"


def name_logs(directory: Path, spec: TableSpec) -> None:
    """Name a finished table's logs by entry and seat (the seats write ``seat<N>.log``).

    A table played again (a void, a resumed run) replaces its earlier logs.
    """
    for seat, spec_seat in enumerate(spec.seats):
        written = directory / f"seat{seat}.log"
        try:
            if written.is_file():
                written.replace(directory / log_name(spec_seat.entry, seat))
        except OSError:
            pass  # logs are a courtesy; the results are what must not be lost


def _apply_disqualifications(
    config: TournamentConfig,
    plan: Plan,
    store: ResultsStore,
    by_id: dict[str, ScheduledGame],
    progress: Progress,
) -> None:
    """Disqualify entries over the forfeit share; their unplayed games become forfeits."""
    mark_disqualified(config.faults, store, plan.entries)
    forfeit_unplayed(
        store, (g.slot for g in by_id.values()), ruleset_hash=config.rules.hash, images=plan.images,
        on_row=progress.on_game,
    )  # fmt: skip


__all__ = [
    "DISQUALIFIED", "Plan", "Progress", "RunReport", "accept_growth", "entry_labels", "log_name", "name_logs",
    "open_store", "plan_run", "reread", "resolve_images", "run_tournament", "table_spec",
]  # fmt: skip
