"""The flat Monte Carlo reference (bench/bots/flat_mc.py): legal in every preset, sized as asked, rule bids."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena_sdk.engine import parse_cards
from arena_sdk.testing import play_game

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "bots"))
from flat_mc import FlatMCBot, parse_size, rule_bid  # noqa: E402


@pytest.mark.parametrize("preset", ["pagat", "wikipedia", "two-player"])
def test_plays_whole_hands_legally(preset):
    res = play_game([lambda: FlatMCBot(2, 2), "medium"], preset, seed=9, max_hands=1)  # strict: illegal raises
    assert res.result.hands == 1


def test_every_card_gets_deals_times_rollouts_playouts():
    """The cost is cards x deals x rollouts playouts: count them on one real decision."""
    counted: list[int] = []

    class Counting(FlatMCBot):
        def play(self, view):
            import flat_mc

            calls = 0
            inner = flat_mc.rule_policy

            def counting(state, rng):
                nonlocal calls
                calls += 1
                return inner(state, rng)

            flat_mc.rule_policy = counting
            try:
                card = super().play(view)
            finally:
                flat_mc.rule_policy = inner
            if len(view.legal_cards()) > 1 and len(view.tricks) < 12:
                counted.append(calls // len(view.legal_cards()))
            return card

    play_game([lambda: Counting(3, 2), "medium"], "pagat", seed=2, max_hands=1)
    assert counted and set(counted) == {6}


def test_sizes_and_bids():
    assert parse_size("30x30") == (30, 30) and parse_size("5X2") == (5, 2)
    for bad in ("30", "0x5", "ax3", "3x3x3"):
        with pytest.raises(ValueError):
            parse_size(bad)
    strong = [int(c) for c in parse_cards("SA SK SQ SJ ST S9 HA HK DA DK CA CK CQ".split())]
    weak = [int(c) for c in parse_cards("S2 S3 H2 H3 H4 H5 D2 D3 D4 D5 C2 C3 C4".split())]
    assert rule_bid(strong, None, 4) >= 9
    assert rule_bid(weak, None, 4) == 0 and rule_bid(weak, 0, 4) == 1  # never nil beside a nil


def _first_version_pick(state, rng):
    """rule_policy as first written (a loop over the 52 cards per pick): the reference for the bitmask one."""
    import flat_mc

    n, bids, won, trick, rand = state.players, [b or 0 for b in state.bids], state.tricks_won, state.trick, rng.random

    def lowest(mask):
        best, rank = -1, 99
        pool = mask & flat_mc._NON_SPADE or mask
        for s in range(4):
            part = pool >> (13 * s) & flat_mc._SUIT
            if part:
                r = (part & -part).bit_length() - 1
                if r < rank:
                    best, rank = 13 * s + r, r
        return best

    def highest(mask):
        best, rank = -1, -1
        for s in range(4):
            part = mask >> (13 * s) & flat_mc._SUIT
            if part:
                r = part.bit_length() - 1
                if r >= rank:
                    best, rank = 13 * s + r, r
        return best

    def beats(card, top):
        return (card // 13 == top // 13 and card > top) or (card >= 39 and top < 39)

    def pick(seat, legal):
        if not legal & (legal - 1):
            return legal.bit_length() - 1
        if rand() < flat_mc.NOISE:
            cards = [c for c in range(52) if legal >> c & 1]
            return cards[int(rand() * len(cards))]
        team = seat % 2
        need = sum(bids[s] for s in range(team, n, 2) if bids[s]) > sum(won[s] for s in range(team, n, 2) if bids[s])
        nil = bids[seat] == 0
        k = len(trick)
        if not k:
            return lowest(legal) if nil or not need else highest(legal & flat_mc._NON_SPADE or legal)
        top, top_pos = trick[0], 0
        for i in range(1, k):
            if beats(trick[i], top):
                top, top_pos = trick[i], i
        winners = sum(1 << c for c in range(52) if legal >> c & 1 and beats(c, top))
        losers = legal & ~winners
        if nil:
            return highest(losers) if losers else highest(legal)
        if not need or (n == 4 and top_pos == k - 2) or not winners:
            return highest(losers) if not need and losers else lowest(legal)
        if k == n - 1:
            return lowest(winners)
        follow = winners & (flat_mc._SUIT << (13 * (trick[0] // 13)))
        return highest(follow) if follow else lowest(winners)

    return pick


@pytest.mark.parametrize("players", [4, 2])
def test_the_bitmask_policy_picks_what_the_first_version_picked(players):
    # Random positions (bids with nils, tricks won, a partial trick, a legal mask):
    # the same random numbers give the same card, including the random moves.
    import random
    from types import SimpleNamespace

    import flat_mc

    gen = random.Random(5)
    for case in range(3000):
        bids = [gen.choice([0, 0, 1, 2, 3, 4, 5]) for _ in range(players)]
        trick = gen.sample(range(52), gen.randrange(players))
        state = SimpleNamespace(players=players, bids=bids, tricks_won=[gen.randrange(5) for _ in range(players)],
                                trick=trick)  # fmt: skip
        legal = sum(1 << c for c in gen.sample([c for c in range(52) if c not in trick], gen.randrange(1, 10)))
        seat = gen.randrange(players)
        new = flat_mc.rule_policy(state, random.Random(case))(seat, legal)
        old = _first_version_pick(state, random.Random(case))(seat, legal)
        assert new == old, (case, bids, trick, legal)


@pytest.mark.parametrize("preset", ["pagat", "wikipedia", "two-player"])
def test_bitmask_rollouts_play_the_same_games_as_the_engine_rollouts(preset):
    # The rollouts on bitmasks (with memoised scoring) are a speed-up only: with the
    # same seeds the bot plays exactly the games it played through play_out_hand.
    class EngineRollouts(FlatMCBot):
        engine_rollouts = True

    records = []
    for cls in (FlatMCBot, EngineRollouts):
        seats = [lambda: cls(3, 3), "medium"] if preset == "two-player" else [lambda: cls(3, 3), "medium", lambda: cls(2, 2), "easy"]
        records.append(play_game(seats, preset, seed=4, max_hands=2).record["hands"])
    assert records[0] == records[1]
