"""Random games walked decision by decision, for tests that check every view along the way."""

from __future__ import annotations

import random
from collections.abc import Iterator

from arena_sdk.engine import Decision, GameState, resolve_ruleset
from arena_sdk.engine.playout import random_action


def decision_views(preset: str, seed: int, every: int = 1) -> Iterator[tuple[GameState, object]]:
    """The real state and the view of the seat to move, every ``every`` decisions of a random
    game of three hands (blind nil taken 40% of the times it is offered, so it happens)."""
    rules = resolve_ruleset(preset, {"max_hands": 3})
    state = GameState.new(rules, seed)
    rng = random.Random(seed)
    step = 0
    while state.decision is not None:
        if step % every == 0:
            yield state, state.view(state.to_move)
        step += 1
        if state.decision is Decision.BLIND_NIL:
            state.apply(rng.random() < 0.4)
        else:
            state.apply(random_action(state, rng))
