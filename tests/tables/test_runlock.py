"""One runner per directory (arena.tables.runlock): real processes take, refuse, die holding, and take over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from runlock_support import fingerprint, wait_for

from arena.errors import ArenaError
from arena.tables import runlock
from arena.tables.runlock import LOCK_NAME, DirectoryInUse, hold_directory

#: A holder: takes the lock, starts a child of each kind a runner starts (a plain process, a
#: forkserver child), says so, then waits to be killed.
HOLDER = """
import multiprocessing, subprocess, sys, time
from pathlib import Path
from arena.tables.runlock import hold_directory

lock = hold_directory(Path(sys.argv[1]), "the holder")
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
served = multiprocessing.get_context("forkserver").Process(target=time.sleep, args=(300,), daemon=False)
served.start()
print(child.pid, served.pid, flush=True)
time.sleep(300)
"""

TAKER = """
import sys
from pathlib import Path
from arena.tables.runlock import DirectoryInUse, hold_directory

try:
    lock = hold_directory(Path(sys.argv[1]), "the taker")
except DirectoryInUse as exc:
    print(exc)
    sys.exit(2)
print("taken")
"""


def start_holder(directory: Path) -> tuple[subprocess.Popen[str], list[int]]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(directory)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    children = [int(pid) for pid in holder.stdout.readline().split()]
    assert len(children) == 2, "the holder started its children"
    return holder, children


def take(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", TAKER, str(directory)], capture_output=True, text=True, timeout=120)


def test_a_second_process_is_refused_naming_the_holder_and_changes_nothing(tmp_path: Path):
    directory = tmp_path / "run"
    directory.mkdir()
    (directory / "results.sqlite").write_bytes(b"stored")
    (directory / "tmp").mkdir()
    (directory / "tmp" / "upload-1").write_bytes(b"in flight")
    holder, children = start_holder(directory)
    try:
        before = fingerprint(directory)
        refused = take(directory)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        line = refused.stdout.strip()
        assert "\n" not in line and f"is in use by the holder (pid {holder.pid}, since " in line, line
        assert fingerprint(directory) == before, "the refused runner touched nothing"
        assert json.loads((directory / LOCK_NAME).read_text())["pid"] == holder.pid
    finally:
        holder.kill()
        holder.wait(30)
        for pid in children:
            os.kill(pid, 9)


def test_a_holder_killed_with_its_children_alive_is_taken_over(tmp_path: Path):
    """kill -9 leaves the lock file with a dead pid: the kernel's lock went with the process, children or not."""
    directory = tmp_path / "run"
    holder, children = start_holder(directory)
    try:
        holder.kill()
        holder.wait(30)
        assert json.loads((directory / LOCK_NAME).read_text())["pid"] == holder.pid, "a stale lock file"
        for pid in children:
            os.kill(pid, 0)  # still alive: they must not hold their parent's lock
        taken = take(directory)
        assert taken.returncode == 0 and taken.stdout.strip() == "taken", taken.stdout + taken.stderr
        assert not (directory / LOCK_NAME).exists(), "the taker let go at its exit and removed the file"
    finally:
        for pid in children:
            os.kill(pid, 9)


def test_the_thread_that_holds_may_take_again_another_thread_may_not(tmp_path: Path):
    lock = hold_directory(tmp_path / "run", "the command")
    again = hold_directory(tmp_path / "run", "its runner")
    again.release()
    assert (tmp_path / "run" / LOCK_NAME).exists(), "the first hold still holds"
    refused: list[BaseException] = []

    def other() -> None:
        try:
            hold_directory(tmp_path / "run", "another thread").release()
        except DirectoryInUse as exc:
            refused.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert refused and f"pid {os.getpid()}" in str(refused[0])
    lock.release()
    assert not (tmp_path / "run" / LOCK_NAME).exists()
    with hold_directory(tmp_path / "run", "next"):
        assert (tmp_path / "run" / LOCK_NAME).exists()
    assert not (tmp_path / "run" / LOCK_NAME).exists()


def test_a_lock_file_removed_while_it_was_being_opened_is_not_taken(tmp_path: Path):
    """The holder removes its file as it lets go: a runner that opened the old one must lock the new one."""
    path = tmp_path / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    path.unlink()
    path.write_text("")  # the next runner's file
    assert runlock._try_lock(fd, path) == runlock._GONE
    fd2 = os.open(path, os.O_RDWR)
    try:
        assert runlock._try_lock(fd2, path) == runlock._LOCKED
    finally:
        os.close(fd2)


def test_a_missing_directory_is_one_line_when_it_must_exist(tmp_path: Path):
    with pytest.raises(ArenaError, match="no such directory"):
        hold_directory(tmp_path / "nowhere", "arena ladder serve", create=False)
    assert not (tmp_path / "nowhere").exists()


def test_a_refusal_waits_for_the_holders_pid_then_says_it_is_unknown(tmp_path: Path, monkeypatch):
    """A holder that took the lock but has not written its pid yet (bounded wait, then an honest message)."""
    monkeypatch.setattr(runlock, "HOLDER_WAIT_S", 0.2)
    path = tmp_path / LOCK_NAME
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(300)\n"
    )], stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(DirectoryInUse, match=r"in use by another runner \(pid unknown\)"):
            hold_directory(tmp_path, "second")
        wait_for(lambda: path.exists(), "the lock file")
    finally:
        holder.kill()
        holder.wait(30)
