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

#: The run's budget in these runs, counted from the first test's start (:data:`CONFTEST`).
BUDGET_S = 10

#: The folder's conftest: the plugin as the suite loads it, its budget counted from the start of the first
#: test (each worker's own), so a loaded machine's start-up spends none of it: the first test, which fails
#: at once, always runs within it and the second, which sleeps, always outlasts it.
CONFTEST = """
import time

import parallel
import pytest

pytest_plugins = ["run_report"]
_begun = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if not _begun:
        _begun.append(item)
        parallel._run["started"] = time.time()
"""

TESTS = '''
import time

import pytest


def test_fails():
    assert 1 == 2, "one is not two"


@pytest.mark.timeout(900)
def test_sleeps_past_the_budget():
    import run_report

    budget = run_report.budget_seconds()  # a short one is slept past; none (or CI's 70 minutes) is not waited for
    time.sleep(budget + 60 if budget is not None and budget < 600 else 1)


def test_after_the_budget():
    pass
'''


def _pytest(folder: Path, budget: str, *args: str, tests: dict[str, str] | None = None) -> str:
    (folder / "conftest.py").write_text(CONFTEST)
    for name, text in (tests or {"test_small.py": TESTS}).items():
        (folder / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(HERE), "ARENA_TEST_BUDGET": budget, "ARENA_TEST_GRACE": "2"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args, str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    return done.stdout


def test_a_failure_is_said_before_the_summary_and_the_budget_ends_the_run(tmp_path: Path):
    out = _pytest(tmp_path, str(BUDGET_S))
    summary = out.index("short test summary")
    said = out.index("!! test_small.py::test_fails failed in call")
    assert said < summary, out
    assert "!!   E       AssertionError: one is not two" in out[said:summary]
    assert "free of" in out[said:summary], "the free disk space is named with the failure"
    # The 900 s timeout was cut to what is left of the budget plus the last test's grace (2 s).
    assert "Timeout (>" in out and "test_sleeps_past_the_budget" in out[summary:], out
    # Past the budget the run stops after the test under way: the last test never runs.
    assert f"run's budget of {BUDGET_S} s is spent (ARENA_TEST_BUDGET): stopped after" in out, out
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


def test_on_workers_the_controller_reports_once_and_the_budget_stops_every_worker(tmp_path: Path):
    """``pytest -n 2``: each module on a worker of its own; one recap, each failure said once, the budget kept."""
    second = TESTS.replace("def test_", "def test_second_")
    out = _pytest(tmp_path, str(BUDGET_S), "-n", "2", tests={"test_small.py": TESTS, "test_other.py": second})
    summary = out.index("short test summary")
    assert out.count("== run report:") == 1, out
    for module, prefix in (("test_small.py", ""), ("test_other.py", "second_")):
        assert out.count(f"!! {module}::test_{prefix}fails failed in call") == 1, out
        assert out.index(f"!! {module}::test_{prefix}fails failed in call") < summary, out
        assert f"test_{prefix}after_the_budget" not in out, "past the budget no worker starts another test"
    recap = out[out.index("== run report:"):summary]
    first = recap.splitlines()[0]
    assert f"the run's budget of {BUDGET_S} s is spent (ARENA_TEST_BUDGET): the workers stopped after" in first, recap
    assert "test_small.py::test_sleeps_past_the_budget" in first and "test_other.py::test_second_sleeps_past" in first, recap
    assert first.endswith("; 2 test(s) not run"), recap
    slowest = next(line for line in recap.splitlines() if line.startswith("== slowest: "))
    assert "test_sleeps_past_the_budget" in slowest and "test_second_sleeps_past_the_budget" in slowest, recap
    assert recap.count("== failed: ") == 4, recap
