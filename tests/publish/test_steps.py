"""The viewer's step data (no browser): complete, compact, referee fields kept, safe in HTML."""

from __future__ import annotations

import copy
import json

import pytest
from replay_records import HOSTILE_NAME, record

from arena.publish.steps import full_steps, game_steps
from arena.publish.viewer import json_for_html, standalone_html
from arena_sdk.engine import RecordError, replay_record


def test_one_step_per_decision_plus_deals_and_the_end():
    rec = record("pagat", 11)
    data = game_steps(rec)
    decisions = sum(len(h["actions"]) for h in rec["hands"])
    assert len(data["steps"]) == decisions + len(rec["hands"]) + 1
    full = full_steps(data)
    assert [h["n"] for h in data["hands"]] == [1, 2, 3]
    for h in data["hands"]:
        assert full[h["step"]]["a"] is None and full[h["step"]]["n"] == h["n"]
        assert len(h["tricks"]) == 13
    assert full[-1]["end"]["ending"] == replay_record(rec).result.ending
    # Deltas: a card played changes a handful of keys, never the whole state.
    play = next(s for s in data["steps"] if s.get("a") and s["a"]["k"] == "play")
    assert len(play) <= 8


def test_referee_fields_are_kept_cpu_ms_included():
    rec = record("two-player", 14)
    report = replay_record(rec)
    with_cpu = copy.deepcopy(rec)
    first = with_cpu["hands"][0]["actions"][0]
    first["cpu_ms"] = 3.25
    data = game_steps(with_cpu, report)  # the record as a newer referee would write it
    step = full_steps(data)[1]
    assert step["a"]["cpu"] == 3.25 and step["a"]["ms"] == first["ms"]
    default = next(s for s in full_steps(data) if s["a"] and s["a"].get("def"))
    assert default["a"]["def"] == "timeout" and ["timeout", default["a"]["s"]] == default["e"][0][:2]


def test_a_bad_record_makes_no_page():
    rec = record("pagat", 11)
    rec["hands"][0]["actions"][5]["action"] = 99
    with pytest.raises(RecordError):
        game_steps(rec)


def test_names_cannot_close_the_data_block():
    rec = record("pagat", 11, names=(HOSTILE_NAME, "x</script >y"))
    page = standalone_html(game_steps(rec))
    block = page[page.index('class="game-data"') :]
    block = block[: block.index("</script>")]
    assert "<" not in block.split(">", 1)[1]  # no tag can start inside the JSON
    assert json.loads(block.split(">", 1)[1])["names"][0]["name"] == HOSTILE_NAME
    assert json_for_html({"a": "\u2028&"}) == '{"a":"\\u2028\\u0026"}'
