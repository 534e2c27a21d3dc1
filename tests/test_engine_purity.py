"""``import arena_sdk.engine`` is pure: no gRPC, no protobuf, no environment variable changed.

The layering test reads the engine's own import lines; this one imports the
engine for real, in a fresh interpreter where protobuf and gRPC cannot be
imported at all, so a package ``__init__`` on the way (``arena_sdk``'s) that
loads them, or sets gRPC's transport variable, fails it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Runs in a fresh interpreter: block protobuf and gRPC, import the engine, play a game, report.
PROBE = r"""
import importlib.abc, json, os, sys

class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("grpc", "google", "grpc_health"):
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, Blocked())
before = dict(os.environ)
from arena_sdk.engine import GameState, resolve_ruleset
from arena_sdk.engine.policy import default_action
state = GameState.new(resolve_ruleset("pagat", {"max_hands": 2}), "purity")
while not state.is_over:
    state.apply(default_action(state))
changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
loaded = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"changed": changed, "loaded": loaded, "ending": state.result.ending}))
"""


def _probe(code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=REPO
    )


def test_the_engine_imports_and_plays_without_protobuf_or_grpc():
    done = _probe(PROBE)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["changed"] == [], f"importing the engine changed the environment: {report['changed']}"
    assert not {"grpc", "google"} & set(report["loaded"]), report["loaded"]
    assert report["ending"] in ("target", "floor", "max_hands")


def test_the_probe_can_fail():
    """The same probe through the SDK's client (which starts gRPC) is caught by the block."""
    done = _probe(PROBE.replace("from arena_sdk.engine import GameState", "import arena_sdk.client\nfrom arena_sdk.engine import GameState"))
    assert done.returncode != 0 and "is blocked in this test" in done.stderr


def test_a_bot_still_imports_everything_from_the_package():
    code = (
        "import json, arena_sdk\n"
        "from arena_sdk import Bot, Card, Decision, GameInfo, MatchInfo, Suit, View, join_match, run\n"
        "print(json.dumps([arena_sdk.__version__, sorted(n for n in arena_sdk.__all__ if not hasattr(arena_sdk, n))]))"
    )
    done = _probe(code)
    assert done.returncode == 0, done.stderr
    version, missing = json.loads(done.stdout)
    assert version and missing == []
