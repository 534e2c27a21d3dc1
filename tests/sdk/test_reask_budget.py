"""Re-asking a search bot (issue 26): a budget in worlds answers as recorded; one in seconds is warned about."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from arena_sdk.bots.hard import HardBot
from arena_sdk.testing import RecordedGame, play_game, time_budget_warning


def test_a_budget_in_seconds_is_warned_about_and_one_in_worlds_is_not() -> None:
    assert "budget_s" in (time_budget_warning(HardBot()) or "")
    assert "worlds" in (time_budget_warning(HardBot(budget_s=0.05)) or "")
    assert time_budget_warning(HardBot(worlds=4)) is None


def test_hard_with_a_budget_in_worlds_reasks_exactly_as_recorded() -> None:
    res = play_game([lambda: HardBot(worlds=4), lambda: HardBot(worlds=4)], "two-player", seed=3, max_hands=1)
    game = RecordedGame(res.record)
    for seat in range(2):
        rows = game.reask(HardBot(worlds=4), seat)
        assert rows and not [r.decision.index for r in rows if r.differs], seat
        one = game.reask_one(HardBot(worlds=4), seat, len(rows) - 1)
        assert one.problem is None and not rows[-1].differs
        assert one.now == rows[-1].decision.played


def test_the_command_warns_for_the_builtin_hard_in_seconds(tmp_path: Path) -> None:
    res = play_game(["random", "random"], "two-player", seed=3, max_hands=1)
    record = tmp_path / "game.json"
    record.write_text(json.dumps(res.record))
    ran = subprocess.run(
        [sys.executable, "-m", "arena_sdk.testing", "hard", "--replay", str(record), "--seat", "A", "--decision", "0"],
        check=False, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "warning:" in ran.stderr and "HardBot(worlds=N)" in ran.stderr
    assert "decision 0 of seat A" in ran.stdout
