"""A local bot's CPU clock counts the processes it started (issue 23 item 9, the CPU move clock).

Before, a local seat's CPU was its own process only: a bot that did its
thinking in a child process was charged nothing under a CPU clock.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from arena.sandbox.local import LocalProcess

#: A parent that starts a child burning 0.4 s of CPU and sleeps (it is killed); with ``wait``
#: it first waits for the child to end (the child's CPU is then the parent's ``cutime``).
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass"])
if sys.argv[1] == "wait":
    child.wait()
print("done", flush=True)
time.sleep(60)
"""


async def _cpu_of(mode: str) -> tuple[float, float]:
    """(CPU before, CPU once the child has burnt) of a parent in ``mode`` (``live`` or ``wait``)."""
    proc = await LocalProcess.start([sys.executable, "-c", PARENT, mode], {})
    try:
        before = proc.cpu_seconds()
        assert before is not None
        deadline = time.monotonic() + 60
        after = before
        while time.monotonic() < deadline:  # bounded: the child's 0.4 s of CPU, on a shared machine
            await asyncio.sleep(0.1)
            after = proc.cpu_seconds() or after
            if after - before >= 0.35:
                break
        return before, after
    finally:
        await proc.stop(0.5)


def test_a_local_bots_cpu_counts_a_live_child() -> None:
    before, after = asyncio.run(_cpu_of("live"))
    assert after - before >= 0.35, (before, after)


def test_a_local_bots_cpu_counts_a_child_it_waited_for() -> None:
    before, after = asyncio.run(_cpu_of("wait"))
    assert after - before >= 0.35, (before, after)


#: A bot whose helper burns 1.0 s of CPU and ends without being waited for (a zombie), then,
#: once ``go`` exists, burns 1.0 s itself and writes ``done``.  (Review of issue 23 item 9:
#: the zombie's CPU was dropped from the total, and the drop became credit for the parent.)
ZOMBIE_PARENT = """
import os, sys, time
from pathlib import Path
here = Path(sys.argv[1])
def burn(s):
    end = time.process_time() + s
    while time.process_time() < end:
        pass
if os.fork() == 0:
    burn(1.0)
    (here / "child-done").write_text("")
    os._exit(0)
while not (here / "go").exists():
    time.sleep(0.01)
burn(1.0)
(here / "done").write_text("")
time.sleep(60)
"""

#: A bot that leaves its session and tree (setsid, then a double fork): the grandchild burns
#: 0.6 s of CPU, writes ``done`` and sleeps.  The kill path finds it by its mark; the CPU
#: clock must count it as well.
ESCAPER = """
import os, sys, time
from pathlib import Path
here = Path(sys.argv[1])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        end = time.process_time() + 0.6
        while time.process_time() < end:
            pass
        (here / "done").write_text("")
        time.sleep(60)
    os._exit(0)
os.wait()
time.sleep(60)
"""


async def _wait_for(path: Path, proc: LocalProcess, poll: float = 0.02) -> None:
    """Poll the meter (as the referee's tick does) until ``path`` exists; bounded for a loaded machine."""
    deadline = time.monotonic() + 90
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        proc.cpu_seconds()
        await asyncio.sleep(poll)


def test_a_zombie_childs_cpu_is_no_credit_for_its_parent(tmp_path: Path) -> None:
    async def run() -> tuple[float, float]:
        proc = await LocalProcess.start([sys.executable, "-c", ZOMBIE_PARENT, str(tmp_path)], {})
        try:
            await _wait_for(tmp_path / "child-done", proc)
            for _ in range(20):  # the child is a zombie now: its parent never waits for it
                await asyncio.sleep(0.05)
                proc.cpu_seconds()
            start = proc.cpu_seconds()
            assert start is not None
            (tmp_path / "go").write_text("")
            await _wait_for(tmp_path / "done", proc)
            end = proc.cpu_seconds()
            assert end is not None
            return start, end
        finally:
            await proc.stop(0.5)

    start, end = asyncio.run(run())
    # The parent burned 1.0 s between the two readings: all of it is charged.
    assert end - start >= 0.9, (start, end)


def test_a_process_that_left_the_session_and_tree_is_charged(tmp_path: Path) -> None:
    async def run() -> tuple[float, float]:
        proc = await LocalProcess.start([sys.executable, "-c", ESCAPER, str(tmp_path)], {})
        try:
            before = proc.cpu_seconds()
            assert before is not None
            await _wait_for(tmp_path / "done", proc, poll=0.1)
            deadline = time.monotonic() + 5  # the family is looked up every few tenths of a second
            after = proc.cpu_seconds() or before
            while after - before < 0.55 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
                after = proc.cpu_seconds() or after
            return before, after
        finally:
            await proc.stop(0.5)

    before, after = asyncio.run(run())
    assert after - before >= 0.55, (before, after)
