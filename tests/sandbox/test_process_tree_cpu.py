"""A local bot's CPU clock counts the processes it started (issue 23 item 9, the CPU move clock).

Before, a local seat's CPU was its own process only: a bot that did its
thinking in a child process was charged nothing under a CPU clock.
"""

from __future__ import annotations

import asyncio
import sys
import time

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
