"""Hard's world sampler draws exactly the worlds of ``DealSampler`` (it only remembers the split options)."""

from __future__ import annotations

import random

from arena_sdk.bots.worlds import WorldSampler
from arena_sdk.engine import Decision, GameState, resolve_ruleset
from arena_sdk.sampling import DealSampler, honour_bid_model


def test_same_worlds_as_deal_sampler_with_voids():
    checked = 0
    for seed in range(30):
        rng = random.Random(seed)
        state = GameState.new(resolve_ruleset("pagat"), seed)
        while state.decision is not Decision.PLAY:
            state.apply(rng.choice([1, 2, 3, 4]))
        for _ in range(rng.randrange(40)):
            state.apply(rng.choice(state.legal_actions()))
        view = state.view(state.to_move)
        for model in (None, honour_bid_model()):
            plain, cached = DealSampler(view, model), WorldSampler(view, model)
            r1, r2 = random.Random(seed), random.Random(seed)
            for _ in range(5):
                assert cached.sample(r2).hands == plain.sample(r1).hands
            checked += len(plain.groups) > 1  # voids shown: more than one group of hidden cards
    assert checked >= 10
