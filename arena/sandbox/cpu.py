"""A local bot's CPU clock: the CPU time of its process and every process it started.

The CPU move clock (docs/time-control.md) charges a decision the seat's CPU
time, read when the request is sent, polled while it is open (every ~20 ms)
and read again when the answer arrives.  A container's clock is its cgroup's
``usage_usec`` (:meth:`arena.sandbox.docker.DockerProcess.cpu_seconds`); a
local process has no cgroup of its own, so :class:`ProcessTreeCpu` adds up,
from ``/proc``:

- the bot's own CPU (all its threads, the kernel's per-process CPU clock:
  nanoseconds, about 2 µs a read);
- what its children used that it has waited for (``cutime + cstime``);
- each live descendant's CPU and what *it* has waited for.

Descendants are found by a scan of ``/proc`` (a few ms), so that scan runs at
most every :data:`RESCAN_S`; between scans only the known processes are read
(about 20 µs each).  A descendant started and gone between two scans is still
counted once its parent waits for it; one that leaves the tree (double fork,
reparented to init) and is not in the bot's session is missed.  The reading
never goes backwards (a descendant that ends unwaited for takes its figure
with it; the last total is kept).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

#: Seconds between two scans of /proc for the bot's descendants.
RESCAN_S = 0.5
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

_Stat = tuple[int, int, int, float, float]  # (ppid, session, start time, own CPU s, waited-for children's CPU s)


def _stat(pid: int) -> _Stat | None:
    """``pid``'s parent, session, start time (ticks) and CPU figures (seconds); None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()  # the command name may hold spaces and parentheses
    try:
        if fields[0] == "Z":
            return None  # a zombie's CPU is its parent's once waited for; not yet: nothing to count twice
        own = (int(fields[11]) + int(fields[12])) / _TICK
        waited = (int(fields[13]) + int(fields[14])) / _TICK
        return int(fields[1]), int(fields[3]), int(fields[19]), own, waited
    except (IndexError, ValueError):
        return None


def _descendants(root: int, started: int) -> dict[int, int]:
    """``{pid: start time}`` of the live processes under ``root`` or in its session (not ``root``)."""
    table: dict[int, _Stat] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    for name in names:
        if name.isdigit() and (stat := _stat(int(name))) is not None:
            table[int(name)] = stat
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = {pid for pid, (_, sid, start, *_r) in table.items() if sid == root and start >= started}
    todo = [root, *found]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    found.discard(root)
    found.discard(os.getpid())  # never the referee itself
    return {pid: table[pid][2] for pid in found if table[pid][2] >= started}


class ProcessTreeCpu:
    """The CPU seconds a local bot's process tree has used so far (see the module docstring)."""

    def __init__(self, pid: int, started: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        """``started``: the bot's start time in clock ticks (``/proc/PID/stat`` field 22)."""
        self.pid = pid
        self.started = started
        self._clock = clock
        self._cpu_clock = (~pid << 3) | 2  # the kernel's CPUCLOCK_SCHED clock id of that process
        self._known: dict[int, int] = {}
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
            self._known = _descendants(self.pid, self.started)
            self._rescan_at = now + RESCAN_S
        try:
            own = time.clock_gettime(self._cpu_clock)
        except OSError:
            return self._last  # the bot is gone: what it had used
        root = _stat(self.pid)
        total = own + (root[4] if root is not None else 0.0)
        for pid, start in list(self._known.items()):
            stat = _stat(pid)
            if stat is None or stat[2] != start:
                del self._known[pid]  # gone (a reused pid is another process)
                continue
            total += stat[3] + stat[4]
        if self._last is None or total > self._last:
            self._last = total
        return self._last


__all__ = ["RESCAN_S", "ProcessTreeCpu"]
