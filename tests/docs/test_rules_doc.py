"""docs/rules.md covers every option and preset, and its worked examples are what the engine scores."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena_sdk.engine import resolve_ruleset
from arena_sdk.engine.ruleset import PRESETS, Ruleset, option_help
from arena_sdk.engine.scoring import score_team

REPO = Path(__file__).resolve().parents[2]
RULES = (REPO / "docs" / "rules.md").read_text()


def _options_table() -> dict[str, str]:
    section = RULES.split("## 6. Options", 1)[1].split("## 7.", 1)[0]
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", section, re.MULTILINE)}


def test_every_option_is_in_the_options_table_with_its_default():
    table = _options_table()
    defaults = Ruleset().options()
    assert set(option_help()) == set(table), set(option_help()) ^ set(table)
    for key in option_help():
        default = defaults[key]
        shown = "none" if default is None else str(default)
        assert f"| {shown} |" in table[key] or f"| `{shown}` |" in table[key], (key, table[key])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_is_described_with_what_differs(preset):
    section = RULES.split("## 7. Presets", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith(f"| `{preset}`"))
    base = Ruleset().options()
    for key, value in PRESETS[preset].options().items():
        if key != "players" and value != base[key]:
            assert str(value) in row, (preset, key, value, row)


def _score(rules, bids, tricks, before=0, bags=0, blind=(False, False)):
    return score_team(rules, [0, 1], bids, blind, tricks, before, bags)


def test_worked_example_failed_nil_bags_and_contract():
    bags = _score(resolve_ruleset("pagat", {}), [0, 4], [2, 3])
    assert (bags.score_after, bags.bags_after) == (-138, 2)
    contract = _score(resolve_ruleset("pagat", {"failed_nil_tricks": "contract"}), [0, 4], [2, 3])
    assert (contract.score_after, contract.bags_after) == (-59, 1)
    assert "**−138**" in RULES and "**−59**" in RULES


@pytest.mark.parametrize(("tricks", "score", "bags"), [(7, 389, 9), (8, 290, 0), (9, 291, 1)])
def test_worked_example_bags_past_the_threshold(tricks, score, bags):
    # The team's contract is 5 with no nil: one member seat stands for the partnership.
    result = score_team(resolve_ruleset("pagat", {}), [0], [5], [False], [tricks], 337, 7)
    assert (result.score_after, result.bags_after) == (score, bags)
    assert f"| {tricks} |" in RULES and f"| {score} | {bags} |" in RULES


def test_worked_example_set_contract():
    result = score_team(resolve_ruleset("pagat", {}), [0], [7], [False], [6], 30, 0)
    assert result.score_after == -40
    assert "−40" in RULES
