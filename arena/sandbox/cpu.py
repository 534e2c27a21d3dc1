"""A local bot's CPU clock: the CPU time of its process and of every process of its family.

The CPU move clock (docs/time-control.md) charges a decision the seat's CPU
time, read when the request is sent, polled while it is open (every ~20 ms)
and read again when the answer arrives.  A container's clock is its cgroup's
``usage_usec`` (:meth:`arena.sandbox.docker.DockerProcess.cpu_seconds`); a
local process has no cgroup of its own, so :class:`ProcessTreeCpu` adds up,
from ``/proc``, the same family the kill path kills
(:func:`arena.sandbox.procfs.family`):

- the bot's own CPU (all its threads, the kernel's per-process CPU clock:
  nanoseconds, about 2 µs a read) and what its children used that it has
  waited for (``cutime + cstime``);
- each descendant's ``utime + stime + cutime + cstime``, a zombie's too (an
  ended child not yet waited for keeps its figures until its parent waits,
  which moves them into the parent's ``cutime``).  The bot is a child
  subreaper, so an orphan stays in its tree and is waited for by a process
  of the tree.  Descendants are read parents first: a wait between two reads
  can only leave a child out of one reading, never count it twice;
- each process of the family outside the tree (its group, session or mark:
  only where the bot could not be made a subreaper): its own ``utime +
  stime``, kept when it ends (its parent is not in the family, so nothing
  else will count it).

The family is looked up by a scan of ``/proc`` (a few ms, with a read of the
environment of each process newer than the bot for its mark), so the scan
runs at most every :data:`RESCAN_S`; between scans only the known processes
are read (about 20 µs each).  A process started and ended between two scans
is still counted once its parent waits for it.  The reading never goes
backwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from arena.sandbox import procfs

#: Seconds between two scans of /proc for the bot's family.
RESCAN_S = 0.5


class ProcessTreeCpu:
    """The CPU seconds a local bot's family has used so far (see the module docstring)."""

    def __init__(
        self, pid: int, started: int, mark: str = "", *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """``started``: the bot's start time in clock ticks (``/proc/PID/stat`` field 22);
        ``mark``: the value of its :data:`~arena.sandbox.procfs.MARK_ENV` ("": none)."""
        self.pid = pid
        self.started = started
        self.mark = mark
        self._clock = clock
        self._cpu_clock = (~pid << 3) | 2  # the kernel's CPUCLOCK_SCHED clock id of that process
        self._tree: dict[int, int] = {}  # pid -> start time, parents first
        self._outside: dict[int, tuple[int, float]] = {}  # pid -> (start time, its CPU at the last read)
        self._departed = 0.0  # what ended processes outside the tree used
        self._rescan_at = 0.0
        self._last: float | None = None

    @property
    def last(self) -> float | None:
        """The latest reading (None before the first): what a process that has ended used."""
        return self._last

    def read(self) -> float | None:
        """CPU seconds so far (never less than the previous reading); None if never readable."""
        now = self._clock()
        if now >= self._rescan_at:
            self._rescan()
            self._rescan_at = now + RESCAN_S
        try:
            own = time.clock_gettime(self._cpu_clock)
        except OSError:
            return self._last  # the bot is gone: what it had used
        root = procfs.stat(self.pid)
        total = own + (root.waited_s if root is not None else 0.0)
        for pid, start in list(self._tree.items()):  # parents first (see the module docstring)
            st = procfs.stat(pid)
            if st is None or st.start != start:
                del self._tree[pid]  # waited for: in its parent's cutime now (a reused pid is another process)
                continue
            total += st.cpu_s + st.waited_s
        for pid, (start, cpu) in list(self._outside.items()):
            st = procfs.stat(pid)
            if st is None or st.start != start:
                del self._outside[pid]
                self._departed += cpu  # nobody of the family will wait for it: keep what it used
                continue
            self._outside[pid] = (start, st.cpu_s)
            total += st.cpu_s
        total += self._departed
        if self._last is None or total > self._last:
            self._last = total
        return self._last

    def _rescan(self) -> None:
        family = procfs.family(self.pid, self.started, self.mark)
        self._tree = {pid: st.start for pid, st in family.tree.items()}
        old, self._outside = self._outside, {}
        for pid, st in family.outside.items():
            prev = old.pop(pid, None)
            if prev is not None and prev[0] != st.start:
                self._departed += prev[1]  # ended, and its pid is another member's now
            self._outside[pid] = (st.start, st.cpu_s)
        self._departed += sum(cpu for _start, cpu in old.values())  # ended since the last read


__all__ = ["RESCAN_S", "ProcessTreeCpu"]
