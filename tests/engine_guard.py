"""A Docker engine that stops starting containers is restarted, and the test it failed runs again.

Seen in CI (stops 42 and 43): after some minutes of a run the machine's
Docker engine (Debian's docker.io 20.10) still answered ``ping``, ``ps`` and
``create``, but no container it was asked to ``start`` ever started; every
Docker test after that waited for its timeout, and the run ran out of time.
Nothing in the kernel's log, no full disk; an engine restart is what
brings such an engine back.

The cause, from the goroutines this guard dumped when it met one in a full
run here (rehearsal with kills, 2026-12-06): libnetwork's lock-order
deadlock in Docker 20.10 before 20.10.27 (moby/libnetwork#2679).  A
container's exit clean-up (``sandbox.delete`` -> ``endpoint.sbLeave`` ->
``network.getSvcRecords``) holds the network's lock and waits for the
controller's, while ``controller.processEndpointDelete`` (another
container's endpoint going) holds the controller's and waits for the
network's.  Every seat container is on the one ``none`` network, so two
containers ending at once can meet it; after that every start, removal and
clean-up waits for ever.  Debian bookworm's docker.io is 20.10.24.

So, as a pytest plugin (``tests/conftest.py`` loads it), under ``CI`` (a
developer's run keeps pytest's own protocol): when a test fails, the engine
is asked to start a container of the base image that runs
``true``.  If it cannot within :data:`PROBE_S` seconds, the engine is wedged:

- when the engine is the one ``scripts/docker-setup.sh`` started
  (its pid file), its goroutines are dumped and kept in ``/var/log/arena``
  (the next reader of a CI machine finds what the engine was waiting for),
  it is restarted (``--restart``: at most :data:`MAX_RESTARTS` times in a
  run) and the test runs once more; its first attempt is reported in ``!!``
  lines and in the run's last lines, never hidden;
- any other engine (it may be shared) is left as it is, and that is said.

A test that fails on a healthy engine is reported as it is: the probe only
decides whether the engine could have been the cause.

On parallel workers (``pytest -n N``) the engine is shared by the workers'
tests, so a restart is the run's, not a worker's: one worker restarts it at a
time (a lock in the run's folder, ``tests/parallel.py``), at most
:data:`MAX_RESTARTS` times in the whole run, and every restart is kept in a
record the workers read.  A worker whose test failed while another one
restarted the engine (the restart stopped its containers) does not restart
it again: it says so and runs its test once more.  What a worker says reaches
the controller with the test's report, and the controller prints it and the
recap once.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _pytest.runner import runtestprotocol
from parallel import is_worker, run_dir, run_lock, write_json

#: The run's folder and its lock, shared with the workers of ``pytest -n`` (loaded with this plugin).
pytest_plugins = ["parallel"]

REPO = Path(__file__).resolve().parents[1]
BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm")
#: How long a healthy engine may take to run ``true`` in a new container (a loaded machine: seconds).
PROBE_S = float(os.environ.get("ARENA_TEST_ENGINE_PROBE_S", "90"))
MAX_RESTARTS = 3
#: Where docker-setup.sh keeps the pid of the dockerd it started.
PID_FILE = Path(os.environ.get("ARENA_TEST_ENGINE_PID_FILE", "/var/run/arena-dockerd.pid"))
#: The restart (its own test replaces it: the real one would restart the engine the suite runs on).
RESTART_COMMAND = os.environ.get("ARENA_TEST_ENGINE_RESTART", f"bash {REPO / 'scripts' / 'docker-setup.sh'} --restart")
PROBE_LABEL = "arena.engine-probe"


@dataclass
class GuardLog:
    """What the guard did in this run (printed at its end)."""

    restarts: list[str] = field(default_factory=list)
    reruns: list[tuple[str, str]] = field(default_factory=list)  # (test, outcome of its rerun)
    wedged_unrestarted: list[str] = field(default_factory=list)


LOG = GuardLog()
#: The run's record of restarts (each: when it ended, which worker, after which test, what it said).
RESTARTS_FILE = "engine-restarts.json"
#: The attribute of a worker's report that carries what the guard said and did to the controller.
REPORT_ATTRIBUTE = "arena_engine_guard"


class _Said:
    """What the guard says about the test under way: printed at once, or (on a worker) kept for its report."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.log: list[tuple[str, Any]] = []
        self.on_worker = False
        self.worker = "this run"
        self.workers = 1

    def begin(self, item: pytest.Item) -> None:
        self.lines, self.log, self.on_worker = [], [], is_worker(item.config)
        # From the worker's own input, not the environment: a pytest a test starts inherits a worker's.
        workerinput = getattr(item.config, "workerinput", {})
        self.worker, self.workers = workerinput.get("workerid", "this run"), int(workerinput.get("workercount", 1))

    def note(self, kind: str, value: Any) -> None:
        """One entry of :data:`LOG` (``restarts``, ``reruns``, ``wedged_unrestarted``)."""
        getattr(LOG, kind).append(value)
        self.log.append((kind, value))

    def attach(self, reports: list[Any]) -> None:
        if self.on_worker and (self.lines or self.log) and reports:
            setattr(reports[-1], REPORT_ATTRIBUTE, {"said": self.lines, "log": self.log})


_said = _Said()


def restarts() -> list[dict[str, Any]]:
    """The run's restarts so far, by every worker."""
    try:
        return list(json.loads((run_dir() / RESTARTS_FILE).read_text()))
    except (OSError, ValueError):
        return []


def record_restart(entry: dict[str, Any]) -> None:
    """Add a restart to the run's record (the caller holds the guard's lock)."""
    write_json(run_dir() / RESTARTS_FILE, [*restarts(), entry])


def probe_engine(timeout: float = PROBE_S) -> str | None:
    """None if the engine starts and ends a container of the base image in time, else why not.

    The Docker calls run in a thread of their own: a wedged engine can hold a
    call past any client timeout, and the guard must not wait with it.
    """
    outcome: list[str | None] = []

    def attempt() -> None:
        try:
            import docker.errors  # (binds ``docker`` too)
            import requests

            client = docker.from_env(timeout=timeout)
            try:
                client.images.get(BASE_IMAGE)
            except (docker.errors.ImageNotFound, requests.exceptions.ConnectionError):
                outcome.append(None)  # no engine or no base image: not a wedge a restart mends
                return
            container = client.api.create_container(
                BASE_IMAGE, ["true"], labels={PROBE_LABEL: str(os.getpid())},
                host_config=client.api.create_host_config(network_mode="none"), network_disabled=True,
            )  # fmt: skip
            try:
                client.api.start(container["Id"])
                client.api.wait(container["Id"], timeout=timeout)
            finally:
                with contextlib.suppress(Exception):
                    client.api.remove_container(container["Id"], force=True)
                client.close()
            outcome.append(None)
        except Exception as exc:  # noqa: BLE001 - the reason is the result
            text = f"{type(exc).__name__}: {str(exc)[:200]}"
            # Nothing listening (no socket, refused) is no engine, not a wedged one.
            absent = ("FileNotFoundError" in text or "Connection refused" in text) and "timed out" not in text
            outcome.append(None if absent else text)

    thread = threading.Thread(target=attempt, name="engine-probe", daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(timeout + 5)
    if thread.is_alive():
        return f"no container of {BASE_IMAGE} started and ended within {time.monotonic() - started:.0f} s"
    return outcome[0] if outcome else "the probe ended without a result"


def own_engine_pid() -> int | None:
    """The pid of the dockerd ``scripts/docker-setup.sh`` started, if it runs."""
    try:
        pid = int(PID_FILE.read_text().strip())
        return pid if Path(f"/proc/{pid}/comm").read_text().strip() == "dockerd" else None
    except (OSError, ValueError):
        return None


def restart_engine() -> str:
    """Restart the engine docker-setup.sh started (dumping its goroutines first); its output's last line."""
    done = subprocess.run(shlex.split(RESTART_COMMAND), capture_output=True, text=True, timeout=300)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def remove_first_attempts_containers() -> list[str]:
    """Remove this run's containers after a restart (the restart stopped them all); their names.

    What the failed attempt left (the wedged engine could remove nothing) is
    part of the failure already said; left in place, the next fixture that
    counts the run's containers at its teardown would fail for it.
    """
    support = sys.modules.get("docker_support")
    if support is None:
        return []
    try:
        client = support.docker_client(timeout=30)
    except Exception:  # noqa: BLE001 - an engine that does not answer after its restart: nothing to remove
        return []
    try:
        # The probe's own container too: created, never started, not removable while it was wedged.
        for probe in client.api.containers(all=True, filters={"label": f"{PROBE_LABEL}={os.getpid()}"}):
            with contextlib.suppress(Exception):
                client.api.remove_container(probe["Id"], force=True)
        return list(support.remove_own(client))
    finally:
        client.close()


def _say(item: pytest.Item, line: str) -> None:
    if _said.on_worker:
        _said.lines.append(line)
        return
    reporter = item.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"!! {line}")


def _restart_timer(item: pytest.Item) -> None:
    """Give the rerun the test's whole timeout again (pytest-timeout armed it once, for the first attempt)."""
    with contextlib.suppress(Exception):
        from pytest_timeout import _get_item_settings

        settings = _get_item_settings(item)
        if settings.timeout and not settings.func_only:
            item.config.pluginmanager.hook.pytest_timeout_set_timer(item=item, settings=settings)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    if not os.environ.get("CI"):
        return None  # a developer's run: pytest's own protocol, untouched
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    _said.begin(item)
    began = time.time()
    reports = runtestprotocol(item, nextitem=nextitem, log=False)
    if any(report.failed for report in reports):
        # The test's timeout is still armed: it must not go off in the probe or the restart.
        with contextlib.suppress(Exception):
            item.config.pluginmanager.hook.pytest_timeout_cancel_timer(item=item)
        reason = probe_engine()
        if reason is not None:
            reports = _after_a_wedge(item, nextitem, reports, reason, began)
        else:
            reports = _after_a_restart_elsewhere(item, nextitem, reports, began)
    _said.attach(reports)
    for report in reports:
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _after_a_wedge(
    item: pytest.Item, nextitem: pytest.Item | None, reports: list[Any], reason: str, began: float
) -> list[Any]:
    """The engine is wedged after ``item`` failed: restart it (unless another worker just did) and run ``item`` again."""
    first = next(r for r in reports if r.failed)
    _say(item, f"{item.nodeid} failed in {first.when} and the Docker engine no longer starts containers ({reason})")
    for line in str(first.longrepr or "").rstrip().splitlines()[-6:]:
        _say(item, f"  {line[:300]}")
    with run_lock("engine-guard"):  # one restart at a time in the run; another worker's may be under way
        done = restarts()
        meanwhile = [r for r in done if r["at"] >= began]
        if meanwhile:
            _say(item, f"  {_restart_words(meanwhile[-1])} while it ran: not restarted again; the test runs again")
        elif own_engine_pid() is None or len(done) >= MAX_RESTARTS:
            _said.note("wedged_unrestarted", item.nodeid)
            _say(item, "  the engine is not the one scripts/docker-setup.sh started, or it was restarted enough: left as it is")
            return reports
        else:
            said = restart_engine()
            record_restart({"at": time.time(), "by": _said.worker, "after": item.nodeid, "said": said})
            _said.note("restarts", f"after {item.nodeid}: {said}")
            _say(item, f"  engine restarted (goroutines kept in /var/log/arena): {said}; the test runs again")
            if _said.workers > 1:
                _say(item, "  the other workers' tests under way met the restart: each that failed runs again, said so")
    return _run_again(item, nextitem)


def _after_a_restart_elsewhere(item: pytest.Item, nextitem: pytest.Item | None, reports: list[Any], began: float) -> list[Any]:
    """``item`` failed on a healthy engine: if another worker restarted the engine under it, it runs again."""
    with run_lock("engine-guard"):  # a restart under way ends first (the engine is down while it runs)
        meanwhile = [r for r in restarts() if r["at"] >= began]
    if not meanwhile:
        return reports  # the engine was not the cause: the failure stands as it is
    first = next(r for r in reports if r.failed)
    _say(item, f"{item.nodeid} failed in {first.when} after {first.duration:.0f} s; {_restart_words(meanwhile[-1])} "
               f"under it: the test runs again")  # fmt: skip
    for line in str(first.longrepr or "").rstrip().splitlines()[-6:]:
        _say(item, f"  {line[:300]}")
    return _run_again(item, nextitem)


def _restart_words(restart: dict[str, Any]) -> str:
    return f"the engine was restarted by {restart['by']} (after {restart['after']})"


def _run_again(item: pytest.Item, nextitem: pytest.Item | None) -> list[Any]:
    """Clear what the first attempt left on the engine and run ``item`` once more, its whole timeout again."""
    left = remove_first_attempts_containers()
    if left:
        _say(item, f"  the first attempt's containers (stopped with the engine) removed: {', '.join(left)}")
    _restart_timer(item)  # (runtestprotocol gives the item a fresh fixture request itself)
    again = runtestprotocol(item, nextitem=nextitem, log=False)
    _said.note("reruns", (item.nodeid, "failed" if any(r.failed for r in again) else "passed"))
    return again


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The controller of ``pytest -n``: what a worker's guard said and did, printed and kept for the recap."""
    carried = getattr(report, REPORT_ATTRIBUTE, None)
    if not carried or _config is None or is_worker(_config):
        return
    reporter = _config.pluginmanager.get_plugin("terminalreporter")
    for line in carried.get("said", []):
        if reporter is not None:
            reporter.write_line(f"!! {line}")
    for kind, value in carried.get("log", []):
        getattr(LOG, kind).append(tuple(value) if isinstance(value, list) else value)


_config: pytest.Config | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _config
    _config = config


def summary_lines() -> list[str]:
    """What the guard did, for the run's last lines; under CI, a line that it never fired when it did nothing."""
    lines = [f"engine restarted {r}" for r in LOG.restarts]
    lines += [f"ran again after the restart: {test}: {outcome}" for test, outcome in LOG.reruns]
    lines += [f"engine wedged after {test}, not restarted" for test in LOG.wedged_unrestarted]
    if not lines and os.environ.get("CI"):
        lines.append("never fired (no failure found the engine unable to start a container)")
    return lines
