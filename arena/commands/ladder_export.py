"""``arena ladder export``: the leaderboard for grading, as CSV and/or JSON; ``--final``: the final grade table (docs/ladder.md)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import err_console, fail
from arena.errors import ArenaError
from arena.text import safe_text


def _write(target: Path, text: str) -> None:
    """``text`` to ``target`` whole or not at all (a temporary file renamed over it); '-' is stdout."""
    if str(target) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")


def export_command(
    directory: Annotated[Path, typer.Argument(help="The ladder directory (made by arena ladder init).")],
    csv_path: Annotated[Path | None, typer.Option("--csv", help="Write the table as CSV here ('-': standard output).", metavar="FILE")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write it as JSON here ('-': standard output).", metavar="FILE")] = None,
    final: Annotated[bool, typer.Option("--final", help="The frozen final table instead: one row per team member, with the grade from ladder.toml's \\[grades].")] = False,
    canvas_path: Annotated[Path | None, typer.Option("--canvas", help="With --final: the grades in Canvas's gradebook import shape, here.", metavar="FILE")] = None,
    assignment: Annotated[str, typer.Option("--assignment", help="With --canvas: the Canvas assignment's column name.")] = "Spades ladder",
) -> None:
    """The leaderboard for grading: rank, team, version, Elo and 95% interval, pairs, points per hand, at a timestamp.

    Read from the stores (fine while the server runs), by the same definition as the site and `arena ladder show`. With neither option, CSV to standard output.
    With --final: the final table frozen after the deadline (refused before), one row per member, e-mail first, with a grade column (docs/ladder.md, "Running a course").
    """
    from arena.ladder.config import load_ladder_config
    from arena.ladder.course import export as ex

    if csv_path is None and json_path is None and canvas_path is None:
        csv_path = Path("-")
    if sum(str(p) == "-" for p in (csv_path, json_path, canvas_path) if p is not None) > 1:
        fail("only one of --csv, --json and --canvas can go to standard output: give the others a file")
    if canvas_path is not None and not final:
        fail("--canvas writes the final grades: add --final")
    try:
        if final:
            table = ex.final_export(load_ladder_config(directory))
            texts = {csv_path: ex.final_to_csv, json_path: ex.final_to_json,
                     canvas_path: lambda t: ex.final_to_canvas(t, assignment)}  # fmt: skip
            what = f"the final table of {safe_text(table.ladder)} (frozen {table.frozen_at}): {len(table.teams)} teams"
        else:
            table = ex.export(load_ladder_config(directory))  # type: ignore[assignment]
            texts = {csv_path: ex.to_csv, json_path: ex.to_json}
            what = f"{len(table.rows)} versions of {safe_text(table.ladder)} at {table.at}"  # type: ignore[attr-defined]
    except ArenaError as exc:
        fail(str(exc))
    for path, render in texts.items():
        if path is not None:
            _write(path, render(table))  # type: ignore[arg-type]
    written = [str(p) for p in (csv_path, json_path, canvas_path) if p is not None and str(p) != "-"]
    if written:
        err_console.print(f"{what} written to {safe_text(', '.join(written))}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``export`` to the ``arena ladder`` command group."""
    app.command("export")(export_command)


__all__ = ["register"]
