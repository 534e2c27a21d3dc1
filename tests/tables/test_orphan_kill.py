"""A dead table's bots are killed by pid only while the pid is still theirs (not a process that reused it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from arena.sandbox import procfs
from arena.tables.processes import _kill_groups


def sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)


def gone(process: subprocess.Popen[bytes]) -> bool:
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_a_bot_whose_pid_is_still_its_own_is_killed_with_its_group():
    bot = sleeper()
    try:
        _kill_groups(((bot.pid, procfs.start_time(bot.pid)),))
        assert gone(bot) and bot.returncode == -9
    finally:
        bot.kill()


def test_a_pid_that_now_names_another_process_is_left_alone():
    """The finding: a dead table's reported pids were killed later, when they may have been reused."""
    other = sleeper()  # stands for someone else's process that got a dead bot's pid
    try:
        reported = ((other.pid, procfs.start_time(other.pid) - 1),)  # the bot that had this pid started before
        _kill_groups(reported)
        time.sleep(0.2)
        assert other.poll() is None, "a process that reused a dead bot's pid was killed"
        assert os.getpgid(other.pid) == other.pid
    finally:
        other.kill()
        other.wait()
