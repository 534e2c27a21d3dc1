"""The search bot of docs/sampling.md runs as printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_search_bot_example_plays(tmp_path: Path):
    text = (REPO / "docs" / "sampling.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if b.startswith("# searchbot.py")]
    (tmp_path / "searchbot.py").write_text(block.replace("budget_s = 0.2", "budget_s = 0.02"))
    proc = subprocess.run(
        [sys.executable, "-m", "arena_sdk.testing", "searchbot.py:SearchBot", "--against", "medium",
         "--games", "2", "--rules", "two-player"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "searchbot vs builtin-medium" in proc.stdout
    assert "default moves 0" in proc.stdout
