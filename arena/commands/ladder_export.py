"""``arena ladder export``: the leaderboard for grading, as CSV and/or JSON (docs/ladder.md)."""

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
) -> None:
    """The leaderboard for grading: rank, team, version, Elo and 95% interval, pairs, points per hand, at a timestamp.

    Read from the stores (fine while the server runs), by the same definition as the site and `arena ladder show`. With neither option, CSV to standard output.
    """
    from arena.ladder.export import export, to_csv, to_json

    if csv_path is None and json_path is None:
        csv_path = Path("-")
    if str(csv_path) == "-" and str(json_path) == "-":
        fail("--csv and --json cannot both go to standard output: give one of them a file")
    try:
        table = export(directory)
    except ArenaError as exc:
        fail(str(exc))
    if csv_path is not None:
        _write(csv_path, to_csv(table))
    if json_path is not None:
        _write(json_path, to_json(table))
    written = [str(p) for p in (csv_path, json_path) if p is not None and str(p) != "-"]
    if written:
        err_console.print(
            f"{len(table.rows)} versions of {safe_text(table.ladder)} at {table.at} written to "
            f"{safe_text(', '.join(written))}",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    """Add ``export`` to the ``arena ladder`` command group."""
    app.command("export")(export_command)


__all__ = ["register"]
