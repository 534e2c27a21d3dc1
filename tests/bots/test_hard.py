"""Hard's budget in worlds: deterministic given the game's seed, exactly that many worlds, never past its time."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from arena_sdk.bots import HardBot
from arena_sdk.testing import play_game
from arena_sdk.view import View


def test_a_decision_is_asked_again_and_answered_the_same():
    """With a budget in worlds, the same view gets the same card, from this bot or a fresh one."""
    views: list[View] = []
    bots: list[HardBot] = []

    def hard() -> HardBot:
        bot = HardBot(worlds=12)
        inner = bot.play

        def play(view: View):  # keep the views of real decisions to ask again
            views.append(view)
            return inner(view)

        bot.play = play  # type: ignore[method-assign]
        bots.append(bot)
        return bot

    # A long move time: half of it caps the search, and a busy machine must not reach that cap.
    play_game([hard, "medium"], "pagat", seed=11, max_hands=1, move_ms=120_000)
    assert len(views) > 20
    first = bots[0]
    asked = 0
    for view in views[::3]:
        if len(view.legal_cards()) < 2 or view.seat != 0:
            continue
        view.received_at = time.monotonic()  # asked now: a fresh deadline
        card = HardBot.play(first, view)
        again = HardBot(worlds=12)
        again.game_seed = first.game_seed
        view.received_at = time.monotonic()
        assert HardBot.play(again, view) == card
        view.received_at = time.monotonic()
        assert HardBot.play(first, view) == card
        assert again.searched[-1] == 12  # exactly the worlds asked for
        asked += 1
    assert asked >= 3


def test_a_game_with_a_worlds_budget_replays_exactly():
    records = [
        play_game([lambda: HardBot(worlds=6), "easy"], "pagat", seed=3, max_hands=2, move_ms=120_000).record
        for _ in range(2)
    ]
    assert records[0]["hands"] == records[1]["hands"]


def test_worlds_budget_still_stops_at_half_the_move_time():
    """A huge worlds budget is cut at half the move time (bounded check with a generous margin)."""
    bots: list[HardBot] = []

    def hard() -> HardBot:
        bots.append(HardBot(worlds=10**9))
        return bots[-1]

    play_game([hard, "medium"], "pagat", seed=5, max_hands=1, move_ms=200)
    spent = [t for b in bots for t in b.spent]
    assert spent and max(spent) < 0.1 + 0.75, max(spent)
    assert max(w for b in bots for w in b.searched) < 10**9


def test_bad_budgets_are_refused():
    with pytest.raises(ValueError, match="worlds"):
        HardBot(worlds=0)
    with pytest.raises(ValueError, match="budget_s"):
        HardBot(-1.0)


def test_module_entry_point_refuses_a_bad_worlds_budget():
    for argv in (["medium", "--worlds", "5"], ["hard", "--worlds", "0"]):
        proc = subprocess.run([sys.executable, "-m", "arena_sdk.bots", *argv], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "--worlds" in proc.stderr, proc.stderr


def test_another_bid_needs_its_margin_and_by_default_no_standard_errors():
    from arena_sdk.bots.hard import BID_MARGIN, _best_bid

    # Bid 4 gains 5 points a world on average over Medium's 3, but noisily.
    values = {2: [0.0] * 10, 3: [0.0] * 10, 4: [30.0, -20.0] * 5}
    assert BID_MARGIN == 4.0 and _best_bid(3, values) == 4  # the default: the margin alone
    assert _best_bid(3, values, margin=6.0) == 3
    assert _best_bid(3, values, margin=1.0, z=1.5) == 3  # 5 ± 8.3 (one SE) is not clear
    steady = {2: [0.0] * 10, 3: [0.0] * 10, 4: [6.0, 4.0] * 5}
    assert _best_bid(3, steady, margin=1.0, z=1.5) == 4
    assert _best_bid(3, {3: [1.0, 1.0], 4: [0.0, 0.0]}) == 3  # Medium's bid is already the best


def _sums(per_card):
    return ({c: sum(d) for c, d in per_card.items()}, {c: sum(x * x for x in d) for c, d in per_card.items()})


def test_verdict_of_a_play_search():
    from arena_sdk.bots.hard import _verdict

    behind = {1: [-10.0, -12.0] * 8, 2: [-5.0, -7.0] * 8}  # every other card clearly worse than Medium's
    assert _verdict(16, *_sums(behind), z=1.5, stop=2.0) == "prior"
    assert _verdict(16, *_sums(behind), z=1.5, stop=0.0) == "open"  # no early stop unless asked
    close = {1: [30.0, -26.0] * 8, 2: [-5.0, -7.0] * 8}  # card 1 ahead by 2 a world, SE about 7
    assert _verdict(16, *_sums(close), z=1.5, stop=2.0) == "close"
    clear = {1: [12.0, 8.0] * 8, 2: [-5.0, -7.0] * 8}
    assert _verdict(16, *_sums(clear), z=1.5, stop=2.0) == "open"


def test_adaptive_search_stops_early_and_stretches_close_calls():
    # The same game: with stop= some searches end before the worlds budget, with
    # stretch= some go past it, never past stretch times the budget; the default does neither.
    searched = {}
    for name, stop, stretch in (("plain", 0.0, 1.0), ("adaptive", 2.0, 3.0)):
        bots = []

        def make(stop=stop, stretch=stretch):
            bot = HardBot(worlds=64)
            bot.stop, bot.stretch = stop, stretch
            bots.append(bot)
            return bot

        play_game([make, "medium"], "pagat", seed=11, max_hands=2, move_ms=600_000)
        searched[name] = [w for b in bots for w in b.searched]
        assert sum(b.timed_out for b in bots) == 0
    assert set(searched["plain"]) == {64}
    assert min(searched["adaptive"]) < 64 < max(searched["adaptive"]) <= 3 * 64


def test_bid_raise_off_never_bids_over_mediums_bid(monkeypatch):
    # A deal where the bid search with bid_raise on raises Medium's 3 to 4 (round 4's
    # diagnosis: the side was then set); off, the default, it may only keep or lower it.
    assert HardBot.bid_raise is False
    import importlib.util
    from pathlib import Path

    from arena_sdk.bots import hard

    spec = importlib.util.spec_from_file_location("flat_mc", Path(__file__).resolve().parents[2] / "bench" / "bots" / "flat_mc.py")
    flat_mc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(flat_mc)
    chosen: list[tuple[int, int]] = []
    inner = hard.HardBot._search_bid

    def recording(self, view, base):
        got = inner(self, view, base)
        chosen.append((base, got))
        return got

    monkeypatch.setattr(hard.HardBot, "_search_bid", recording)
    results = {}
    for raise_ in (True, False):
        chosen.clear()

        def make(raise_=raise_):
            bot = HardBot(worlds=50)
            bot.bid_raise = raise_
            return bot

        play_game([lambda: flat_mc.FlatMCBot(1, 1), make], "pagat", 1011, max_hands=1, move_ms=600_000,
                  match_id="strength-1011-1")  # fmt: skip
        results[raise_] = list(chosen)
    assert any(got > base for base, got in results[True])
    assert results[False] and all(got <= base for base, got in results[False])
