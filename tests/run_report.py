"""What a test run says about itself while it runs, so a log cut short still explains a failure.

CI keeps only a part of a run's output, and a run stopped at its time limit
never prints pytest's summary.  So, as a pytest plugin (``tests/conftest.py``
loads it):

- the header names what the Docker tests stand on: the free space where
  images, containers and temporary files live, and the engine;
- a failing test prints its reason at once, in a few lines, with the free
  space at that moment (a full disk fails many unrelated tests);
- a whole run has a budget (``ARENA_TEST_BUDGET`` seconds; 70 minutes under
  ``CI``, none elsewhere): no test's timeout reaches past it by more than
  ``ARENA_TEST_GRACE`` seconds (120), and once it is spent every test left
  fails at setup saying so, so the run ends with its summary instead of
  being killed.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

#: Where a full disk would hurt: the checkout, temporary files, Docker's data.
WATCHED = (Path("/"), Path("/tmp"), Path("/var/lib/docker"))
#: Lines of a failure's report printed at once (its end: the assertion or the error).
REASON_LINES = 14
CI_BUDGET_SECONDS = 70 * 60

_started = time.monotonic()
#: pytest's terminal, where a failure's lines are written at once (set when pytest is configured).
_reporter: pytest.TerminalReporter | None = None


def budget_seconds() -> float | None:
    """The run's budget in seconds: ``ARENA_TEST_BUDGET``, else 70 minutes under CI, else none."""
    value = os.environ.get("ARENA_TEST_BUDGET", "").strip()
    if value:
        return float(value)
    return CI_BUDGET_SECONDS if os.environ.get("CI") else None


def free_space() -> str:
    """``/ 53.1G free, /tmp ...``: each watched place once (the same filesystem is named once)."""
    seen: set[int] = set()
    parts = []
    for place in WATCHED:
        try:
            device = place.stat().st_dev
            usage = shutil.disk_usage(place)
        except OSError:
            continue
        if device in seen:
            continue
        seen.add(device)
        parts.append(f"{place} {usage.free / 2**30:.1f}G free of {usage.total / 2**30:.0f}G")
    return ", ".join(parts)


def engine_line() -> str:
    """The Docker engine's version and what it holds, or why there is none (never raises)."""
    try:
        from arena.sandbox.docker import docker_client

        client = docker_client(timeout=10)  # a hung engine delays the header 10 s, no more
        try:
            info = client.info()
            return (
                f"engine {info.get('ServerVersion')}, {info.get('Images')} images, "
                f"{info.get('Containers')} containers ({info.get('ContainersRunning')} running), "
                f"driver {info.get('Driver')}"
            )
        finally:
            client.close()
    except Exception as exc:  # noqa: BLE001 - no engine on a developer's machine is fine here
        return f"no engine ({type(exc).__name__})"


def pytest_report_header(config: pytest.Config) -> list[str]:
    budget = budget_seconds()
    return [
        f"disk: {free_space()}",
        f"docker: {engine_line()}",
        f"run budget: {'none' if budget is None else f'{budget:.0f} s'} (ARENA_TEST_BUDGET)",
    ]


#: A test started near the budget's end still gets this long before its timeout (``ARENA_TEST_GRACE``).
LAST_TEST_SECONDS = float(os.environ.get("ARENA_TEST_GRACE", "120"))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    """Before pytest-timeout reads a test's timeout: none reaches past the run's budget."""
    budget = budget_seconds()
    if budget is not None:
        left = max(budget - (time.monotonic() - _started), 0) + LAST_TEST_SECONDS
        marker = item.get_closest_marker("timeout")
        current = item.config.getini("timeout")
        if marker is not None:
            current = marker.args[0] if marker.args else marker.kwargs.get("timeout", current)
        seconds = float(current) if current not in (None, "") else 0.0
        if seconds <= 0 or seconds > left:  # 0: no timeout at all
            item.add_marker(pytest.mark.timeout(max(1, int(left))), append=False)
    yield


def pytest_runtest_setup(item: pytest.Item) -> None:
    budget = budget_seconds()
    if budget is not None and time.monotonic() - _started > budget:
        pytest.fail(
            f"the run's budget of {budget:.0f} s is spent (ARENA_TEST_BUDGET); "
            "this test was not run, so that the run ends with its summary",
            pytrace=False,
        )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not report.failed:
        return
    reporter = _reporter
    if reporter is None:
        return
    text = str(report.longrepr or "").rstrip().splitlines()
    reason = text[-REASON_LINES:]
    elapsed = time.monotonic() - _started
    reporter.write_line("")
    reporter.write_line(
        f"!! {report.nodeid} failed in {report.when} after {report.duration:.0f} s "
        f"(run at {elapsed:.0f} s; {free_space()})"
    )
    for line in reason:
        reporter.write_line(f"!!   {line[:300]}")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    global _reporter
    _reporter = config.pluginmanager.get_plugin("terminalreporter")
