"""A machine without a working C compiler still installs the SDK and runs it on the pure core.

The SDK is built the way pip builds it from a fresh clone (build isolation:
setuptools and Cython from the package index, as sdk/pyproject.toml asks),
with ``CC`` naming a compiler that always fails; the optional extension is
skipped, the wheel installs into a new virtual environment and the engine
plays a game there on its pure-Python core.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PLAY = r"""
import json, random
from arena_sdk.engine import core, resolve_ruleset, GameState
from arena_sdk.engine.playout import play_random_game
state = GameState.new(resolve_ruleset("pagat", {"max_hands": 3}), 1)
play_random_game(state, random.Random(1))
print(json.dumps({"compiled": core.COMPILED, "reason": core.REASON, "hands": len(state.hand_results)}))
"""


@pytest.mark.timeout(1500)
def test_the_sdk_installs_and_runs_when_the_compiler_fails(tmp_path: Path) -> None:
    broken = tmp_path / "cc"
    broken.write_text("#!/bin/sh\necho 'this compiler always fails' >&2\nexit 1\n")
    broken.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_SDK_PURE", "ARENA_SDK_PURE_BUILD")}
    env.update(CC=str(broken), LDSHARED=f"{broken} -shared", PIP_DISABLE_PIP_VERSION_CHECK="1")
    # The SDK's sources as a fresh clone has them: no build products of this checkout's own install.
    source = tmp_path / "sdk"
    shutil.copytree(REPO / "sdk", source, ignore=shutil.ignore_patterns("*.so", "_core.c", "build", "*.egg-info", "__pycache__"))
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(wheels), str(source)],
        capture_output=True, text=True, env=env, timeout=1400,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = wheels.glob("arena_sdk-*.whl")
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".so")], "no extension was built"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    site = next((venv / "lib").glob("python3.*")) / "site-packages"
    with zipfile.ZipFile(wheel) as zf:  # what pip does with a wheel, without fetching its dependencies
        zf.extractall(site)
    played = subprocess.run(
        [str(venv / "bin" / "python"), "-c", PLAY], capture_output=True, text=True, env=env, timeout=300,
        cwd=tmp_path,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    report = json.loads(played.stdout)
    assert report["compiled"] is False and "no compiled core" in report["reason"], report
    assert report["hands"] == 3
