"""The observation tensor: its layout, its features, and the same numbers in the arena as in training."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from learn_support import RULESETS, random_action, short, walk

from arena_sdk.engine import Decision, GameState, resolve_ruleset
from arena_sdk.engine.cards import parse_card
from arena_sdk.envs import layout
from arena_sdk.envs.layout import BLOCK, BLOCKS, OBSERVATION_SIZE
from arena_sdk.envs.observation import SeatKnowledge, encode, legal_actions, legal_mask, rule_features
from arena_sdk.envs.table import Table
from arena_sdk.protocol import request_to_proto
from arena_sdk.view import View

REPO = Path(__file__).resolve().parents[2]


def block(obs: np.ndarray, name: str) -> np.ndarray:
    b = BLOCK[name]
    return obs[b.offset : b.offset + b.size]


def test_blocks_tile_the_vector_and_the_docs_list_each_one():
    assert BLOCKS[0].offset == 0
    for before, after in zip(BLOCKS, BLOCKS[1:], strict=False):
        assert after.offset == before.offset + before.size
    assert OBSERVATION_SIZE == 750
    doc = (REPO / "docs" / "learning.md").read_text()
    for b in BLOCKS:
        row = re.search(rf"^\| `{b.name}` \| {b.offset} \| {b.size} \|", doc, re.MULTILINE)
        assert row, f"docs/learning.md has no row for block {b.name} at {b.offset}, size {b.size}"
    for feature in layout.RULE_FEATURES:
        assert feature in doc, feature
    for ids, meaning in layout.ACTIONS:
        assert f"| {ids} | {meaning} |" in doc


@pytest.mark.parametrize("rules_name", sorted(RULESETS))
def test_a_bots_view_from_the_referee_gives_the_environments_numbers(rules_name):
    """What PolicyBot builds from a DecisionRequest equals what the environment builds from the engine."""
    rules = short(RULESETS[rules_name])
    rng = random.Random(rules_name)
    compared = exchanges = 0
    for game in range(4):
        for table in walk(rules, seed=f"same-{game}", rng=rng):
            state = table.state
            assert state is not None
            seat = state.to_move
            assert seat is not None
            seat_view = state.view(seat)
            view = View(rules, request_to_proto(1, seat_view, 1000, 30000))
            marks = [table.marked]
            if state.decision is Decision.EXCHANGE:
                exchanges += 1
                hand = [int(c) for c in seat_view.hand]  # type: ignore[union-attr]
                marks += [hand[:1], hand[:3]]
            for marked in marks:
                from_env, from_bot = SeatKnowledge.from_seat_view(seat_view), SeatKnowledge.from_view(view)
                assert np.array_equal(encode(from_env, marked), encode(from_bot, marked))
                assert np.array_equal(legal_mask(from_env, marked), legal_mask(from_bot, marked))
                compared += 1
    assert compared > 100
    if rules.players == 2 and rules.blind_nil != "off":
        assert exchanges > 0


def _after(rules_name: str, actions: list[str]) -> tuple[Table, dict[str, np.ndarray]]:
    """Play ``actions`` (``"bid 3"``, ``"card SA"``, ``"blind"``, ``"no blind"``, ``"keep"``)."""
    table = Table(RULESETS[rules_name], illegal="raise")
    table.reset(42)
    for text in actions:
        kind, _, arg = text.partition(" ")
        ids = {"bid": lambda: layout.BID_BASE + int(arg), "card": lambda: int(parse_card(arg))}
        table.step(ids[kind]())
    seat = table.to_move
    assert seat is not None
    return table, table.observe(seat)


def test_features_of_a_hand_in_play_are_where_the_layout_says():
    state = GameState.new(RULESETS["pagat"], 42)
    table = Table(RULESETS["pagat"], illegal="raise")
    table.reset(42)
    rng = random.Random(1)
    bids = []
    while table.state.decision is Decision.BID:  # type: ignore[union-attr]
        bid = 2 + len(bids)
        bids.append((table.to_move, bid))
        table.step(layout.BID_BASE + bid)
    leader = table.to_move
    first_card = random_action(table.observe(leader)["action_mask"], rng)  # type: ignore[arg-type]
    table.step(first_card)
    me = table.to_move
    assert me is not None
    obs = table.observe(me)["observation"]
    hand = block(obs, "hand")
    assert sorted(np.flatnonzero(hand)) == sorted(table.hand_cards(me))
    rel_leader = (leader - me) % 4  # type: ignore[operator]
    assert rel_leader == 3  # the leader sits on my right
    assert block(obs, "trick")[52 * 3 + first_card] == 1 and block(obs, "trick").sum() == 1
    assert block(obs, "played")[52 * 3 + first_card] == 1
    assert block(obs, "leader")[3] == 1
    bid_block = block(obs, "bids").reshape(4, layout.BID_SLOTS)
    for seat, bid in bids:
        assert bid_block[(seat - me) % 4, 1 + bid] == 1
    assert block(obs, "decision")[layout.DECISION_ORDER.index("play")] == 1
    assert block(obs, "dealer")[(state.first - me) % 4] == 1
    assert block(obs, "rules")[0] == 1.0  # four players
    mask = table.observe(me)["action_mask"]
    led = first_card // 13
    legal = set(np.flatnonzero(mask))
    mine = set(table.hand_cards(me))
    follow = {c for c in mine if c // 13 == led}
    assert legal == (follow or mine)


def test_two_player_draw_shows_the_offered_card_and_the_seen_discards():
    table = Table(RULESETS["two-player+no-blind"], illegal="raise")
    table.reset(3)
    seat = table.to_move
    state = table.state
    assert state is not None and state.decision is Decision.DRAW
    offered = state.stock[state.stock_pos]
    below = state.stock[state.stock_pos + 1]
    obs = table.observe(seat)  # type: ignore[arg-type]
    assert np.flatnonzero(block(obs["observation"], "offered")).tolist() == [offered]
    assert np.flatnonzero(obs["action_mask"]).tolist() == [layout.KEEP_OFFERED, layout.TAKE_NEXT]
    table.step(layout.TAKE_NEXT)  # discard the offered card, keep the next
    after = table.observe(seat)["observation"]  # type: ignore[arg-type]
    assert block(after, "seen_discards")[offered] == 1
    assert block(after, "hand")[below] == 1


def test_rule_features_follow_the_options():
    base = rule_features(resolve_ruleset("pagat"))
    wiki = rule_features(resolve_ruleset("wikipedia"))
    assert len(base) == len(layout.RULE_FEATURES) == BLOCK["rules"].size
    names = layout.RULE_FEATURES
    assert base[names.index("lose_floor set (1) or none (0)")] == 0
    assert wiki[names.index("lose_floor / 500 (0 when none)")] == pytest.approx(-0.4)
    assert wiki[names.index("spade_lead trumped")] == 1 and base[names.index("spade_lead broken")] == 1
    huge = rule_features(resolve_ruleset("pagat", {"nil_value": 100000}))
    assert huge[names.index("nil_value / 100")] == layout.FEATURE_BOUND  # clipped to the space's bound


def test_exchange_is_chosen_a_card_at_a_time_and_ends_after_three():
    rules = RULESETS["two-player"]
    rng = random.Random(0)
    for seed in range(200):
        table = Table(rules, illegal="raise")
        table.reset(seed)
        while not table.over and table.state.decision is not Decision.EXCHANGE:  # type: ignore[union-attr]
            mask = table.observe(table.to_move)["action_mask"]  # type: ignore[arg-type]
            table.step(random_action(mask, rng, blind_rate=1.0))
            if table.state.hand_number > 1:  # type: ignore[union-attr]
                break
        if table.state.decision is Decision.EXCHANGE:  # type: ignore[union-attr]
            break
    else:
        pytest.fail("no exchange reached")
    seat = table.to_move
    assert seat is not None
    hand = table.hand_cards(seat)
    k = table.knowledge(seat)
    assert legal_actions(k) == [*hand, layout.FINISH_EXCHANGE]
    table.step(hand[0])
    table.step(hand[1])
    assert table.marked == hand[:2]
    obs = table.observe(seat)
    assert np.flatnonzero(block(obs["observation"], "marked")).tolist() == hand[:2]
    assert not obs["action_mask"][hand[0]] and obs["action_mask"][hand[2]]
    exchanged_before = list(table.state.exchanged)  # type: ignore[union-attr]
    table.step(hand[2])  # the third card ends the exchange by itself
    assert table.marked == []
    assert table.state.exchanged[seat] == 3 and exchanged_before[seat] == 0  # type: ignore[union-attr]
