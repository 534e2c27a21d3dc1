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
  ``ARENA_TEST_GRACE`` seconds (120), and once it is spent the run stops
  after the test under way, so it ends with its summary instead of being
  killed;
- the run's last lines (the part of a log CI keeps) recap it: how long it
  took and whether the budget stopped it, the disk and the engine at the end,
  the slowest tests, every failure in one line, and what the engine guard
  (``tests/engine_guard.py``) did.

On parallel workers (``pytest -n N``, ``tests/parallel.py``) the controller
prints all of it once for the whole run: the workers' reports reach it, the
budget counts from the controller's start in every worker (each stops after
its test under way), and the recap counts the tests no worker ran.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from parallel import is_worker, record_module_seconds, run_started_wall

#: The run's folder and start, shared with the workers of ``pytest -n`` (loaded with this plugin).
pytest_plugins = ["parallel"]

#: Where a full disk would hurt: the checkout, temporary files, Docker's data.
WATCHED = (Path("/"), Path("/tmp"), Path("/var/lib/docker"))
#: Lines of a failure's report printed at once (its end: the assertion or the error).
REASON_LINES = 14
CI_BUDGET_SECONDS = 70 * 60

#: pytest's terminal, where a failure's lines are written at once (set when pytest is configured).
_reporter: pytest.TerminalReporter | None = None


def elapsed() -> float:
    """Seconds since the run began (the controller's start, on every worker)."""
    return time.time() - run_started_wall()


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
        left = max(budget - elapsed(), 0) + LAST_TEST_SECONDS
        marker = item.get_closest_marker("timeout")
        current = item.config.getini("timeout")
        if marker is not None:
            current = marker.args[0] if marker.args else marker.kwargs.get("timeout", current)
        seconds = float(current) if current not in (None, "") else 0.0
        if seconds <= 0 or seconds > left:  # 0: no timeout at all
            item.add_marker(pytest.mark.timeout(max(1, int(left))), append=False)
    yield
    if budget is not None and elapsed() > budget and not item.session.shouldstop:
        spent = f"the run's budget of {budget:.0f} s is spent (ARENA_TEST_BUDGET)"
        if is_worker(item.config):  # the worker stops after its test; the controller counts what no one ran
            item.session.shouldstop = f"{spent}: stopped after {item.nodeid}"
            return
        left_over = len(item.session.items) - item.session.items.index(item) - 1 if item in item.session.items else 0
        if left_over:
            _state.budget_stop = f"{spent}: stopped after {item.nodeid}, {left_over} test(s) not run"
            item.session.shouldstop = _state.budget_stop  # pytest stops before the next test
        else:
            _state.budget_stop = f"{spent} by the last test, {item.nodeid}"


class _RunState:
    """What the recap needs: failures in order, durations, a budget stop; on workers, the count and their stops."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        self.durations: dict[str, float] = {}
        self.budget_stop = ""
        self.collected = 0
        self.worker_stops: list[str] = []


_state = _RunState()
#: Tests named in the recap's "slowest" line.
SLOWEST = 10


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _state.durations[report.nodeid] = _state.durations.get(report.nodeid, 0.0) + report.duration
    if not report.failed:
        return
    _state.failures.append(f"{report.nodeid} ({report.when}, {report.duration:.0f} s): {one_line(report)[:160]}")
    reporter = _reporter
    if reporter is None:  # (a worker: the controller says it)
        return
    text = str(report.longrepr or "").rstrip().splitlines()
    reason = text[-REASON_LINES:]
    reporter.write_line("")
    reporter.write_line(
        f"!! {report.nodeid} failed in {report.when} after {report.duration:.0f} s "
        f"(run at {elapsed():.0f} s; {free_space()})"
    )
    for line in reason:
        reporter.write_line(f"!!   {line[:300]}")


def one_line(report: pytest.TestReport) -> str:
    """A failure's reason in one line: its first ``E`` line (the error), else the report's last line."""
    lines = [line.strip() for line in str(report.longrepr or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("E ")]
    return errors[0] if errors else (lines or [""])[-1]


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    global _reporter
    _reporter = None if is_worker(config) else config.pluginmanager.get_plugin("terminalreporter")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    """The controller: how many tests the run has (every worker collects them all)."""
    _state.collected = len(ids)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """The controller: a worker the budget stopped says after which test."""
    stop = (getattr(node, "workeroutput", None) or {}).get("shouldstop")
    if stop and "ARENA_TEST_BUDGET" in str(stop):
        _state.worker_stops.append(str(stop).rsplit("stopped after ", 1)[-1])


def budget_line() -> str:
    """The recap's word on the budget: not reached, or where it stopped the run (and what it left)."""
    if not _state.worker_stops:
        return _state.budget_stop or "the budget was not reached"
    budget = budget_seconds() or 0
    not_run = max(_state.collected - len({nodeid for nodeid in _state.durations}), 0)
    return (
        f"the run's budget of {budget:.0f} s is spent (ARENA_TEST_BUDGET): the workers stopped after "
        f"{', '.join(_state.worker_stops)}; {not_run} test(s) not run"
    )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """How long each module took, for the next run's order of modules on workers (tests/parallel.py)."""
    if not is_worker(session.config):
        record_module_seconds(session.config, _state.durations)


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The recap, just before pytest's short summary and counts: the end of the log, which CI keeps."""
    from engine_guard import summary_lines

    write = terminalreporter.write_line
    write("")
    write(f"== run report: {elapsed():.0f} s; {budget_line()}")
    write(f"== disk: {free_space()}")
    write(f"== docker: {engine_line()}")
    for line in summary_lines():
        write(f"== engine guard: {line}")
    slowest = sorted(_state.durations.items(), key=lambda kv: -kv[1])[:SLOWEST]
    if slowest:  # (none when nothing ran: --collect-only)
        write("== slowest: " + ", ".join(f"{nodeid.rsplit('::', 1)[-1][:50]} {seconds:.0f} s" for nodeid, seconds in slowest))
    for failure in _state.failures:
        write(f"== failed: {failure}")
