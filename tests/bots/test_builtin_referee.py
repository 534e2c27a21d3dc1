"""Every built-in tier plays full games of every preset through the real referee."""

from __future__ import annotations

import asyncio
import json

import pytest

from arena.match import TimeControl
from arena.referee.botspec import BotSpec, BotSpecError, parse_bot_spec
from arena.referee.local_match import MatchConfig, run_match
from arena_sdk.engine import resolve_ruleset

HARD_ENV = (("ARENA_HARD_BUDGET_S", "0.05"),)


def _spec(text: str) -> BotSpec:
    spec = parse_bot_spec(text)
    return BotSpec(spec.kind, spec.target, HARD_ENV) if spec.target == "hard" else spec


# Four players: four bots, one per seat, so every tier sits at every table.
# Two players: two matches cover the three tiers.
CASES = [
    ("pagat", ("builtin:easy", "builtin:medium", "builtin:hard", "builtin:medium")),
    ("wikipedia", ("builtin:hard", "builtin:easy", "builtin:medium", "builtin:hard")),
    ("cards4", ("builtin:medium", "builtin:hard", "builtin:easy", "builtin:easy")),
    ("two-player", ("builtin:hard", "builtin:easy")),
    ("two-player", ("builtin:easy", "builtin:medium")),
]


@pytest.mark.parametrize(("preset", "bots"), CASES)
def test_tiers_play_full_games_without_a_strike(tmp_path, preset, bots):
    rules = resolve_ruleset(preset, {"target": 200})  # a full game, a short one
    config = MatchConfig(
        bots=tuple(_spec(b) for b in bots), rules=rules, games=1, seed=f"builtin-{preset}-{bots[0]}",
        time_control=TimeControl(), out_dir=tmp_path / "out", match_id="builtin",
    )  # fmt: skip
    report = asyncio.run(asyncio.wait_for(run_match(config), 900))
    (game,) = report.games
    assert game.result.ending in ("target", "floor"), game.result
    for t in report.totals:
        assert t.strikes == 0 and not t.forfeits, t
    assert {t.name for t in report.totals} <= {"builtin-easy", "builtin-medium", "builtin-hard"}
    records = list((tmp_path / "out").rglob("*.json"))
    kinds = set()
    for path in records:
        data = json.loads(path.read_text())
        for hand in data.get("hands", []):
            kinds.update(a.get("kind") for a in hand.get("actions", []) if isinstance(a, dict))
    if preset != "pagat":
        assert "blind_nil" in kinds, kinds
    if preset == "two-player":
        assert "draw" in kinds, kinds


def test_builtin_spec_parsing():
    spec = parse_bot_spec("builtin:Hard")
    assert (spec.kind, spec.target, spec.label, spec.local) == ("builtin", "hard", "builtin-hard", True)
    assert spec.command.endswith("-m arena_sdk.bots hard")
    with pytest.raises(BotSpecError, match="unknown built-in bot"):
        parse_bot_spec("builtin:expert")
    with pytest.raises(BotSpecError, match="builtin:"):
        parse_bot_spec("nope:x")


def test_tournament_files_take_builtin_entries(tmp_path):
    from arena.tournament.config import ConfigError, load_config

    path = tmp_path / "t.toml"
    path.write_text(
        '[tournament]\nname = "b"\nseed = "s"\n\n[rules]\npreset = "pagat"\n\n'
        '[[entry]]\nname = "easy"\nbot = "builtin:easy"\n\n'
        '[[entry]]\nname = "hard"\nbot = "builtin:hard"\nenv = { ARENA_HARD_BUDGET_S = "0.1" }\n'
    )
    config = load_config(path)
    assert [(e.bot.kind, e.bot.target, e.bot.local) for e in config.entries] == [
        ("builtin", "easy", True), ("builtin", "hard", True),
    ]  # fmt: skip
    path.write_text(path.read_text().replace("builtin:easy", "builtin:expert"))
    with pytest.raises(ConfigError, match="unknown built-in bot"):
        load_config(path)
