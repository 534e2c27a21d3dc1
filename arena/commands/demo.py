"""``arena demo``: play a game of random decisions, save its record, replay it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import bad_input_exits, console
from arena.commands.replay import replay
from arena.commands.rules import SetOption
from arena.match.output import record_text
from arena_sdk.engine import GameState, parse_overrides, record_from_state, resolve_ruleset
from arena_sdk.engine.playout import play_random_game


def demo(
    preset: Annotated[str, typer.Option("--rules", help="Ruleset preset.")] = "pagat",
    overrides: SetOption = None,
    seed: Annotated[int, typer.Option(help="Game seed (deals and random decisions).")] = 1,
    out: Annotated[Path, typer.Option(help="Directory for the game record.")] = Path("demo-out"),
) -> None:
    """Play one game of random decisions, write its record, and replay it to check it."""
    with bad_input_exits():
        rules = resolve_ruleset(preset, parse_overrides(overrides or []))
    state = GameState.new(rules, seed)
    play_random_game(state, random.Random(seed))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"demo-{rules.preset}-{seed}.json"
    path.write_text(record_text(record_from_state(state, game_id=path.stem)) + "\n")
    console.print(f"played {len(state.hand_results)} hands of random decisions; record: {path}")
    replay(path, as_json=False)
