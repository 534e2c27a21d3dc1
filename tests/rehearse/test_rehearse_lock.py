"""One ``arena ladder rehearse`` per run directory: a second one is refused in one line naming the first's pid
(instead of meeting a directory the first is filling), and the lock goes with the first when it ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docker_support import engine_or_skip
from runlock_support import arena_process, end_own_processes, one_line, wait_for
from tournament_support import arena

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]


def holder_pid(lock: Path) -> int | None:
    try:
        return int(json.loads(lock.read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def test_a_second_rehearsal_in_the_same_directory_is_refused_naming_the_first(tmp_path: Path):
    engine_or_skip("the rehearsal").close()
    run = tmp_path / "run"
    lock = run / ".arena-run.lock"
    args = ["ladder", "rehearse", str(run), "--teams", "2", "--minutes", "0.3", "--no-faults", "--max-hands", "2",
            "--json"]  # fmt: skip
    first = arena_process(args, tmp_path)
    try:
        wait_for(lambda: holder_pid(lock) == first.pid, "the first rehearsal holds its directory")
        second = arena(tmp_path, *args)
        assert second.returncode == 2, second.stdout + second.stderr
        line = one_line(second.stderr)
        assert f"run is in use by arena ladder rehearse (pid {first.pid}, since " in line, line
        _, err = first.communicate(timeout=900)
        assert first.returncode in (0, 1), err  # (its audit's verdict is not this test's)
        assert not lock.exists(), "the lock goes with the rehearsal that held it"
        again = arena(tmp_path, *args)
        assert again.returncode == 2 and "is not empty" in one_line(again.stderr), again.stderr
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate(timeout=60)
        end_own_processes(str(run))
