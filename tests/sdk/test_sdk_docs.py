"""The bot-writing guide's code runs as printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "writing-a-bot.md"


def python_blocks() -> dict[str, str]:
    """The guide's ```python blocks, by the file name in their first-line comment."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    named = {}
    for block in blocks:
        first = block.splitlines()[0]
        if first.startswith("# ") and first.endswith(".py"):
            named[first[2:]] = block
    return named


def test_the_guides_first_bot_and_local_test_run(tmp_path: Path):
    blocks = python_blocks()
    assert {"mybot.py", "try_mybot.py"} <= set(blocks)
    for name, text in blocks.items():
        (tmp_path / name).write_text(text)
    proc = subprocess.run(
        [sys.executable, "try_mybot.py"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "game 0 seed 1: NS mybot" in proc.stdout
    assert re.search(r"^\d+ of 10 won by MyBot$", proc.stdout, re.M)
    cli = subprocess.run(
        [sys.executable, "-m", "arena_sdk.testing", "mybot.py:MyBot", "--against", "random",
         "--games", "2", "--rules", "pagat"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.startswith("mybot vs random: ")


def test_the_guide_names_only_helpers_that_exist():
    from arena_sdk import Bot, View

    text = GUIDE.read_text()
    for name in re.findall(r"`([a-z_]+)\(", text):
        if name in {"bid", "play", "blind_nil", "draw", "exchange"} or name.startswith("on_"):
            assert hasattr(Bot, name), name
        elif name in {"legal_cards", "winning_play", "cards_played", "cards_seen",
                      "unseen_cards", "time_left", "move_time_left", "team_contract",
                      "team_tricks", "is_nil"}:  # fmt: skip
            assert hasattr(View, name), name
