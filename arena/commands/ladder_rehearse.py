"""``arena ladder rehearse``: a simulated term against a real ladder, compressed, and its audit (docs/ladder.md)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena.commands.common import console, err_console, fail, hold_or_fail
from arena.errors import ArenaError
from arena.tables.runlock import LOCK_NAME
from arena.text import safe_text

if TYPE_CHECKING:  # the rehearsal's modules load only when the command runs
    from arena.rehearse.course import Settings
    from arena.rehearse.plan import Plan

#: What a rehearsal does not make yet (the report lists it, so nobody reads its absence as a pass).
#: Without --own-docker the machine's engine may be shared: its daemon is never restarted.
NO_DOCKER_RESTART = "a restart of the Docker daemon (--own-docker runs the ladder on a daemon of its own and restarts it)"
NO_DISK_FULL = "the ladder's disk full for a while (--own-disk puts the ladder on a small filesystem of its own and fills it)"
NOT_REHEARSED = [
    "a Dask cluster (--scheduler): every table is a local process",
]


def rehearse_command(
    directory: Annotated[
        Path | None,
        typer.Argument(
            help="A new directory for the rehearsal's ladder (default: a temporary one, removed after)."
        ),
    ] = None,
    teams: Annotated[int, typer.Option(help="Teams in the course.", min=2, max=200)] = 40,
    hours: Annotated[
        float, typer.Option(help="The term's length in wall-clock hours.", min=0.001)
    ] = 1.0,
    minutes: Annotated[
        float | None,
        typer.Option(help="The term's length in minutes (instead of --hours).", min=0.1),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(help="The course's seed: the same seed, the same teams, uploads and faults."),
    ] = 1,
    faults: Annotated[
        bool,
        typer.Option("--faults/--no-faults", help="Kill -9 and SIGTERM the server on a schedule."),
    ] = True,
    concurrency: Annotated[
        int, typer.Option(help="\\[ladder] concurrency: pairs at once.", min=1)
    ] = 1,
    max_hands: Annotated[
        int,
        typer.Option(
            "--max-hands", help="Hands per game (at least 2: broken bots break at hand 2).", min=2
        ),
    ] = 3,
    own_docker: Annotated[
        bool,
        typer.Option(
            "--own-docker",
            help="Seats and builds on a Docker daemon of the rehearsal's own, restarted as a fault (root).",
        ),
    ] = False,
    own_disk: Annotated[
        bool,
        typer.Option(
            "--own-disk",
            help="The ladder directory on a filesystem of the rehearsal's own (a tmpfs), filled for a while as a fault (root).",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON on standard output.")
    ] = False,
    json_path: Annotated[
        Path | None,
        typer.Option("--json-file", help="Also write the report as JSON to FILE (the console keeps its progress).",
                     metavar="FILE"),
    ] = None,
    html_path: Annotated[
        Path | None,
        typer.Option(
            "--html", help="Write the report as an HTML page (plots inline).", metavar="FILE"
        ),
    ] = None,
) -> None:
    """Play a simulated course against a real ladder (serve, Docker seats, HTTP on 127.0.0.1), then audit it.

    Teams of known strength submit over the API and the site's form (honest,
    broken and hostile uploads), visitors read the site, the server is killed
    and restarted on a schedule (with --own-docker its Docker daemon restarted,
    with --own-disk its disk filled for a while: both need root).  The report says what was stored, voided,
    refused, left behind, how well the standings recovered the true order
    (Kendall τ) and what an organiser would have had to do.  Exit status 1 if
    a game was lost or stored twice, a record differs from its row, a hostile
    upload was not contained, or something was left behind.
    """
    seconds = minutes * 60 if minutes is not None else hours * 3600
    made_here = directory is None
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="rehearsal-"))
    # One rehearsal per directory: locked before it is looked at, cleaned or written (a second one is refused).
    with hold_or_fail(directory, "arena ladder rehearse"):
        if any(p.name != LOCK_NAME for p in directory.iterdir()):
            fail(f"{directory} is not empty: a rehearsal makes its own ladder there")
        report = _rehearse_in(directory, seed, teams, faults, seconds, concurrency, max_hands, own_docker, own_disk,
                              as_json)  # fmt: skip
    _report(report, directory, made_here, as_json, json_path, html_path)


def _rehearse_in(
    directory: Path, seed: int, teams: int, faults: bool, seconds: float, concurrency: int, max_hands: int,
    own_docker: bool, own_disk: bool, as_json: bool,
) -> dict[str, Any]:
    """The rehearsal in ``directory`` (locked), its report with what it could not rehearse."""
    from arena.rehearse.course import Settings
    from arena.rehearse.plan import make_plan

    plan = make_plan(seed, teams, faults=faults, docker_faults=own_docker, disk_faults=own_disk)
    settings = Settings(seconds=seconds, concurrency=concurrency, max_hands=max_hands, own_docker=own_docker,
                        own_disk=own_disk)  # fmt: skip
    try:
        report = _run(directory / "ladder", plan, settings, quiet=as_json)
    except ArenaError as exc:
        fail(f"{exc} (the ladder's log: {directory / 'serve.log'})")
    missing = [
        *([] if own_docker else [NO_DOCKER_RESTART]),
        *([] if own_disk else [NO_DISK_FULL]),
        *NOT_REHEARSED,
    ]
    report["not_rehearsed"] = missing if faults else ["platform faults (--no-faults)", *missing]
    return report


def _report(
    report: dict[str, Any], directory: Path, made_here: bool, as_json: bool, json_path: Path | None,
    html_path: Path | None,
) -> None:
    """Write and print the report; exit 1 (the ladder kept) on a failure, else remove a temporary directory."""
    from arena.rehearse.report import html_report, print_report

    report["directory"] = None if made_here else str(directory)
    if html_path is not None:
        html_path.write_text(html_report(report), encoding="utf-8")
    if json_path is not None:
        json_path.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
    else:
        print_report(report, console)
        for line in report["not_rehearsed"]:
            console.print(f"not rehearsed: {safe_text(line)}", highlight=False)
    if report["failures"]:
        err_console.print(
            f"the ladder is kept for inspection in {safe_text(str(directory))}", highlight=False
        )
        raise typer.Exit(1)
    if made_here:
        from arena.sandbox.tree import remove_tree

        remove_tree(directory, ignore_errors=True)


def _run(directory: Path, plan: Plan, settings: Settings, *, quiet: bool) -> dict[str, Any]:
    """The rehearsal with a rich progress bar on standard error (none with --json)."""
    from arena.rehearse.course import rehearse

    if quiet:
        return rehearse(directory, plan, settings)
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TimeRemainingColumn(), console=err_console,
                  transient=False) as progress:  # fmt: skip
        task = progress.add_task("term", total=settings.seconds)

        def say(at: float, total: float, line: str) -> None:
            progress.update(task, completed=min(at, total))
            if line:
                progress.console.print(f"{at / 60:5.1f} min  {safe_text(line)}", highlight=False)

        return rehearse(directory, plan, settings, say)


def register(app: typer.Typer) -> None:
    """Add ``rehearse`` to the ``arena ladder`` command group."""
    app.command("rehearse")(rehearse_command)


__all__ = ["NOT_REHEARSED", "register"]
