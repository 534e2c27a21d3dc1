"""The suite's own report (tests/run_report.py): a failure said at once, the budget kept.

A real pytest in a subprocess on a folder of small tests that load the plugin
as this suite does; only its printed output is looked at.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

TESTS = '''
import time

import pytest


def test_fails():
    assert 1 == 2, "one is not two"


@pytest.mark.timeout(900)
def test_sleeps_past_the_budget():
    time.sleep(6)


def test_after_the_budget():
    pass
'''


def _pytest(folder: Path, budget: str) -> str:
    (folder / "conftest.py").write_text('pytest_plugins = ["run_report"]\n')
    (folder / "test_small.py").write_text(TESTS)
    env = {**os.environ, "PYTHONPATH": str(HERE), "ARENA_TEST_BUDGET": budget, "ARENA_TEST_GRACE": "2"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    return done.stdout


def test_a_failure_is_said_before_the_summary_and_the_budget_ends_the_run(tmp_path: Path):
    out = _pytest(tmp_path, "3")
    summary = out.index("short test summary")
    said = out.index("!! test_small.py::test_fails failed in call")
    assert said < summary, out
    assert "!!   E       AssertionError: one is not two" in out[said:summary]
    assert "free of" in out[said:summary], "the free disk space is named with the failure"
    # The 900 s timeout was cut to what is left of the 3 s budget plus the last test's grace (2 s).
    assert "Timeout (>" in out and "test_sleeps_past_the_budget" in out[summary:], out
    # Past the budget the run stops after the test under way: the last test never runs.
    assert "run's budget of 3 s is spent (ARENA_TEST_BUDGET): stopped after" in out, out
    assert "1 test(s) not run" in out, out
    assert "test_after_the_budget" not in out, out
    assert any(line.startswith("disk: ") for line in out[:summary].splitlines()), "the header names the disk"
    # The recap is the log's last lines: the budget, the disk, the slowest tests, each failure in one line.
    # pytest prints its short summary and the counts after every plugin's summary: the recap is just before.
    recap = out[out.index("== run report:"):summary]
    assert "stopped after test_small.py::test_sleeps_past_the_budget" in recap.splitlines()[0], recap
    assert "== disk: " in recap and "== slowest: test_sleeps_past_the_budget" in recap, recap
    assert "== failed: test_small.py::test_fails (call, 0 s): E       AssertionError: one is not two" in recap, recap
    assert "== failed: test_small.py::test_sleeps_past_the_budget (call," in recap, recap


def test_no_budget_outside_ci_runs_every_test(tmp_path: Path):
    out = _pytest(tmp_path, "")
    env_ci = os.environ.get("CI")
    if env_ci:  # under CI the default budget (70 min) applies; nothing here comes near it
        assert "run budget: 4200 s" in out, out
    else:
        assert "run budget: none" in out, out
    assert "1 failed, 2 passed" in out, out
    assert "the budget was not reached" in out, out
