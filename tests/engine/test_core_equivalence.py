"""The compiled core and the pure engine give the same states, scores and random choices.

Both engines are played side by side in one process from the same seeds, with
twin generators, in every preset and with the options drawn at random (bids,
nil and blind nil, bags and their penalty, the spade-lead rules, the
two-player draw and exchange, the ends of a game), and every attribute of the
two states is compared after every step: a plain ``apply(rng.choice(legal_actions()))``,
a whole ``play_random_hand``, ``play_out_hand`` with Hard's rollout policy, a
``clone``, and Hard's rollouts from the position (``simulate.rollout`` against
the core's).  ``bench/core_equivalence.py`` runs the same comparison over a
million hands.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_sdk.bots.rollout import rollout_policy
from arena_sdk.bots.simulate import Position, rollout
from arena_sdk.engine import Decision, core, resolve_ruleset
from arena_sdk.engine.playout import play_random_hand
from core_support import CompiledGameState, PureGameState, assert_same

pytestmark = pytest.mark.skipif(CompiledGameState is None, reason=f"no compiled core here: {core.REASON}")

FOUR = ("pagat", "wikipedia", "cards4")


@st.composite
def rulesets(draw: st.DrawFn):
    preset = draw(st.sampled_from((*FOUR, "two-player")))
    options: dict[str, object] = {}
    if draw(st.booleans()):
        options["target"] = draw(st.sampled_from((50, 150, 300, 500)))
        options["lose_floor"] = draw(st.sampled_from((None, -50, -200)))
        options["nil_value"] = draw(st.sampled_from((0, 50, 100)))
        modes = ("off", "any", "first-bidder") if preset != "two-player" else ("off", "any")
        options["blind_nil"] = draw(st.sampled_from(modes))
        options["blind_nil_value"] = draw(st.sampled_from((0, 200)))
        options["blind_nil_min_deficit"] = draw(st.sampled_from((0, 30, 100)))
        if preset != "two-player":
            options["failed_nil_tricks"] = draw(st.sampled_from(("bags", "contract")))
        options["spade_lead"] = draw(st.sampled_from(("broken", "trumped", "always")))
        options["bag_threshold"] = draw(st.sampled_from((1, 3, 10)))
        options["bag_penalty"] = draw(st.sampled_from((0, 50, 100)))
    options["max_hands"] = draw(st.integers(1, 4))
    return resolve_ruleset(preset, options)


def twins(rules, seed, first, scores, bags):
    pure = PureGameState.new(rules, seed, first=first, scores=scores, bags=bags)
    fast = CompiledGameState.new(rules, seed, first=first, scores=scores, bags=bags)
    assert_same(pure, fast, "new")
    return pure, fast


def compare_rollouts(pure, fast, luck: list[float], where: str) -> None:
    """Hard's rollout from this position: the pure policy against the core's, same numbers."""
    if pure.decision is not Decision.PLAY:
        return
    start = Position.of(pure)
    bids = [b if b is not None else 0 for b in pure.bids]
    expected = rollout(start.copy(), bids, itertools.cycle(luck).__next__)
    assert core.compiled.rollout(Position.of(fast), bids, luck) == expected, where
    cards = [c for c in range(52) if start.legal() >> c & 1]
    wanted = []
    for c in cards:
        pos = start.copy()
        pos.play(c)
        wanted.append(rollout(pos, bids, itertools.cycle(luck).__next__))
    assert core.compiled.rollout_cards(Position.of(fast), cards, bids, luck) == wanted, where


STEPS = st.lists(st.sampled_from(("plain", "plain", "plain", "hand", "policy", "clone", "rollout")), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=rulesets(),
    seed=st.one_of(st.integers(0, 2**70), st.text(max_size=8)),
    first=st.one_of(st.none(), st.integers(0, 1)),
    scores=st.one_of(st.none(), st.tuples(st.integers(-300, 450), st.integers(-300, 450))),
    bags=st.one_of(st.none(), st.tuples(st.integers(0, 9), st.integers(0, 9))),
    rng_seed=st.integers(0, 2**32),
    steps=STEPS,
)
def test_both_cores_give_the_same_state_after_every_step(rules, seed, first, scores, bags, rng_seed, steps):
    pure, fast = twins(rules, seed, first, scores and list(scores), bags and list(bags))
    rp, rf = random.Random(rng_seed), random.Random(rng_seed)
    for i, step in enumerate(itertools.chain(steps, ["hand"] * 6)):
        if pure.is_over:
            break
        where = f"step {i} ({step})"
        if step == "plain":
            pure.apply(rp.choice(pure.legal_actions()))
            fast.apply(rf.choice(fast.legal_actions()))
        elif step == "hand":
            play_random_hand(pure, rp)
            play_random_hand(fast, rf)
        elif step == "policy" and pure.decision is Decision.PLAY:
            pure.play_out_hand(rollout_policy(pure, rp), None)
            fast.play_out_hand(rollout_policy(fast, rf), None)
        elif step == "clone":
            pure, fast = pure.clone(), fast.clone()
        elif step == "rollout":
            compare_rollouts(pure, fast, [rp.random() for _ in range(104)], where)
            for _ in range(104):  # the twin draws the same numbers
                rf.random()
        assert_same(pure, fast, where)
        assert rp.getstate() == rf.getstate(), f"{where}: the generators drew differently"
        assert pure.legal_actions() == fast.legal_actions(), where
    assert pure.result == fast.result


@pytest.mark.parametrize("preset", [*FOUR, "two-player"])
def test_whole_games_agree_in_every_preset(preset):
    """Random games to their end per preset (target 150, at most 12 hands): the same, hand by hand."""
    rules = resolve_ruleset(preset, {"target": 150, "max_hands": 12})
    for seed in range(12):
        pure, fast = twins(rules, f"game-{seed}", None, None, None)
        rp, rf = random.Random(seed), random.Random(seed)
        while not pure.is_over:
            play_random_hand(pure, rp)
            play_random_hand(fast, rf)
            assert_same(pure, fast, f"{preset} seed {seed} hand {pure.hand_number}")
        assert fast.is_over and pure.result == fast.result


def test_an_unusual_generator_is_called_not_emulated():
    """A Random subclass (its own ``random``) gets the same calls the pure engine makes."""

    class Counting(random.Random):
        calls = 0

        def random(self) -> float:
            Counting.calls += 1
            return super().random()

    rules = resolve_ruleset("pagat")
    pure, fast = twins(rules, 7, None, None, None)
    play_random_hand(pure, Counting(3))
    pure_calls, Counting.calls = Counting.calls, 0
    play_random_hand(fast, Counting(3))
    assert Counting.calls == pure_calls > 0
    assert_same(pure, fast, "subclass")


def test_chance_and_shuffles_match_the_python_definitions():
    from arena_sdk.engine.chance import chance_int, shuffled_deck

    for seed in (0, 1, 2**80 + 3, "abc", "x" * 200, -5):
        assert core.compiled.chance_int(seed, "deck", 3) == chance_int(seed, "deck", 3)
        for hand in (1, 2, 77):
            assert core.compiled.shuffled_deck(seed, hand) == shuffled_deck(seed, hand)
        assert core.compiled.first_dealer(seed, 4) == chance_int(seed, "first") % 4


def test_the_generator_is_drawn_in_place_here():
    """On this interpreter the core reads random.Random's state directly (checked at import)."""
    assert core.compiled.FAST_RANDOM


@pytest.mark.parametrize("engine", ["pure", "compiled"])
@pytest.mark.parametrize("preset", [*FOUR, "two-player"])
def test_restore_puts_a_state_back_in_place(engine, preset):
    """``restore`` (the match loop's undo) makes the very object equal to a saved clone, the clone kept."""
    cls = PureGameState if engine == "pure" else CompiledGameState
    rules = resolve_ruleset(preset, {"target": 150, "max_hands": 3})
    state = cls.new(rules, f"restore-{preset}")
    rng = random.Random(7)
    for _ in range(9):  # into the first hand's play (or its draw)
        state.apply(rng.choice(state.legal_actions()))
    saved = state.clone()
    holder = state  # another holder of the same object sees the rewind
    play_random_hand(state, rng)
    state.apply(rng.choice(state.legal_actions()))
    before = saved.clone()
    holder.restore(saved)
    assert holder is state
    assert_same(state, before, f"{engine} {preset} after restore")
    state.apply(state.legal_actions()[0])
    assert_same(saved, before, "the saved clone is not changed by the restored state's play")
