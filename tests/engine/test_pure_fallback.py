"""The engine suite on the pure-Python core, in CI too (issue 48).

The suite's own run uses the compiled core where it is built.  This test runs
the engine's, the built-in bots' and the SDK's tests once more in a fresh
interpreter with ``ARENA_SDK_PURE=1``, so the fallback is held to the same
tests; skipped where the whole suite already runs pure (no compiled core, or
the variable set).  The side-by-side comparison of the two cores is
tests/engine/test_core_equivalence.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena_sdk.engine import core

REPO = Path(__file__).resolve().parents[2]
#: The test directories that must pass on the pure core.
SUITES = ("tests/engine", "tests/bots", "tests/sdk")


@pytest.mark.skipif(not core.COMPILED, reason=f"the whole suite runs on the pure core here: {core.REASON}")
@pytest.mark.timeout(3600)
def test_the_engine_bots_and_sdk_suites_pass_on_the_pure_core() -> None:
    env = {**os.environ, core.PURE_ENV: "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *SUITES, "-q", "-p", "no:cacheprovider", "-x",
         "--deselect", "tests/engine/test_pure_fallback.py", "--deselect", "tests/engine/test_install_without_compiler.py"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=3500,
    )  # fmt: skip
    tail = "\n".join(done.stdout.splitlines()[-30:])
    assert done.returncode == 0, f"the pure core failed the engine suites:\n{tail}\n{done.stderr[-2000:]}"
    assert " passed" in tail
