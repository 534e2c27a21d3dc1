"""``arena replay``: re-simulate a game record and check it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from arena.commands.common import bad_input_exits, console, fail, print_json
from arena.match.timing import record_timing
from arena_sdk.engine import game_result_to_json, replay_record, team_name


def load_record(path: Path) -> object:
    """Read a record file; unreadable or non-JSON files exit 2 with the reason."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    except UnicodeDecodeError:
        fail(f"{path} is not a text file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")


def replay(
    record: Annotated[Path, typer.Argument(help="A game record (JSON) to check.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the final result as JSON.")] = False,
) -> None:
    """Re-simulate RECORD: every action must be legal and every stored score must match.

    Prints the final scores.  A corrupt or inconsistent record exits 2 with a
    message naming the first bad entry, e.g. ``hands[2].actions[14]``.
    """
    data = load_record(record)
    with bad_input_exits():
        report = replay_record(data)
    n = report.rules.players
    if as_json:
        print_json(
            {
                "ok": True,
                "ruleset_hash": report.rules.hash,
                "actions": report.actions,
                **game_result_to_json(n, report.result),
                "timing": record_timing(data),
            }
        )
        return
    result = report.result
    winner = "draw" if result.winner is None else team_name(n, result.winner)
    console.print(
        f"[green]replay OK[/]: {record} ({report.actions} decisions, "
        f"ruleset {report.rules.preset} {report.rules.hash})",
        soft_wrap=True,
    )
    table = Table()
    table.add_column("team" if n == 4 else "player")
    table.add_column("score", justify="right")
    table.add_column("bags", justify="right")
    for t in range(2):
        table.add_row(team_name(n, t), str(result.scores[t]), str(result.bags[t]))
    console.print(table)
    console.print(f"ended by [bold]{result.ending}[/] after {result.hands} hands; winner: [bold]{winner}[/]")
