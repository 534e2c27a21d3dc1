"""Built-in tiers in the local harness: names accepted, every decision kind, Hard's budget."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from arena_sdk.bots import TIERS, EasyBot, HardBot, MediumBot, make_bot
from arena_sdk.testing import load_bot, play_game


def test_harness_accepts_tier_names():
    res = play_game(["easy", "random"], "pagat", seed=1, max_hands=1)
    assert res.names[0] == "builtin-easy"
    res = play_game(["builtin:medium", "easy"], "two-player", seed=2, max_hands=1)
    assert res.names == ("builtin-medium", "builtin-easy")
    assert load_bot("hard") is HardBot and load_bot("builtin:Medium") is MediumBot
    with pytest.raises(TypeError, match="unknown built-in bot"):
        play_game(["expert", "random"], "pagat", seed=1, max_hands=1)


def test_make_bot():
    assert {t: type(make_bot(t)) for t in TIERS} == {"easy": EasyBot, "medium": MediumBot, "hard": HardBot}
    with pytest.raises(ValueError, match="tiers are easy, medium, hard"):
        make_bot("nope")


@pytest.mark.parametrize("preset", ["pagat", "wikipedia", "cards4", "two-player"])
def test_hard_keeps_its_budget_and_plays_legally(preset):
    """A bounded check: every decision ends within the budget plus a generous margin."""
    budget = 0.05
    bots: list[HardBot] = []
    cpu: list[float] = []

    class Timed(HardBot):
        # The CPU time of each decision: on a loaded machine the wall time of a decision also
        # counts the time other processes held the core (the search stops at the wall deadline,
        # so its CPU time is at most that), and a bound on wall time would fail for that alone.
        def play(self, view):  # type: ignore[no-untyped-def]
            started = time.thread_time()
            try:
                return super().play(view)
            finally:
                cpu.append(time.thread_time() - started)

    def hard() -> HardBot:
        bots.append(Timed(budget))
        return bots[-1]

    res = play_game([hard, "easy"], preset, seed=4, max_hands=2)  # strict: an illegal answer raises
    assert [t for b in bots for t in b.spent], "Hard searched nothing"
    # The search stops at the budget; the margin covers one rollout and the sampler's set-up.
    assert max(cpu) < budget + 0.75, max(cpu)
    assert res.result.hands == 2


def test_module_entry_point_refuses_an_unknown_tier():
    proc = subprocess.run(
        [sys.executable, "-m", "arena_sdk.bots", "expert"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "unknown built-in bot" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "arena_sdk.bots", "medium", "--budget", "1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "applies to hard only" in proc.stderr
