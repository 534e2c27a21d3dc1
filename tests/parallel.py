"""The suite on parallel workers (pytest-xdist): what they share, how modules are dealt, what runs alone.

(PYTEST_DONT_REWRITE: imported by the other plugins before pytest registers it.)

A pytest plugin (``tests/conftest.py`` loads it).  With ``-n N`` (the
README's test command) the run is a controller and N worker processes:

- **one folder per run**, shared by the controller and its workers
  (:func:`run_dir`): images built once per run (``docker_support``), the
  engine guard's record of restarts, the tests marked ``alone``.  The
  controller (or a run without workers) makes it and removes it at the end;
- **modules are dealt whole**, longest first: a module's fixtures (a
  built image, a served ladder) are made once, and the long ones do not end
  the run alone.  How long a module takes comes from this machine's last run
  (pytest's cache) or else from ``tests/module_seconds.json`` (a measured
  run, refreshed with ``python tests/parallel.py``);
- **tests marked** ``@pytest.mark.alone`` (reason) run after every other
  test has ended, one after another on one worker: tests that cannot share
  the machine (they measure it, or load it on purpose).

Without ``-n`` nothing changes: the tests run in order in one process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import sys
import tempfile
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
#: Seconds each module took in a measured run (the fallback when this machine has no run of its own cached).
MEASURED = Path(os.environ.get("ARENA_TEST_MODULE_SECONDS", HERE / "module_seconds.json"))
#: Where the last run's module times are kept in pytest's cache.
CACHE_KEY = "arena/module-seconds"
#: A module never measured counts as this many seconds.
UNKNOWN_SECONDS = 5.0
ALONE_FILE = "alone.json"

_run: dict[str, Any] = {"dir": None, "started": None, "owner": False}


def is_worker(config: pytest.Config) -> bool:
    """True in an xdist worker process (the controller and a run without workers are not)."""
    return hasattr(config, "workerinput")


def run_dir() -> Path:
    """This run's folder, shared by the controller and every worker (made on first use outside a run)."""
    if _run["dir"] is None:
        _run["dir"] = Path(tempfile.mkdtemp(prefix="arena-test-run-"))
        _run["owner"] = True
    path: Path = _run["dir"]
    return path


def run_started_wall() -> float:
    """When the run began (``time.time()``): the controller's start, the same in every worker."""
    if _run["started"] is None:
        _run["started"] = time.time()
    started: float = _run["started"]
    return started


@contextlib.contextmanager
def run_lock(name: str) -> Iterator[None]:
    """A lock held across the run's processes (``flock`` on a file in :func:`run_dir`)."""
    path = run_dir() / "locks" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` to ``path`` whole or not at all (another process may read it meanwhile)."""
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    staging.write_text(json.dumps(value, indent=1, sort_keys=True))
    staging.replace(path)


# ------------------------------------------------------------------------- the run's folder and start


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "alone(reason): runs after every other test, with no other test beside it (pytest -n)"
    )
    if is_worker(config):
        workerinput = config.workerinput  # type: ignore[attr-defined]
        if "arena_run_dir" in workerinput:
            _run.update(dir=Path(workerinput["arena_run_dir"]), started=workerinput["arena_run_started"], owner=False)
            return
    run_started_wall()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """The controller hands each worker the run's folder and start."""
    node.workerinput["arena_run_dir"] = str(run_dir())
    node.workerinput["arena_run_started"] = run_started_wall()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _run["owner"] and _run["dir"] is not None:
        shutil.rmtree(_run["dir"], ignore_errors=True)
        _run["dir"] = None


# ------------------------------------------------------------------------- tests that run alone


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A worker tells the controller which tests are marked ``alone`` (it sees node ids only)."""
    if is_worker(config):
        alone = [item.nodeid for item in items if item.get_closest_marker("alone") is not None]
        write_json(run_dir() / ALONE_FILE, alone)


def alone_tests() -> set[str]:
    """The node ids the workers found marked ``alone`` (none before they have collected)."""
    try:
        return set(json.loads((run_dir() / ALONE_FILE).read_text()))
    except (OSError, ValueError):
        return set()


# ------------------------------------------------------------------------- how long modules take


def module_of(nodeid: str) -> str:
    """``tests/x/test_y.py`` for any test in it."""
    return nodeid.split("::", 1)[0]


def module_seconds(config: pytest.Config) -> dict[str, float]:
    """How long each module took: the measured table, overlaid with this machine's last run."""
    seconds: dict[str, float] = {}
    with contextlib.suppress(OSError, ValueError):
        seconds.update(json.loads(MEASURED.read_text()))
    cache = getattr(config, "cache", None)
    if cache is not None:
        seconds.update(cache.get(CACHE_KEY, {}) or {})
    return seconds


def record_module_seconds(config: pytest.Config, durations: dict[str, float]) -> None:
    """Keep this run's module times in pytest's cache (a run of a few modules updates only those)."""
    cache = getattr(config, "cache", None)
    if cache is None or not durations:
        return
    per_module: dict[str, float] = {}
    for nodeid, seconds in durations.items():
        per_module[module_of(nodeid)] = per_module.get(module_of(nodeid), 0.0) + seconds
    kept = cache.get(CACHE_KEY, {}) or {}
    kept.update({module: round(seconds, 1) for module, seconds in per_module.items()})
    cache.set(CACHE_KEY, kept)


# ------------------------------------------------------------------------- the scheduler


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # an older venv without pytest-xdist: a run without -n needs nothing of it
    LoadScopeScheduling = object


class ArenaScheduling(LoadScopeScheduling):  # type: ignore[misc,valid-type]
    """Whole modules to workers, longest first; the ``alone`` tests last, on one worker with no other busy.

    A worker is sent a new module when it has two tests or fewer left (as
    xdist's ``loadscope``).  Once no module is left to deal, every worker but
    one is shut down as it runs out; when they have all ended, the one left
    is sent the ``alone`` tests, which it runs one after another.
    """

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self.alone_queue: OrderedDict[str, dict[str, bool]] = OrderedDict()
        self.alone_node: Any = None
        self.alone_ids: set[str] = set()

    def _split_scope(self, nodeid: str) -> str:
        """A module; its alone tests are a unit of their own (a worker may still hold the module's last test)."""
        return module_of(nodeid) + ("@alone" if nodeid in self.alone_ids else "")

    @property
    def tests_finished(self) -> bool:
        return bool(super().tests_finished) and not self.alone_queue

    @property
    def has_pending(self) -> bool:
        return bool(super().has_pending) or bool(self.alone_queue)

    def schedule(self) -> None:
        assert self.collection_is_completed
        if self.collection is not None:  # a worker added later (one crashed): deal to it too
            for node in self.nodes:
                self._reschedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = list(next(iter(self.registered_collections.values())))
        self.alone_ids = alone_tests() & set(self.collection)
        units: dict[str, dict[str, bool]] = {}
        for nodeid in self.collection:
            queue = self.alone_queue if nodeid in self.alone_ids else units
            queue.setdefault(self._split_scope(nodeid), {})[nodeid] = False
        weights = module_seconds(self.config)
        for scope in sorted(units, key=lambda s: -weights.get(s, UNKNOWN_SECONDS)):
            self.workqueue[scope] = units[scope]
        for node in self.nodes:
            if self.workqueue:
                self._assign_work_unit(node)
        for node in self.nodes:
            self._reschedule(node)

    def _reschedule(self, node: Any) -> None:
        if node.shutting_down:
            return
        if self.workqueue:
            if self._pending_of(self.assigned_work[node]) <= 2:
                self._assign_work_unit(node)
            return
        if self.alone_queue and self.alone_node is None:
            self.alone_node = node  # the first worker out of modules keeps going, for the alone tests
        if node is not self.alone_node:
            node.shutdown()
        self._start_alone_tests()

    def _start_alone_tests(self) -> None:
        """Once every other worker has ended its tests, the alone tests go to the one kept."""
        node = self.alone_node
        if node is None or node.shutting_down or node not in self.assigned_work:
            return
        others_busy = any(self._pending_of(work) for other, work in self.assigned_work.items() if other is not node)
        # <= 1: a worker holds its last test until it is sent another or told to shut down.
        if others_busy or self._pending_of(self.assigned_work[node]) > 1:
            return
        while self.alone_queue:
            self.workqueue.update([self.alone_queue.popitem(last=False)])
            self._assign_work_unit(node)
        node.shutdown()

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        super().mark_test_complete(node, item_index, duration)
        if self.alone_node is not None and node is not self.alone_node:
            self._start_alone_tests()  # the last other worker ended: the kept one may begin

    def remove_node(self, node: Any) -> str | None:
        crashed = super().remove_node(node)
        if node is self.alone_node:
            self.alone_node = None
        elif self.alone_node is not None:
            self._start_alone_tests()
        return crashed


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``-n N`` (xdist's ``--dist load``) deals with :class:`ArenaScheduling`; other ``--dist`` modes are xdist's."""
    if config.getoption("dist") == "load":
        return ArenaScheduling(config, log)
    return None


def _save_measured(cache_dir: Path, out: Path = MEASURED) -> int:
    """Merge the cached module times of this machine's runs into the measured table; how many modules it has."""
    table: dict[str, float] = {}
    with contextlib.suppress(OSError, ValueError):
        table.update(json.loads(out.read_text()))
    table.update(json.loads((cache_dir / "v" / "arena" / "module-seconds").read_text()))
    write_json(out, dict(sorted(table.items())))
    return len(table)


if __name__ == "__main__":  # python tests/parallel.py: the last run's times become the measured table
    count = _save_measured(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent / ".pytest_cache")
    print(f"{MEASURED}: {count} modules")


__all__: Sequence[str] = ["alone_tests", "is_worker", "module_seconds", "run_dir", "run_lock", "run_started_wall"]
