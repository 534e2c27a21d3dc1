"""Bots the arena starts do not inherit the organiser's ``ARENA_*`` settings (issue 23 item 3).

An organiser who once ran ``arena serve`` (whose docs say to export
``ARENA_TOKEN``) or a bot by hand keeps those variables in the shell.  Before
the fix, every local and built-in bot of a later ``arena match run`` took the
stale ``ARENA_TOKEN`` over its seat's own token and was refused: both sides
``forfeit:crash`` ("unknown or expired seat token").  Here the real CLI runs
in a subprocess with stale values of every variable the SDK reads; the match
must be played as if they were not there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "example_bots" / "random" / "bot.py"


def test_a_stale_arena_token_in_the_organisers_shell_does_not_forfeit_local_or_builtin_bots(tmp_path: Path) -> None:
    stale_file = tmp_path / "old-token"
    stale_file.write_text("stale-token-from-a-file\n")
    env = {
        **os.environ,
        "COLUMNS": "200",
        # What an earlier `arena serve` session or a bot run by hand leaves behind.
        "ARENA_TOKEN": "x",
        "ARENA_TOKEN_FILE": str(stale_file),
        "ARENA_ADDRESS": f"unix:{tmp_path / 'gone' / 'referee.sock'}",
        "ARENA_HARD_BUDGET_S": "not-a-number",  # would make the built-in hard bot exit at start
    }
    result = subprocess.run(
        [
            sys.executable, "-m", "arena", "match", "run", "--games", "1", "--set", "max_hands=1",
            "--move-time", "0.2", "--out", "m", "--json",
            "--bot", "builtin:hard", "--bot", f"cmd:python {RANDOM_BOT}",
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    match = json.loads((tmp_path / "m" / "match.json").read_text())
    game = match["games"][0]
    logs = {p.name: p.read_text() for p in sorted((tmp_path / "m" / "logs").glob("*.log"))}
    assert not game["ending"].startswith("forfeit"), (game["ending"], logs)
    assert game["hands"] == 1
    # Every seat joined with its own token and played its 13 cards and its bid.
    for seat in ("N", "E", "S", "W"):
        assert game["timing"][seat]["decisions"] >= 14, (seat, game["timing"][seat])
    assert not any("refused" in text for text in logs.values()), logs
