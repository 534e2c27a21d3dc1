"""The prune before a run starts says an engine's error in one line; the prune at its end logs it and goes on.

The engine is a real HTTP API on a Unix socket (tests/fake_engine.py) that
pings but refuses to list or remove containers: what a wedged or failing
engine answers.  Before, every error was swallowed and the run started anyway.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from fake_engine import fake_engine

from arena.results.store import ResultsStore
from arena.sandbox.docker import LABEL, MATCH_LABEL, RUN_LABEL
from arena.tables.containers import PruneFailed, prune_run
from arena.tables.ledger import Ledger
from arena.tables.runner import Runner

LIST = r"/containers/json"
LEFTOVER = {
    "Id": "c0ffee" * 10, "Names": ["/arena-left-1"], "State": "exited",
    "Labels": {LABEL: "1", RUN_LABEL: "run-1", MATCH_LABEL: "t/m1"},
}  # fmt: skip


@pytest.fixture
def engine_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    socket = tmp_path / "engine.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{socket}")
    return socket


def test_an_engine_that_cannot_list_stops_a_strict_prune_in_one_line(engine_socket: Path):
    wedged = [("GET", LIST, (500, {"message": "context deadline exceeded\nwhile listing"}))]
    with fake_engine(engine_socket, wedged) as seen:
        prune_run("run-1")  # best effort: quiet
        with pytest.raises(PruneFailed) as caught:
            prune_run("run-1", strict=True)
    message = str(caught.value)
    assert "\n" not in message and "could not list this run's leftover containers" in message, message
    assert "context deadline exceeded while listing" in message, "the engine's own reason, on one line"
    assert ("GET", LIST) in seen


def test_a_container_the_engine_will_not_remove_is_named(engine_socket: Path):
    routes = [
        ("GET", LIST, (200, [LEFTOVER])),
        ("DELETE", r"/containers/c0ffee\w*", (500, {"message": "driver failed removing container"})),
    ]
    with fake_engine(engine_socket, routes) as seen:
        prune_run("run-1")
        with pytest.raises(PruneFailed, match=r"could not remove 1 leftover container\(s\) of this run "
                                              r"\(arena-left-1: driver failed removing container\)"):
            prune_run("run-1", strict=True)
    assert seen.count(("DELETE", f"/containers/{LEFTOVER['Id']}")) == 2


def test_a_container_removed_meanwhile_is_no_error(engine_socket: Path):
    routes = [("GET", LIST, (200, [LEFTOVER])), ("DELETE", r"/containers/\w+", (404, {"message": "No such container"}))]
    with fake_engine(engine_socket, routes):
        prune_run("run-1", strict=True)


def test_no_engine_at_all_stops_a_strict_prune(engine_socket: Path):
    prune_run("run-1")
    with pytest.raises(PruneFailed, match="cannot remove this run's leftover containers: no Docker engine answers"):
        prune_run("run-1", strict=True)


class Nothing:
    """A schedule with nothing to play; counts what the loop asked."""

    def __init__(self) -> None:
        self.asked = 0

    def next_job(self, room):
        self.asked += 1
        return None

    def recorded(self, job, table, game, recorded):
        pass

    def job_done(self, job, results, stopped):
        pass

    def done(self):
        return False

    async def idle(self):
        return False


def run_loop(tmp_path: Path, prune) -> Nothing:
    store = ResultsStore(tmp_path / "results.sqlite")
    schedule = Nothing()
    try:
        runner = Runner(schedule, Ledger(store, tmp_path, ruleset_hash="r"), player=None, capacity=1,  # type: ignore[arg-type]
                        prune=prune, watch_signals=False)  # fmt: skip
        trio.run(runner.run)
    finally:
        store.close()
    return schedule


def test_the_run_loop_stops_on_its_start_prune_and_tries_no_end_prune(tmp_path: Path):
    calls = []

    def failing() -> None:
        calls.append("prune")
        raise PruneFailed("the Docker engine could not list this run's leftover containers: wedged")

    with pytest.raises(PruneFailed, match="wedged"):
        run_loop(tmp_path, failing)
    assert calls == ["prune"], "the start's prune only: the engine is known unusable"


def test_the_run_loop_logs_a_failed_end_prune_and_ends_normally(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    calls = []

    def fails_at_the_end() -> None:
        calls.append("prune")
        if len(calls) == 2:
            raise PruneFailed("the engine went away")

    with caplog.at_level(logging.WARNING, logger="arena.tables"):
        schedule = run_loop(tmp_path, fails_at_the_end)
    assert calls == ["prune", "prune"] and schedule.asked == 1
    assert "could not be removed at its end: the engine went away" in caplog.text


def test_a_tournament_on_an_engine_that_cannot_list_is_refused_in_one_line(tmp_path: Path):
    """The real command: its docker entries resolve, then its start prune meets the engine's error."""
    image = "sha256:" + "ab" * 32
    (tmp_path / "t.toml").write_text(
        '[tournament]\nname = "t"\nseed = "s"\noutput = "out"\n\n'
        '[[entry]]\nname = "a"\nbot = "docker:arena-test/a:1"\n\n[[entry]]\nname = "b"\nbot = "docker:arena-test/b:1"\n'
    )
    socket = tmp_path / "engine.sock"
    routes = [
        ("GET", r"/images/.+/json", (200, {"Id": image, "Config": {}, "RepoTags": ["arena-test/a:1"]})),
        ("GET", LIST, (500, {"message": "the engine is wedged"})),
    ]
    with fake_engine(socket, routes) as seen:
        done = subprocess.run(
            [sys.executable, "-m", "arena", "tournament", "run", "t.toml", "--no-show"], cwd=tmp_path,
            capture_output=True, text=True, timeout=180,
            env={**os.environ, "DOCKER_HOST": f"unix://{socket}", "COLUMNS": "200"},
        )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "could not list this run's leftover containers: the engine is wedged" in errors[0], (
        done.stderr
    )
    assert "Traceback" not in done.stderr
    assert not any(method == "POST" and path.startswith("/containers/create") for method, path in seen), (
        "nothing started on an engine that could not be cleaned"
    )
