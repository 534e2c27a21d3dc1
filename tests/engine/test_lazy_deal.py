"""Engine speed-ups that nobody may notice: lazy four-player deals, scores built without __init__.

The deal is a pure function of the seed (or the given deck), so dealing late
must give the same cards, records and views as dealing at once, whoever looks
first: the ``hands`` attribute, a view, a clone, the record, or the first play.
"""

from __future__ import annotations

import random

import pytest

from arena_sdk.engine import GameState, record_from_state, resolve_ruleset
from arena_sdk.engine.state import shuffled_deck
from arena_sdk.engine.playout import play_random_game


def dealt(deck: list[int], first: int) -> list[int]:
    hands = [0] * 4
    for k, card in enumerate(deck):
        hands[(first + 1 + k % 4) % 4] |= 1 << card
    return hands


@pytest.mark.parametrize("preset", ["pagat", "wikipedia", "cards4"])
def test_every_hand_holds_the_seeded_deal_however_it_is_first_looked_at(preset: str):
    rules = resolve_ruleset(preset)
    for seed in range(30):
        rng = random.Random(seed)
        look = seed % 4  # 0: hands, 1: a view, 2: a clone, 3: nobody looks before the play
        state = GameState.new(rules, seed)
        while not state.is_over:
            number = state.hand_number
            want = dealt(shuffled_deck(seed, number), state.first)
            if look == 0:
                assert state.hands == want
            elif look == 1:
                seat = state.to_move
                view = state.view(seat)
                if view.hand is not None:
                    assert sum(1 << int(c) for c in view.hand) == want[seat]
            elif look == 2:
                assert state.clone().hands == want
            while state.hand_number == number and not state.is_over:
                state.apply(rng.choice(state.legal_actions()))
            assert state.deck_log[number] == shuffled_deck(seed, number)


def test_a_clone_of_an_undealt_hand_deals_the_same_cards_as_the_original():
    state = GameState.new(resolve_ruleset("pagat"), 7)
    copy = state.clone()  # both still undealt
    assert copy.hands == state.hands
    copy.hands[0] = 0  # independent lists once dealt
    assert state.hands[0] != 0


def test_records_are_the_same_with_or_without_an_early_look():
    rules = resolve_ruleset("pagat")
    looked, untouched = GameState.new(rules, 99), GameState.new(rules, 99)
    looked.hands  # noqa: B018 - deal hand 1 at once
    play_random_game(looked, random.Random(5))
    play_random_game(untouched, random.Random(5))
    assert record_from_state(looked) == record_from_state(untouched)


def test_a_record_taken_between_hands_names_every_dealt_deck():
    """After a hand is scored the next one is not dealt yet; the record still has every deck."""
    state = GameState.new(resolve_ruleset("pagat"), 3)
    rng = random.Random(3)
    while state.hand_number == 1:
        state.apply(rng.choice(state.legal_actions()))
    record = record_from_state(state)  # hand 2 has no action: left out, hand 1 kept whole
    assert [h["number"] for h in record["hands"]] == [1]
    assert len(record["hands"][0]["deck"]) == 52


def test_scores_built_without_init_equal_ordinary_instances():
    """The engine builds HandResult and TeamHandScore without their __init__ (for speed):
    every field set, equal and hashable like one built the ordinary way."""
    import dataclasses

    state = GameState.new(resolve_ruleset("pagat"), 11)
    play_random_game(state, random.Random(11))
    for hand in state.hand_results:
        for built in (hand, *hand.teams):
            names = {f.name for f in dataclasses.fields(built)}
            assert set(vars(built)) == names, type(built).__name__
            ordinary = type(built)(**{n: getattr(built, n) for n in names})
            assert ordinary == built and hash(ordinary) == hash(built) and repr(ordinary) == repr(built)


@pytest.mark.parametrize("preset", ["pagat", "two-player"])
def test_views_built_without_init_equal_ordinary_instances(preset):
    """``GameState.view`` builds its SeatView without the frozen __init__ (the referee builds one per
    decision): every field set, equal, hashable and printable like one built the ordinary way."""
    import dataclasses

    from arena_sdk.engine.state import SeatView

    rules = resolve_ruleset(preset, {"max_hands": 2})
    state = GameState.new(rules, 17)
    rng = random.Random(17)
    names = {f.name for f in dataclasses.fields(SeatView)}
    while not state.is_over:
        for seat in range(rules.players):
            built = state.view(seat)
            assert set(vars(built)) == names
            ordinary = SeatView(**{n: getattr(built, n) for n in names})
            assert ordinary == built and hash(ordinary) == hash(built) and repr(ordinary) == repr(built)
        state.apply(rng.choice(state.legal_actions()))
