"""``arena replay RECORD --reask BOT --seat S [--decision K]``: the SDK's re-ask, from the arena CLI (issue 26).

A thin wrapper over ``python -m arena_sdk.testing BOT --replay RECORD --seat
S``: the same rows, the same exit codes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from arena_sdk.testing import RandomBot, play_game

CHANGED = """\
from arena_sdk.testing import RandomBot


class Bolder(RandomBot):
    name = "bolder"

    def bid(self, view):
        return min(13, super().bid(view) + 1)  # one rule changed: every bid one higher
"""


def _record(tmp_path: Path) -> Path:
    res = play_game([RandomBot, RandomBot], "pagat", seed=5, max_hands=2)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(res.record))
    return path


def test_reask_lists_the_decisions_the_changed_rule_touches(run_cli, tmp_path: Path) -> None:
    record = _record(tmp_path)
    (tmp_path / "bolder.py").write_text(CHANGED)
    via_arena = run_cli("replay", str(record), "--reask", "bolder.py:Bolder", "--seat", "N", "--json")
    assert via_arena.returncode == 0, via_arena.stderr
    rows = json.loads(via_arena.stdout)["rows"]
    differing = [r["index"] for r in rows if r["differs"]]
    assert differing and all(rows[i]["kind"] == "bid" for i in differing)
    assert differing == [r["index"] for r in rows if r["kind"] == "bid"]  # exactly the bids
    via_sdk = subprocess.run(
        [sys.executable, "-m", "arena_sdk.testing", "bolder.py:Bolder", "--replay", str(record), "--seat", "N",
         "--json"],
        check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert json.loads(via_sdk.stdout) == json.loads(via_arena.stdout)


def test_reask_one_decision_and_bad_options(run_cli, tmp_path: Path) -> None:
    record = _record(tmp_path)
    (tmp_path / "bolder.py").write_text(CHANGED)
    one = run_cli("replay", str(record), "--reask", "bolder.py", "--seat", "N", "--decision", "0")
    assert one.returncode == 0, one.stderr
    assert "decision 0 of seat N" in one.stdout and "differs from the record" in one.stdout, one.stdout
    lonely = run_cli("replay", str(record), "--seat", "N")
    assert lonely.returncode == 2 and "--reask" in lonely.stderr, lonely.stderr
