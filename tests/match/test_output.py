"""Records on disk: the same value as ``json.dumps``, one line per action (arena.match.output)."""

from __future__ import annotations

import json
import random

import pytest

from arena.match.output import record_text
from arena_sdk.engine import GameState, record_from_state, resolve_ruleset
from arena_sdk.engine.playout import play_random_game


@pytest.mark.parametrize("preset", ["pagat", "wikipedia", "cards4", "two-player"])
def test_a_record_reads_back_as_itself_with_one_line_per_action(preset):
    state = GameState.new(resolve_ruleset(preset, {"max_hands": 3}), 5)
    play_random_game(state, random.Random(5))
    record = record_from_state(state, game_id="g")
    record["events"] = [{"seat": "N", "code": "stale_answer", "detail": "late \u00e9\n\"quoted\"", "request_id": 3}]
    text = record_text(record)
    assert json.loads(text) == json.loads(json.dumps(record))
    lines = text.splitlines()
    actions = [a for hand in record["hands"] for a in hand["actions"]]
    assert len(actions) > 50
    for action in actions:  # each action is one whole line of the file
        assert sum(line.strip().rstrip(",") == json.dumps(action) for line in lines) >= 1, action
    assert len(lines) < 30 + len(actions) + 40 * len(record["hands"])
    assert text.isascii(), "escaped like json.dumps"


def test_keys_values_and_nesting_follow_json_dumps():
    odd = {"a": {1: [1, 2.5, None, True], "b": {"c": {"d": {"e": []}}}}, "t": (1, (2, 3)), "n": float("inf")}
    assert json.loads(record_text(odd)) == json.loads(json.dumps(odd))
    assert record_text({}) == "{}" and json.loads(record_text({"x": []})) == {"x": []}
    with pytest.raises(TypeError):
        record_text({"x": object()})
