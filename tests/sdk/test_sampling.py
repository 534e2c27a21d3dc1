"""The deal sampler: worlds never contradict the view; frequencies match exact counting."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from arena_sdk.engine import CARDS, Decision, GameState, resolve_ruleset
from arena_sdk.engine.playout import random_action
from game_walk import decision_views

from arena_sdk.sampling import DISCARD, DealSampler, honour_bid_model, voids_of

PRESETS = ("pagat", "wikipedia", "cards4", "two-player")
FIELDS = (
    "seat", "hand_number", "first", "decision", "to_move", "legal_actions", "hand", "bids",
    "blind", "tricks_won", "leader", "current_trick", "tricks", "spades_broken", "scores",
    "bags", "offered_card", "seen_discards", "exchanged",
)  # fmt: skip


def _same_knowledge(world: GameState, real) -> None:
    seen = world.view(real.seat)
    for name in FIELDS:
        assert getattr(seen, name) == getattr(real, name), name


@pytest.mark.parametrize("preset", PRESETS)
def test_worlds_never_contradict_the_view(preset):
    rng = random.Random(5)
    checked = 0
    kinds_seen = set()
    for seed in range(3):
        for real_state, view in decision_views(preset, seed, every=3):
            sampler = DealSampler(view)
            for _ in range(3):
                alloc = sampler.sample_allocation(rng)
                # Every world, built from scratch by replaying the hand's public
                # actions with apply() (which checks every play, so voids and
                # spade leads are honoured), shows the seat exactly what it knows.
                world = sampler._build(sampler._hands(alloc), alloc, rng)
                _same_knowledge(world, view)
                _same_knowledge(sampler._state(alloc, rng), view)
                checked += 1
            kinds_seen.add(view.decision)
            # the real deal is one of the counted worlds
            assert sampler.count >= 1
    kinds = len(kinds_seen)
    wanted = {"pagat": 2, "wikipedia": 3, "cards4": 3, "two-player": 5}[preset]
    assert checked > 50 and kinds >= wanted, kinds_seen


def test_sampled_worlds_play_on_to_the_end_of_the_hand():
    rng = random.Random(1)
    for preset in PRESETS:
        for _state, view in decision_views(preset, 9, every=7):
            world = DealSampler(view).sample(rng)
            hand = world.hand_number
            while world.decision is not None and world.hand_number == hand:
                world.apply(random_action(world, rng))


def _exact_frequencies(view, sampler):
    """Brute force: every split of the hidden cards over the holders that fits sizes and voids."""
    voids = voids_of(view)
    cards = sorted(c for g in sampler.groups for c in g.cards)
    holders, sizes = sampler.holders, sampler.sizes
    counts = {(c, h): 0 for c in cards for h in holders}
    total = 0

    def fits(h, chosen):
        return not (isinstance(h, int) and any(c // 13 in voids[h] for c in chosen))

    def rec(i, left, placed):
        nonlocal total
        if i == len(holders):
            total += 1
            for h, chosen in placed:
                for c in chosen:
                    counts[c, h] += 1
            return
        for chosen in itertools.combinations(left, sizes[i]):
            if fits(holders[i], chosen):
                rest = [c for c in left if c not in chosen]
                rec(i + 1, rest, placed + [(holders[i], chosen)])

    rec(0, cards, [])
    return total, {k: v / total for k, v in counts.items()}


def _late_view(preset: str, seed: int, tricks_left: int):
    for state, view in decision_views(preset, seed):
        if view.decision is Decision.PLAY and len(view.tricks) == 13 - tricks_left and view.hand_number == 1:
            return view
    raise AssertionError("no such position")


@pytest.mark.parametrize(("preset", "seed"), [("pagat", 3), ("pagat", 4), ("wikipedia", 8), ("two-player", 2)])
def test_card_location_frequencies_match_exact_counting(preset, seed):
    view = _late_view(preset, seed, 3 if preset != "two-player" else 2)
    sampler = DealSampler(view)
    total, exact = _exact_frequencies(view, sampler)
    assert sampler.count == total  # the dynamic programme counts what brute force counts
    rng = random.Random(12345)
    n = 3000
    got = {k: 0 for k in exact}
    for _ in range(n):
        for h, cards in sampler.sample_hidden(rng).items():
            for c in cards:
                if (c, h) in got:
                    got[c, h] += 1
    for key, p in exact.items():
        sd = math.sqrt(max(p * (1 - p), 1e-9) / n)
        assert abs(got[key] / n - p) <= 5 * sd + 1e-9, (key, got[key] / n, p)


def test_voids_and_unbroken_spade_leads_are_inferred():
    rules = resolve_ruleset("pagat")
    from arena_sdk.engine import Trick

    class V:
        pass

    v = V()
    v.rules = rules
    c = {x.name: x for x in CARDS}
    # N leads a heart, E discards a club (void in hearts); then E leads a spade unbroken?
    # No: E's club did not break spades; a spade led by W while unbroken: W held only spades.
    v.tricks = [Trick(0, (c["H2"], c["C3"], c["H5"], c["H9"]), 3)]
    v.current_trick = [(3, c["S2"])]
    voids = voids_of(v)
    assert voids[1] == {2}
    assert voids[3] == {0, 1, 2}
    assert voids[0] == set() and voids[2] == set()


def test_bid_model_tilts_the_worlds():
    """A seat that bid high gets more high cards than one that bid low."""
    rules = resolve_ruleset("pagat")
    for seed in range(40):
        state = GameState.new(rules, seed)
        # N, E, S, W bid in order from the dealer's left; find a deal where we can set bids
        order = [(state.first + 1 + i) % 4 for i in range(4)]
        me = order[-1]
        bids = {order[0]: 7, order[1]: 1, order[2]: 3}
        for s in order[:3]:
            state.apply(bids[s])
        view = state.view(me)
        break
    rng = random.Random(2)
    plain, model = DealSampler(view), DealSampler(view, honour_bid_model(), oversample=8)
    from arena_sdk.sampling import quick_tricks

    def mean_est(sampler, seat):
        return sum(quick_tricks(sampler.sample_allocation(rng)[seat]) for _ in range(300)) / 300

    high, low = order[0], order[1]
    assert mean_est(model, high) - mean_est(model, low) > mean_est(plain, high) - mean_est(plain, low) + 1.0


def test_two_player_seen_discards_stay_out_unless_the_opponent_exchanged():
    rng = random.Random(4)
    checked = 0
    for seed in range(6):
        for _state, view in decision_views("two-player", seed, every=5):
            if view.decision is not Decision.PLAY:
                continue
            sampler = DealSampler(view)
            opp = 1 - view.seat
            seen = {int(c) for c in view.seen_discards}
            for _ in range(5):
                alloc = sampler.sample_hidden(rng)
                in_opp = seen & set(alloc[opp])
                assert len(in_opp) <= (view.exchanged[opp] if view.exchanged else 0)
                assert len(alloc[DISCARD]) == 26
                checked += 1
    assert checked
