"""The Node.js example bot (example_bots/node, no SDK) against the real referee, every preset.

It proves the wire contract (proto/arena/v1/arena.proto, docs/protocol.md) is
enough to write a bot without the Python SDK.  Needs node and the pinned npm
packages (scripts/test-setup.sh installs both); never skipped under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_BOT = REPO / "example_bots" / "node"
RANDOM = f"cmd:{sys.executable} {REPO / 'example_bots' / 'random' / 'bot.py'}"


@pytest.fixture(scope="module")
def node() -> str:
    """The node binary, with the bot's pinned packages installed (npm ci) if they are not yet."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        message = "the Node.js bot needs node and npm (scripts/test-setup.sh installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    if not (NODE_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_BOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    return node


@pytest.mark.parametrize("preset", ["pagat", "wikipedia", "cards4", "two-player"])
def test_node_bot_plays_clean_matches(run_cli, tmp_path, node, preset):
    result = run_cli(
        "match", "run", "--bot", f"cmd:{node} {NODE_BOT / 'bot.js'}", "--bot", RANDOM,
        "--rules", preset, "--games", "2", "--set", "max_hands=4", "--seed", "node-bot-1",
        "--out", "m", "--json", timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    node_bot = report["bots"][0]
    assert node_bot["name"] == "node-random"
    assert node_bot["strikes"] == 0 and not node_bot["forfeits"] and node_bot["voids"] == 0, node_bot
    kinds = set()
    for game in report["games"]:
        assert game["ending"] in ("target", "floor", "max_hands"), game
        record = json.loads((tmp_path / "m" / game["record"]).read_text())
        assert not record["events"], record["events"]
        node_seats = {"N", "S"} if preset != "two-player" else {"A"}
        kinds |= {a["kind"] for h in record["hands"] for a in h["actions"] if a["seat"] in node_seats}
        replayed = run_cli("replay", str(tmp_path / "m" / game["record"]), "--json")
        assert replayed.returncode == 0, replayed.stderr
    assert {"bid", "play"} <= kinds
    if preset == "two-player":
        assert {"blind_nil", "draw", "exchange"} <= kinds, kinds  # this seed has the node bot bid blind nil
