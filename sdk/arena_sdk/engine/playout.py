"""Random playouts: uniform random legal decisions, for simulations and benchmarks.

These go through the same :class:`GameState` rules code as everything else;
they only avoid building lists where a bitmask will do.
"""

from __future__ import annotations

import random

from arena_sdk.engine.cards import CARDS
from arena_sdk.engine.state import Decision, GameState


def random_action(state: GameState, rng: random.Random) -> object:
    """A uniformly random legal action for the seat to move."""
    if state.decision is Decision.PLAY:
        mask = state.legal_play_mask()
        # Pick the k-th set bit: cheaper than building the list of cards.
        k = rng._randbelow(mask.bit_count())  # what randrange(n) calls, without its checks
        for _ in range(k):
            mask &= mask - 1
        return CARDS[(mask & -mask).bit_length() - 1]
    return rng.choice(state.legal_actions())


def play_random_hand(state: GameState, rng: random.Random) -> None:
    """Play random decisions until the current hand is scored (or the game ends).

    The card play runs in :meth:`GameState.play_out_hand` (picked from the
    legal-play bitmask, not validated a second time); bids and the
    two-player decisions go through :meth:`GameState.apply`.
    """
    hand = state.hand_number
    play = Decision.PLAY
    while state.decision is not None and state.hand_number == hand:
        if state.decision is play:
            state.play_out_hand(None, rng)
        else:
            state.apply(rng.choice(state.legal_actions()))


def play_random_game(state: GameState, rng: random.Random) -> None:
    """Play random decisions until the game is over."""
    while state.decision is not None:
        play_random_hand(state, rng)
