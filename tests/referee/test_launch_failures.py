"""A bot whose command cannot start is that bot's crash; the other bots are still stopped."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena.match import TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.local_match import MatchConfig, run_match
from arena_sdk.engine import resolve_ruleset

REPO = Path(__file__).resolve().parents[2]


def test_unstartable_bot_forfeits_by_crash_and_nothing_is_left_running(tmp_path):
    config = MatchConfig(
        bots=(BotSpec("cmd", f"python {REPO / 'example_bots' / 'random' / 'bot.py'}"), BotSpec("cmd", "no-such-binary-xyz")),
        rules=resolve_ruleset("pagat", {"max_hands": "1"}),
        games=2,
        seed="launch",
        time_control=TimeControl(move_s=1.0, bank_s=2.0, hard_cap_s=5.0),
        out_dir=tmp_path / "out",
        start_timeout=20.0,
    )
    report = asyncio.run(asyncio.wait_for(run_match(config), 120))
    assert [g.ending for g in report.games] == ["forfeit:crash", "forfeit:crash"]
    assert all(g.winner == 0 for g in report.games)
    assert "could not start the bot" in report.games[0].forfeit["detail"]
    assert report.totals[1].forfeits == {"crash": 2} and report.totals[0].forfeits == {}
    # The random bots (N/S) ran and were stopped: they exited by themselves after the match.
    assert [report.exit_codes[s] for s in (0, 2)] == [0, 0]
    assert [report.exit_codes[s] for s in (1, 3)] == [None, None]
