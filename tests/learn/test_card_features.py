"""example_bots/learned/features.py: each legal card's features come from the seat's view alone, are the
same from the referee's view as in training, and say what the engine does with the card."""

from __future__ import annotations

import importlib
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from learn_support import RULESETS, blind_spots, short, walk

from arena_sdk.engine import Decision
from arena_sdk.envs.observation import SeatKnowledge
from arena_sdk.envs.table import Table
from arena_sdk.protocol import request_to_proto
from arena_sdk.view import View

LEARNED = Path(__file__).resolve().parents[2] / "example_bots" / "learned"
sys.path.insert(0, str(LEARNED))
features = importlib.import_module("features")


def column(name: str) -> int:
    """The index of a feature in a row."""
    names = (*features.CONTEXT, *features.CARD)
    return names.index(name)


def card_observe(table: Table, seat: int) -> dict[str, np.ndarray]:
    """The seat's card features when it is to play (nothing otherwise)."""
    state = table.state
    assert state is not None
    if state.to_move != seat or state.decision is not Decision.PLAY:
        return {}
    cards, rows = features.card_features(table.knowledge(seat))
    return {"cards": np.asarray(cards), "rows": rows}


def leaky_card_observe(table: Table, seat: int) -> dict[str, np.ndarray]:
    """Card features that also count the next seat's spades: the check must catch it."""
    shown = card_observe(table, seat)
    state = table.state
    assert state is not None
    if shown:
        shown["rows"] = shown["rows"] + bin(state.hands[(seat + 1) % state.players] >> 39).count("1")
    return shown


def test_the_row_is_as_wide_as_its_names():
    assert features.FEATURE_COUNT == len(features.CONTEXT) + len(features.CARD)
    assert len(set(features.CONTEXT) | set(features.CARD)) == features.FEATURE_COUNT  # no name twice
    rng = random.Random(1)
    for table in walk(short(RULESETS["pagat"], hands=1), seed=1, rng=rng):
        if table.state.decision is Decision.PLAY:  # type: ignore[union-attr]
            cards, rows = features.card_features(table.knowledge(table.to_move))  # type: ignore[arg-type]
            assert rows.shape == (len(cards), features.FEATURE_COUNT) and rows.dtype == np.float32
            assert np.all(np.isfinite(rows)) and rows.min() >= 0.0 and rows.max() <= 1.0
            break


@pytest.mark.parametrize("rules_name", sorted(RULESETS))
def test_card_features_are_blind_to_every_hidden_card(rules_name):
    checked, moved, differences = blind_spots(rules_name, card_observe)
    assert not differences, differences[:5]
    assert checked > 100 and moved > 5 * checked  # play decisions checked, hidden cards really moved


@pytest.mark.parametrize("rules_name", ["pagat", "two-player"])
def test_the_check_catches_card_features_that_leak(rules_name):
    _, _, differences = blind_spots(rules_name, leaky_card_observe, games=1)
    assert differences


@pytest.mark.parametrize("rules_name", sorted(RULESETS))
def test_a_bots_view_from_the_referee_gives_the_same_card_features(rules_name):
    rules = short(RULESETS[rules_name])
    rng = random.Random(rules_name)
    compared = 0
    for game in range(3):
        for table in walk(rules, seed=f"cards-{game}", rng=rng):
            state = table.state
            assert state is not None
            if state.decision is not Decision.PLAY:
                continue
            seat_view = state.view(state.to_move)  # type: ignore[arg-type]
            view = View(rules, request_to_proto(1, seat_view, 1000, 30000))
            env_cards, env_rows = features.card_features(SeatKnowledge.from_seat_view(seat_view))
            bot_cards, bot_rows = features.card_features(SeatKnowledge.from_view(view))
            assert env_cards == bot_cards and np.array_equal(env_rows, bot_rows)
            compared += 1
    assert compared > 100


def test_the_features_say_what_the_engine_does_with_each_card():
    """For the last seat of a trick, ``wins_now`` is the engine's trick winner; in a four-player hand
    the unseen cards above a card are exactly those the other seats hold (every card is dealt)."""
    rules = short(RULESETS["pagat"], hands=2)
    rng = random.Random(11)
    last_checked = boss_checked = 0
    for game in range(4):
        for table in walk(rules, seed=f"semantics-{game}", rng=rng):
            state = table.state
            assert state is not None
            if state.decision is not Decision.PLAY:
                continue
            me = state.to_move
            assert me is not None
            cards, rows = features.card_features(table.knowledge(me))
            others = 0
            for s in range(4):
                if s != me:
                    others |= state.hands[s]
            for card, row in zip(cards, rows, strict=True):
                above = bin(others & features.ABOVE[card]).count("1")
                assert round(row[column("higher_unseen")] * 13) == above
                assert row[column("boss")] == float(above == 0)
                boss_checked += 1
                if len(state.trick) == 3:
                    after = state.clone()
                    after.apply(card)
                    done = after.hand_results[-1].played if len(after.tricks) == 0 else after.tricks
                    won = done[-1].winner
                    assert row[column("wins_now")] == float(won == me)
                    assert row[column("safe_win")] == row[column("wins_now")]  # the last card's win is sure
                    last_checked += 1
    assert last_checked > 50 and boss_checked > 500


def test_cheapest_winner_and_partner_winning_in_a_set_position():
    """North leads the club 5, East plays the club king, South holds the ace and the 9: the ace
    is the cheapest winner; West, over South's ace, sees its partner East losing."""
    table = Table(RULESETS["pagat"], illegal="raise")
    table.reset(42)
    state = table.state
    assert state is not None
    while state.decision is Decision.BID:
        table.step(52 + 3)
    leader = state.to_move
    assert leader is not None
    # Give the seats known cards: the leader C5, next CK, then CA C9, then C2 (and spades to fill up).
    hands = [0, 0, 0, 0]
    order = [(leader + i) % 4 for i in range(4)]
    hands[order[0]] = 1 << 3
    hands[order[1]] = 1 << 11
    hands[order[2]] = (1 << 12) | (1 << 7)
    hands[order[3]] = 1 << 0
    deck = [c for c in range(52) if not any(h >> c & 1 for h in hands)]
    for seat in order:
        while bin(hands[seat]).count("1") < 13:
            hands[seat] |= 1 << deck.pop()
    state.hands = hands
    table.step(3)  # C5
    table.step(11)  # CK
    cards, rows = features.card_features(table.knowledge(order[2]))
    assert sorted(cards) == [7, 12]
    ace = rows[cards.index(12)]
    nine = rows[cards.index(7)]
    assert ace[column("wins_now")] == 1 and ace[column("cheapest_winner")] == 1 and ace[column("boss")] == 1
    assert nine[column("wins_now")] == 0 and nine[column("lowest_card")] == 1
    assert ace[column("opponent_winning")] == 1 and ace[column("partner_to_play")] == 0
    table.step(12)  # CA
    cards, rows = features.card_features(table.knowledge(order[3]))  # clubs below the ace: none wins
    assert 0 in cards and all(c < 12 for c in cards)
    assert (rows[:, column("opponent_winning")] == 1).all() and (rows[:, column("last_to_play")] == 1).all()
    assert (rows[:, column("wins_now")] == 0).all() and (rows[:, column("partner_winning")] == 0).all()
