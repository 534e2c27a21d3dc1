"""The engine guard (tests/engine_guard.py): a wedged engine is found, restarted, and its test run again.

A real pytest in a subprocess, under ``CI``, on a small test that fails
until the engine has been "restarted".  The engine it probes is a Unix
socket that takes connections and never answers (what a wedged engine's
``start`` looked like in CI); the restart is a command that mends the
test's world, so the suite's own engine is never touched.  The engine
counts as the one ``scripts/docker-setup.sh`` started through a pid file
naming a live process called ``dockerd``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

TESTS = '''
from pathlib import Path

MENDED = Path(__file__).with_name("mended")


def test_needs_the_engine():
    assert MENDED.exists(), "the engine never started its container"


def test_fine():
    pass
'''


@pytest.fixture
def silent_engine(tmp_path: Path) -> Iterator[Path]:
    """A Unix socket that accepts connections and never answers a request."""
    path = tmp_path / "silent.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


@pytest.fixture
def fake_dockerd(tmp_path: Path) -> Iterator[Path]:
    """A pid file naming a live process whose name is ``dockerd`` (a copy of sleep)."""
    binary = tmp_path / "dockerd"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", binary)
    process = subprocess.Popen([str(binary), "300"])
    pid_file = tmp_path / "dockerd.pid"
    pid_file.write_text(f"{process.pid}\n")
    try:
        yield pid_file
    finally:
        process.kill()
        process.wait(10)


def _pytest(folder: Path, engine: Path, pid_file: Path) -> str:
    (folder / "conftest.py").write_text('pytest_plugins = ["run_report", "engine_guard"]\n')
    (folder / "test_small.py").write_text(TESTS)
    mend = f"{sys.executable} -c \"open('{folder / 'mended'}', 'w'); print('docker ready: mended')\""
    env = {
        **os.environ,
        "CI": "true",
        "PYTHONPATH": str(HERE),
        "DOCKER_HOST": f"unix://{engine}",
        "ARENA_TEST_ENGINE_PROBE_S": "2",
        "ARENA_TEST_ENGINE_PID_FILE": str(pid_file),
        "ARENA_TEST_ENGINE_RESTART": mend,
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", str(folder / "test_small.py")],
        cwd=folder, capture_output=True, text=True, timeout=240, env=env, check=False,
    )  # fmt: skip
    return done.stdout


def test_a_wedged_engine_is_restarted_and_the_test_runs_again(tmp_path: Path, silent_engine: Path, fake_dockerd: Path):
    (tmp_path / "run").mkdir()
    out = _pytest(tmp_path / "run", silent_engine, fake_dockerd)
    assert "!! test_small.py::test_needs_the_engine failed in call and the Docker engine no longer starts containers" in out, out
    assert "the engine never started its container" in out, "the first attempt's reason is said"
    assert "engine restarted (goroutines kept in /var/log/arena): docker ready: mended; the test runs again" in out, out
    assert "== engine guard: ran again after the restart: test_small.py::test_needs_the_engine: passed" in out, out
    assert "2 passed" in out.splitlines()[-1], out


def test_an_engine_this_run_did_not_start_is_left_alone(tmp_path: Path, silent_engine: Path):
    (tmp_path / "run").mkdir()
    out = _pytest(tmp_path / "run", silent_engine, tmp_path / "no-such.pid")
    assert "no longer starts containers" in out, out
    assert "left as it is" in out and "engine restarted" not in out, out
    assert "== engine guard: engine wedged after test_small.py::test_needs_the_engine, not restarted" in out, out
    assert not (tmp_path / "run" / "mended").exists()
    assert "1 failed, 1 passed" in out.splitlines()[-1], out


def test_the_probe_of_an_engine_that_never_answers_ends_in_time(silent_engine: Path, monkeypatch):
    import engine_guard

    monkeypatch.setenv("DOCKER_HOST", f"unix://{silent_engine}")
    started = time.monotonic()
    reason = engine_guard.probe_engine(timeout=2)
    assert reason is not None and ("timed out" in reason.lower() or "within" in reason), reason
    assert time.monotonic() - started < 30, "bounded: the probe never waits with a wedged engine"


def test_a_healthy_or_absent_engine_is_not_called_wedged(tmp_path: Path, monkeypatch):
    """The suite's own engine (under CI a real one) starts the probe's container; no engine is no wedge."""
    import engine_guard

    assert engine_guard.probe_engine() is None
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'nothing-listens.sock'}")
    assert engine_guard.probe_engine(timeout=5) is None


def test_after_a_restart_the_first_attempts_containers_are_removed():
    """The run's containers a wedged engine could not remove go before the rerun (real engine)."""
    import engine_guard
    from docker_support import BASE_IMAGE, TEST_LABEL, TEST_RUN, engine_or_skip

    client = engine_or_skip("the guard's clean-up")
    try:
        left = client.api.create_container(BASE_IMAGE, ["true"], labels={TEST_LABEL: TEST_RUN, "arena.guard-test": "1"})
        probe = client.api.create_container(BASE_IMAGE, ["true"], labels={engine_guard.PROBE_LABEL: str(os.getpid())})
        name = client.api.inspect_container(left["Id"])["Name"].lstrip("/")
        removed = engine_guard.remove_first_attempts_containers()
        assert [d for d in removed if d.split(" ")[0] == name], removed  # each named first, then its image and labels
        assert not client.api.containers(all=True, filters={"label": "arena.guard-test=1", "id": left["Id"]})
        assert not client.api.containers(all=True, filters={"id": probe["Id"]}), "the wedged probe's container went too"
    finally:
        client.close()


def test_the_run_report_says_when_the_guard_never_fired(monkeypatch):
    import engine_guard

    monkeypatch.setattr(engine_guard, "LOG", engine_guard.GuardLog())
    monkeypatch.setenv("CI", "true")
    assert engine_guard.summary_lines() == ["never fired (no failure found the engine unable to start a container)"]
    engine_guard.LOG.restarts.append("at 12:00 after test_x")
    assert engine_guard.summary_lines() == ["engine restarted at 12:00 after test_x"]
    monkeypatch.delenv("CI")
    engine_guard.LOG.restarts.clear()
    assert engine_guard.summary_lines() == [], "outside CI the guard does nothing and says nothing"


WORKER_TEST_A = '''
import time
from pathlib import Path

HERE = Path(__file__).parent


def test_needs_the_engine():
    deadline = time.monotonic() + 300
    while not (HERE / "b-started").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # the other worker's test is under way before this one fails
    assert (HERE / "mended").exists(), "the engine never started its container"
'''

WORKER_TEST_B = '''
import time
from pathlib import Path

HERE = Path(__file__).parent


def test_under_way_during_the_restart():
    if (HERE / "mended").exists():
        return  # begun after the restart: nothing broke it
    (HERE / "b-started").touch()
    deadline = time.monotonic() + 300
    while not (HERE / "mended").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    raise AssertionError("the engine was restarted under this test")
'''


def test_on_workers_one_restart_is_said_and_a_test_it_broke_elsewhere_runs_again(
    tmp_path: Path, silent_engine: Path, fake_dockerd: Path
):
    """``pytest -n 2``: a test on one worker finds the engine wedged; the restart breaks the other worker's test.

    The restart (the test's mend) takes the silent engine away, so the second
    test's probe finds no engine, not a wedged one: it runs again only because
    the run's record says the engine was restarted while it ran.
    """
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "conftest.py").write_text('pytest_plugins = ["run_report", "engine_guard"]\n')
    (folder / "test_a.py").write_text(WORKER_TEST_A)
    (folder / "test_b.py").write_text(WORKER_TEST_B)
    mend = (f"{sys.executable} -c \"import os; os.unlink('{silent_engine}'); open('{folder / 'mended'}', 'w'); "
            f"print('docker ready: mended')\"")  # fmt: skip
    env = {
        **os.environ, "CI": "true", "PYTHONPATH": str(HERE), "DOCKER_HOST": f"unix://{silent_engine}",
        "ARENA_TEST_ENGINE_PROBE_S": "2", "ARENA_TEST_ENGINE_PID_FILE": str(fake_dockerd),
        "ARENA_TEST_ENGINE_RESTART": mend,
    }  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "test_a.py", "test_b.py"],
        cwd=folder, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    out = done.stdout
    assert out.count("!! test_a.py::test_needs_the_engine failed in call and the Docker engine no longer starts") == 1, out
    assert out.count("engine restarted (goroutines kept in /var/log/arena): docker ready: mended") == 1, out
    assert "the other workers' tests under way met the restart" in out, "a restart under other workers is said"
    said = "!! test_b.py::test_under_way_during_the_restart failed in call after"
    assert out.count(said) == 1, out
    line = out[out.index(said):].splitlines()[0]
    assert "the engine was restarted by gw" in line and "(after test_a.py::test_needs_the_engine) under it" in line
    assert "the engine was restarted under this test" in out, "the first attempt's reason is said"
    recap = out[out.index("== run report:"):]
    assert recap.count("== engine guard: engine restarted after test_a.py::test_needs_the_engine") == 1, recap
    assert "== engine guard: ran again after the restart: test_a.py::test_needs_the_engine: passed" in recap, recap
    assert "== engine guard: ran again after the restart: test_b.py::test_under_way_during_the_restart: passed" in recap
    assert "2 passed" in out.splitlines()[-1], out
