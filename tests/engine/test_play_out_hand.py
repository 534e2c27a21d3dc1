"""The fast play loop (play_out_hand) ends exactly where apply() ends with the same cards."""

from __future__ import annotations

import random

import pytest

from arena_sdk.engine import CARDS, Decision, GameState, resolve_ruleset
from arena_sdk.engine.playout import random_action
from arena_sdk.engine.state import shuffled_deck

RULESETS = [
    ("pagat", {}), ("wikipedia", {}), ("cards4", {}), ("two-player", {}),
    ("pagat", {"spade_lead": "always"}), ("pagat", {"failed_nil_tricks": "contract"}),
]  # fmt: skip


def _snapshot(state: GameState) -> tuple:
    return (
        state.history, state.tricks, state.hand_results, state.scores, state.bags,
        state.hand_number, state.to_move, state.decision, state.hands, state.spades_broken,
        state.result, [state.view(s) for s in range(state.players)],
    )  # fmt: skip


@pytest.mark.parametrize(("preset", "overrides"), RULESETS)
def test_play_out_hand_matches_apply(preset, overrides):
    rules = resolve_ruleset(preset, {**overrides, "max_hands": 4})
    for seed in range(25):
        state = GameState.new(rules, seed)
        rng = random.Random(seed)
        while state.decision is not None:
            if state.decision is not Decision.PLAY:
                state.apply(random_action(state, rng))
                continue
            # start mid-trick sometimes
            for _ in range(rng.randrange(3)):
                state.apply(random_action(state, rng))
            if state.decision is not Decision.PLAY:
                continue
            reference = state.clone()
            chosen: list[int] = []

            def pick(seat: int, legal: int) -> int:
                cards = [c for c in range(52) if legal >> c & 1]
                assert cards == [int(c) for c in reference_legal(seat)]
                card = rng.choice(cards)
                chosen.append(card)
                reference.apply(CARDS[card])
                return card

            def reference_legal(seat: int) -> list:
                assert reference.to_move == seat
                return reference.legal_actions()

            state.play_out_hand(pick)
            assert _snapshot(state) == _snapshot(reference)


def test_random_play_out_is_legal_and_seeded():
    rules = resolve_ruleset("pagat")
    a, b = GameState.new(rules, 3), GameState.new(rules, 3)
    for s in (a, b):
        while s.decision is not Decision.PLAY:
            s.apply(1)
        s.play_out_hand(None, random.Random(9))
    assert a.history == b.history and len(a.hand_results) == 1


def test_chunked_shuffle_is_the_digit_by_digit_shuffle():
    """The recorded deals must not change: compare with the one-digit-at-a-time form."""
    from arena_sdk.engine.state import chance_int

    for seed in ["x", 0, 12345, "deal-seed"]:
        for hand in (1, 2, 17):
            deck = list(range(52))
            x = chance_int(seed, "deck", hand)
            for i in range(51, 0, -1):
                x, j = divmod(x, i + 1)
                deck[i], deck[j] = deck[j], deck[i]
            assert shuffled_deck(seed, hand) == deck
