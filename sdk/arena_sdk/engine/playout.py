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

    Each decision is what ``state.apply(rng.choice(state.legal_actions()))``
    would pick, except that the cards are drawn from the legal-play bitmask
    (one ``rng.random()`` per card with a choice); the compiled core runs the
    whole hand in C and draws the very same numbers from ``rng``
    (``GameState._random_hand``), the pure core plays the cards in
    :meth:`GameState.play_out_hand` and the rest through :meth:`GameState.apply`.
    """
    state._random_hand(rng)


def play_random_game(state: GameState, rng: random.Random) -> None:
    """Play random decisions until the game is over."""
    while state.decision is not None:
        play_random_hand(state, rng)
