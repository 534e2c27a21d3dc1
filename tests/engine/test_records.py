"""Game records: written from a state, replayed, and rejected when corrupt."""

from __future__ import annotations

import copy
import json
import random

import pytest

from arena_sdk.engine import (
    GameState,
    RecordError,
    record_from_state,
    replay_record,
    resolve_ruleset,
)
from arena_sdk.engine.playout import play_random_game


def finished_record(preset: str = "pagat", seed: int = 3, **overrides: str) -> dict:
    rules = resolve_ruleset(preset, {"max_hands": "3", **overrides})
    state = GameState.new(rules, seed)
    play_random_game(state, random.Random(seed))
    return json.loads(json.dumps(record_from_state(state, game_id="g1")))


@pytest.mark.parametrize("preset", ["pagat", "wikipedia", "cards4", "two-player"])
def test_record_round_trip(preset):
    record = finished_record(preset)
    report = replay_record(record)
    assert report.result.hands == len(record["hands"]) == record["result"]["hands"]
    assert report.actions == sum(len(h["actions"]) for h in record["hands"])
    assert record["ruleset_hash"] == resolve_ruleset(preset, {"max_hands": "3"}).hash


def test_minimal_record_with_only_seed_and_actions_replays():
    record = finished_record("two-player")
    full = replay_record(record).result
    for hand in record["hands"]:
        del hand["deck"], hand["result"], hand["first"], hand["number"]
    del record["result"], record["start"]
    assert replay_record(record).result == full


def test_record_from_given_deal_and_start_scores():
    rules = resolve_ruleset("pagat", {"max_hands": "1"})
    deck = list(range(52))
    state = GameState.new(rules, "s", first=2, scores=(337, 20), bags=(7, 0), decks={1: deck})
    play_random_game(state, random.Random(1))
    record = record_from_state(state)
    assert record["start"] == {"scores": {"NS": 337, "EW": 20}, "bags": {"NS": 7, "EW": 0}}
    assert record["hands"][0]["deck"][:2] == ["C2", "C3"]
    report = replay_record(json.loads(json.dumps(record)))
    assert report.result.scores == state.result.scores


def corrupt(record: dict, mutate) -> str:
    bad = copy.deepcopy(record)
    mutate(bad)
    with pytest.raises(RecordError) as info:
        replay_record(bad)
    return str(info.value)


def first_play_index(hand: dict) -> int:
    return next(i for i, a in enumerate(hand["actions"]) if a["kind"] == "play")


def test_illegal_action_is_named_with_its_path():
    record = finished_record()
    hand = record["hands"][1]
    i = first_play_index(hand) + 1  # the second card of the first trick

    def swap_in_other_seats_card(r: dict) -> None:
        # Play a card the seat does not hold: one the leader just played.
        r["hands"][1]["actions"][i]["action"] = r["hands"][1]["actions"][i - 1]["action"]

    message = corrupt(record, swap_in_other_seats_card)
    assert message.startswith(f"hands[1].actions[{i}]: illegal play")
    assert "does not hold" in message


def test_wrong_score_is_named():
    record = finished_record()

    def bump(r: dict) -> None:
        r["hands"][2]["result"]["teams"]["EW"]["score_after"] += 1

    message = corrupt(record, bump)
    assert message.startswith("hands[2].result.teams.EW.score_after: record says")


def test_wrong_final_result_is_named():
    message = corrupt(finished_record(), lambda r: r["result"].update(winner="XX"))
    assert message.startswith("result.winner")


def test_out_of_turn_and_truncated_and_extra():
    record = finished_record()
    message = corrupt(record, lambda r: r["hands"][0]["actions"][0].update(seat="S" if r["hands"][0]["actions"][0]["seat"] != "S" else "E"))
    assert message.startswith("hands[0].actions[0]: record has")
    message = corrupt(record, lambda r: r["hands"][2]["actions"].pop())
    assert message.startswith("hands[2].actions: hand 3 ends before")
    message = corrupt(record, lambda r: r["hands"].append(copy.deepcopy(r["hands"][0])))
    assert message.startswith("hands[3]: the game was already over")


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda r: r.update(version=99), "version"),
        (lambda r: r.update(format="chess"), "format"),
        (lambda r: r.update(ruleset_hash="0" * 16), "ruleset_hash"),
        (lambda r: r["ruleset"].update(preset="nope"), "ruleset"),
        (lambda r: r["ruleset"].update(target=0), "ruleset"),
        (lambda r: r.update(first="Q"), "first"),
        (lambda r: r.update(surprise=1), "record"),
        (lambda r: r["hands"][1]["deck"].__setitem__(0, "ZZ"), "hands[1].deck"),
        (lambda r: r["hands"][1]["deck"].__setitem__(0, r["hands"][1]["deck"][1]), "hands[1].deck"),
        (lambda r: r["hands"][0]["actions"][3].update(action="banana"), "hands[0].actions[3]"),
        (lambda r: r["hands"][0]["actions"][3].pop("kind"), "hands[0].actions[3]"),
    ],
)
def test_malformed_records_name_the_first_bad_entry(mutate, path):
    message = corrupt(finished_record(), mutate)
    assert message.startswith(path + ":"), message


def test_changed_deck_is_detected_by_the_actions():
    record = finished_record()

    def swap_two_cards(r: dict) -> None:
        deck = r["hands"][0]["deck"]
        deck[0], deck[1] = deck[1], deck[0]

    message = corrupt(record, swap_two_cards)
    assert message.startswith("hands[0]")
