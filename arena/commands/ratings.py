"""``arena ratings show`` and ``arena ratings publish``: Elo with error bars from a tournament."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import console, fail, print_json
from arena.publish import Standings, ratings_document, rich_tables, write_outputs
from arena.ratings import Ratings, fit
from arena.tournament import StoreError
from arena.tournament.standings import load_standings

app = typer.Typer(help="Ratings of a tournament: tables, JSON, CSV, Markdown, HTML.", no_args_is_help=True)

DirArgument = Annotated[Path, typer.Argument(help="A tournament's output directory (it holds results.sqlite).")]


def rate(directory: Path) -> tuple[Standings, Ratings]:
    """Load a tournament's standings and fit the ratings; bad input exits 2."""
    try:
        standings = load_standings(directory)
    except StoreError as exc:
        fail(str(exc))
    if not standings.results:
        fail(f"{directory}: no scored games yet")
    try:
        return standings, fit(standings.results)
    except ValueError as exc:
        fail(f"cannot rate {directory}: {exc}")


def show_directory(directory: Path) -> None:
    """Print the leaderboard, crosstable and faults of a tournament directory."""
    standings, ratings = rate(directory)
    for table in rich_tables(standings, ratings):
        console.print(table)


@app.command("show")
def show(
    directory: DirArgument,
    as_json: Annotated[bool, typer.Option("--json", help="Print ratings.json's content instead.")] = False,
) -> None:
    """Leaderboard (rank, Elo, ±95%, games, score %, W/L/D), crosstable, and faults per bot.

    Elo is a Bradley–Terry maximum-likelihood fit over all games (pool mean
    1500); the intervals come from duplicate pairs (cluster-robust).
    """
    if as_json:
        standings, ratings = rate(directory)
        print_json(ratings_document(standings, ratings))
        return
    show_directory(directory)


@app.command("publish")
def publish(
    directory: DirArgument,
    out: Annotated[
        Path,
        typer.Option(help="Where to write ratings.json, results.csv, leaderboard.md, index.html, games.html."),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the written paths as JSON.")] = False,
    replays: Annotated[
        bool, typer.Option("--replays/--no-replays", help="Write games.html and a replay page per game.")
    ] = True,
    with_notes: Annotated[
        bool,
        typer.Option("--with-notes", help="Show the bots' notes on their decisions in the replay pages (off: a seat's own)."),
    ] = False,
    with_logs: Annotated[
        bool,
        typer.Option(
            "--with-logs",
            help="Publish the bots' logs (as plain .txt, the last 1 MiB of each) and link them from each game's "
            "replay page. Off by default: logs can hold anything a bot printed.",
        ),
    ] = False,
) -> None:
    """Write the publishable results; every page works opened from disk.

    Besides the leaderboard files, games.html lists every game (pairing, deal,
    table, ending, score) with a link to its replay page under games/, and a
    side-by-side page per duplicate pair; the crosstable links to each pairing's
    games (docs/replay.md).  Publishing again rebuilds only the replay pages of
    new or changed records.
    """
    standings, ratings = rate(directory)
    try:
        paths = write_outputs(
            standings, ratings, out, records_dir=directory if replays else None, with_notes=with_notes,
            with_logs=with_logs,
        )
    except OSError as exc:
        fail(f"cannot write to {out}: {exc.strerror or exc}")
    if as_json:
        print_json({k: str(v) for k, v in paths.items()})
    else:
        for kind, path in paths.items():
            console.print(f"{kind:>4}: {path}", soft_wrap=True)
