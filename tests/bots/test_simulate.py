"""Hard's fast simulation agrees with the engine: rollouts, scoring and the exact endgame search."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from arena_sdk.bots.rollout import rollout_policy
from arena_sdk.bots.simulate import GAME_BONUS, Position, Scorer, hand_value, rollout, solve
from arena_sdk.engine import Decision, GameState, resolve_ruleset


def mid_hand(preset: str, seed: int, plays: int) -> GameState:
    """A real game after the bids (a fixed, varied mix with nils) and ``plays`` random cards."""
    rng = random.Random(seed)
    state = GameState.new(resolve_ruleset(preset), seed)
    while state.decision is not Decision.PLAY:
        if state.decision is Decision.BID:
            state.apply(rng.choice([0, 1, 2, 3, 4, 5]))
        elif state.decision is Decision.EXCHANGE:
            state.apply(())
        else:
            state.apply(state.legal_actions()[0])
    for _ in range(plays):
        state.apply(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("preset", ["pagat", "wikipedia", "two-player"])
def test_rollout_plays_the_engine_game(preset):
    """The bitmask rollout plays exactly what the engine plays with the same policy and numbers."""
    for seed in range(40):
        state = mid_hand(preset, seed, seed % 23)
        hand, team = state.hand_number, state.to_move % 2
        luck = [random.Random(seed).random() for _ in range(104)]
        engine = state.clone()
        rng = random.Random()
        rng.random = itertools.cycle(luck).__next__  # the policy draws only random()
        engine.play_out_hand(rollout_policy(engine, rng))
        bids = [b or 0 for b in state.bids]
        won = rollout(Position.of(state), bids, itertools.cycle(luck).__next__)
        assert won == tuple(engine.hand_results[-1].tricks)
        assert Scorer(state, team)(won) == hand_value(engine, team, hand)


def brute(state: GameState, team: int, hand: int) -> float:
    """Plain minimax through the engine itself (slow, obviously right)."""
    if state.hand_number != hand or state.decision is not Decision.PLAY:
        return hand_value(state, team, hand)
    values = []
    for card in state.legal_actions():
        child = state.clone()
        child.apply(card)
        values.append(brute(child, team, hand))
    return max(values) if state.to_move % 2 == team else min(values)


@pytest.mark.parametrize("preset", ["pagat", "two-player"])
def test_solve_matches_plain_minimax(preset):
    """Alpha-beta with equivalent cards merged and a table gives the plain minimax value."""
    plays = 40 if preset == "pagat" else 18  # three or four tricks left
    for seed in range(12):
        state = mid_hand(preset, 100 + seed, plays + seed % 4)
        team = (state.to_move + seed) % 2  # both sides' points of view
        want = brute(state, team, state.hand_number)
        got = solve(Position.of(state), team, Scorer(state, team), lambda: 0.0, math.inf)
        assert got == want, seed


def bid_all(state: GameState, bids: list[int]) -> GameState:
    """Bid ``bids`` in turn order (no nils), up to the first card."""
    for b in bids:
        state.apply(b)
    assert state.decision is Decision.PLAY
    return state


@pytest.mark.parametrize("bags", [0, 5, 9])
def test_a_bag_costs_its_share_of_the_penalty_wherever_the_count_stands(bags):
    """One overtrick is worth 1 - 100/10 = -9 points on 0, 5 or 9 bags carried.

    Valued by the crossing alone (the old objective) it was +1 on none and
    -99 on nine, and the other side's bag was worth a point to it.
    """
    state = bid_all(GameState.new(resolve_ruleset("pagat"), 7, bags=[bags, 0]), [3, 3, 3, 3])
    scorer = Scorer(state, 0)  # team 0: seats 0 and 2, contract 6; team 1 the same
    # Team 0 makes 6 exactly (60); team 1 takes 7: 61 points and a bag worth -10.
    assert scorer((3, 3, 3, 4)) == pytest.approx(60 - (61 - 10))
    # Team 0 takes 7: 61 points and a bag (on nine: -39 as scored, the nine carried gone).
    assert scorer((4, 3, 3, 3)) == pytest.approx((61 - 10) - 60)


def test_a_hand_that_ends_the_game_is_worth_its_points_as_scored():
    """Bags carried when the game ends cost nothing: the last hand is its real points plus the bonus."""
    state = bid_all(GameState.new(resolve_ruleset("pagat"), 7, scores=[480, 0], bags=[9, 0]), [3, 3, 3, 3])
    assert state.rules.target == 500
    # Team 0 makes 6 (480 + 60 = 540: the game is over, won); team 1 takes 7 (61, one bag).
    assert Scorer(state, 0)((3, 3, 3, 4)) == pytest.approx(60 - 61 + GAME_BONUS)


def test_two_players_charge_a_bag_too():
    """The two-player game (a team is one seat): one overtrick on nine bags is worth -9, not -99."""
    state = GameState.new(resolve_ruleset("two-player"), 7, bags=[9, 0])
    while state.decision is not Decision.PLAY:  # the draw, then both bid 6
        state.apply(6 if state.decision is Decision.BID else state.legal_actions()[0])
    assert state.players == 2 and state.bids == [6, 6]
    assert Scorer(state, 0)((7, 6)) == pytest.approx((61 - 10) - 60)
    assert Scorer(state, 1)((7, 6)) == pytest.approx(60 - (61 - 10))
