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
