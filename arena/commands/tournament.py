"""``arena tournament run``: a resumable round robin with duplicate deals."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from arena.commands.common import console, err_console, fail, hold_or_fail, print_json
from arena.commands.options import warn_if_oversubscribed
from arena.errors import ArenaError
from arena.tables.settings import parse_concurrency
from arena.text import safe_text
from arena.tournament import ConfigError, load_config, run_tournament
from arena.tournament import Progress as RunProgress
from arena.tournament.config import TournamentConfig

app = typer.Typer(help="Run round-robin tournaments.", no_args_is_help=True)

#: Exit status when a run was stopped (Ctrl-C, SIGTERM) before the end.
EXIT_INTERRUPTED = 130


@app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="The tournament file (TOML; see tournaments/example.toml).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the run's summary as JSON.")] = False,
    show: Annotated[bool, typer.Option("--show/--no-show", help="Show the leaderboard at the end.")] = True,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Output directory (instead of the file's [tournament] output)."),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            help="Play the tables on a Dask cluster: its scheduler's tcp://HOST:PORT (see docs/cluster.md). "
            "Overrides the file's [cluster] scheduler.",
        ),
    ] = None,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure",
            help="Accept a plain tcp:// scheduler on a private network (not only loopback): anyone on that "
            "network could run code on the workers. Without it, use tls:// (see docs/cluster.md).",
        ),
    ] = False,
    concurrency: Annotated[
        str | None,
        typer.Option(
            "--concurrency",
            "-j",
            metavar="N|auto",
            help="Tables at the same time on this machine, each its own process (up to N cores); auto: one "
            "per core. Overrides the file's [tournament] concurrency; a run may resume with another value "
            "(the results do not depend on it). With --scheduler the cluster's workers decide.",
        ),
    ] = None,
    accept_rebuilt: Annotated[
        bool,
        typer.Option(
            "--accept-rebuilt",
            help="An entry whose docker image was rebuilt since it played plays on as a new version, NAME@2 "
            "(its pairings played anew; the earlier version's games are kept and rated apart). Without it such "
            "an entry is refused.",
        ),
    ] = False,
) -> None:
    """Play every missing game of FILE's round robin and show the leaderboard.

    Each pairing plays duplicate tables (the same deals with the partnerships
    swapped).  Results go to OUTPUT/results.sqlite as games finish; stopping
    (Ctrl-C) and running again resumes with only the missing games.

    Entries added to FILE (after the run, or while it runs: the file is read
    again after each batch of tables) are played too, only their new pairings;
    an entry removed keeps its stored games, left out of the standings.

    cmd: entries are local processes for development, NOT a sandbox: they run
    as you, with your files and network.  Run entries you did not write as docker:.
    """
    try:
        config = load_config(file, scheduler=scheduler)
    except ConfigError as exc:
        fail(str(exc))
    if out is not None:
        config = dataclasses.replace(config, output=out)
    if concurrency is not None:
        try:
            config = dataclasses.replace(config, concurrency=parse_concurrency(concurrency, "--concurrency"))
        except ConfigError as exc:
            fail(str(exc))
    scheduler = scheduler or config.scheduler
    # One run per output directory, taken before anything is said or opened (a second run is refused in one line).
    with hold_or_fail(config.output, "arena tournament run"):
        interrupted = _play(config, scheduler, insecure=insecure, accept_rebuilt=accept_rebuilt, as_json=as_json,
                            show=show)  # fmt: skip
    if interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)


def _play(
    config: TournamentConfig, scheduler: str | None, *, insecure: bool, accept_rebuilt: bool, as_json: bool, show: bool
) -> bool:
    """Play the tournament with its progress bar, then print (or write as JSON) its summary; True if interrupted."""
    if not scheduler:
        warn_if_oversubscribed(config.concurrency, config.time_control)
    publish = f"arena ratings publish {shlex.quote(str(config.output))}"
    if not as_json:
        where = f" on the cluster at {scheduler}" if scheduler else f" ({_tables(config.concurrency)} at a time)"
        console.print(f"results go to {config.output}{where}", highlight=False, markup=False)
    columns = (
        TextColumn(f"[bold]{safe_text(config.name)}[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("games"),
        TaskProgressColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
    )  # fmt: skip
    bar = Progress(*columns, console=console, disable=as_json, transient=False)
    task = bar.add_task("games", total=None)

    def on_start(total: int, done: int) -> None:
        bar.update(task, total=total, completed=done)
        if done and not as_json:
            console.print(f"resuming: {done} of {total} games already played")

    def on_game(row: object) -> None:
        bar.advance(task)

    def on_notice(message: str) -> None:
        err_console.print(f"[yellow]note:[/] {safe_text(message)}", highlight=False)

    def on_void(game_id: str, reason: str) -> None:
        if not as_json:
            console.print(f"[yellow]void[/] {safe_text(game_id)}: {safe_text(reason)} (will be played again)")

    try:
        with bar:
            progress = RunProgress(on_start, on_game, on_void, on_notice)
            report = run_tournament(
                config, progress, scheduler=scheduler, insecure=insecure, accept_rebuilt=accept_rebuilt
            )
    except ArenaError as exc:
        fail(str(exc))
    summary = {
        "name": config.name,
        "output": str(config.output),
        "concurrency": None if scheduler else config.concurrency,
        "publish": publish,
        "games": report.total,
        "already_done": report.already_done,
        "played": report.played,
        "voided": report.voided,
        "unfinished": report.unfinished,
        "interrupted": report.interrupted,
    }
    if as_json:
        print_json(summary)
    else:
        if report.interrupted:
            console.print(f"[yellow]stopped[/]: {len(report.unfinished)} games left; run again to resume")
        elif report.unfinished:
            console.print(f"[red]{len(report.unfinished)} games could not be played[/] (voided too often)")
        if show:
            from arena.commands.ratings import show_directory

            show_directory(config.output)
        console.print(f"results are in {config.output}; publish them with: {publish}", highlight=False, markup=False)
    return report.interrupted


def _tables(n: int) -> str:
    return "1 table" if n == 1 else f"{n} tables"
