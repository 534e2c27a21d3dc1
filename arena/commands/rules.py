"""``arena rules``: show a resolved ruleset and its hash."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from arena.commands.common import bad_input_exits, console, print_json
from arena_sdk.engine import PRESETS, parse_overrides, resolve_ruleset
from arena_sdk.engine.ruleset import option_help

app = typer.Typer(help="Inspect rulesets: presets, options, hashes.", no_args_is_help=True)

SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Override one option, key=value (repeatable), e.g. --set failed_nil_tricks=contract.",
        show_default=False,
    ),
]


@app.command("show")
def show(
    preset: Annotated[
        str, typer.Argument(help=f"Preset name: {', '.join(PRESETS)}.")
    ] = "pagat",
    overrides: SetOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """Print the resolved ruleset (preset plus --set overrides) and its stable hash."""
    with bad_input_exits():
        rules = resolve_ruleset(preset, parse_overrides(overrides or []))
    if as_json:
        print_json({"ruleset": rules.to_dict(), "hash": rules.hash})
        return
    base = PRESETS[rules.preset]
    table = Table(title=f"ruleset {rules.preset}  hash {rules.hash}")
    table.add_column("option")
    table.add_column("value")
    table.add_column("meaning", style="dim")
    helps = option_help()
    for key, value in rules.options().items():
        changed = key != "players" and getattr(base, key) != value
        shown = "none" if value is None else str(value)
        table.add_row(key, f"[bold]{shown}[/] (set)" if changed else shown, helps.get(key, ""))
    console.print(table)


@app.command("presets")
def presets(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """List the presets with their hashes."""
    if as_json:
        print_json({name: {"hash": r.hash, "ruleset": r.to_dict()} for name, r in PRESETS.items()})
        return
    table = Table(title="presets")
    table.add_column("preset")
    table.add_column("players")
    table.add_column("hash")
    for name, r in PRESETS.items():
        table.add_row(name, str(r.players), r.hash)
    console.print(table)
