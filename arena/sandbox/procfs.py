"""A local bot's processes, read from ``/proc``: one place for the kill path and the CPU clock.

:class:`~arena.sandbox.local.LocalProcess` kills, and
:class:`~arena.sandbox.cpu.ProcessTreeCpu` charges, the same **family** of a
bot: every process started at or after the bot that is

- in the bot's process tree (its descendants: the bot is started as a child
  subreaper, so an orphan of its tree is re-parented to the bot and stays in
  it while the bot lives),
- in its process group or session (the bot leads both), or
- carries the bot's mark in its environment (:data:`MARK_ENV`: a ``setsid``
  and double fork keeps it, unless the process clears its environment before
  an exec).

The tree part is listed parent first, so that a reader summing the CPU of
each process can miss a child its parent waited for between two reads (an
undercount, made up at the next reading) but never count it twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os

#: The environment variable that marks every process a local bot started (inherited).
MARK_ENV = "ARENA_PROCESS_MARK"
#: Clock ticks per second: the unit of the CPU figures and start times in /proc/PID/stat.
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclasses.dataclass(frozen=True, slots=True)
class Stat:
    """What ``/proc/PID/stat`` says of a process that the arena uses."""

    state: str
    """``R``, ``S``, ... ``Z`` for a zombie (ended, not yet waited for: its figures still stand)."""
    ppid: int
    pgid: int
    sid: int
    start: int
    """Start time in clock ticks since boot: a reused pid is another process."""
    cpu_s: float
    """Its own CPU (``utime + stime``), seconds."""
    waited_s: float
    """The CPU of the children it has waited for, and theirs (``cutime + cstime``), seconds."""

    @property
    def zombie(self) -> bool:
        """Ended but not yet waited for by its parent."""
        return self.state == "Z"


def stat(pid: int) -> Stat | None:
    """``pid``'s :class:`Stat`; None if it is gone (or there is no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()  # the command name may hold spaces and parentheses
    try:
        return Stat(
            fields[0], int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]),
            (int(fields[11]) + int(fields[12])) / TICK, (int(fields[13]) + int(fields[14])) / TICK,
        )  # fmt: skip
    except (IndexError, ValueError):
        return None


def start_time(pid: int) -> int:
    """``pid``'s start time in clock ticks (0 if it is gone)."""
    st = stat(pid)
    return st.start if st is not None else 0


def processes() -> dict[int, Stat]:
    """Every process this one can see, by pid."""
    table: dict[int, Stat] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit() and (st := stat(int(name))) is not None:
                table[int(name)] = st
    return table


def marked(pid: int, mark: str) -> bool:
    """Whether ``pid``'s environment carries ``MARK_ENV=mark``."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f"{MARK_ENV}={mark}".encode() in f.read().split(b"\0")
    except OSError:
        return False


@dataclasses.dataclass(frozen=True)
class Family:
    """A bot's family (see the module docstring), without the bot itself and this process."""

    tree: dict[int, Stat]
    """The bot's descendants, parents before their children (zombies included)."""
    outside: dict[int, Stat]
    """Group, session and marked processes outside the bot's tree, and their descendants."""

    def live(self) -> set[tuple[int, int]]:
        """``(pid, start time)`` of every member that has not ended (what a kill is for)."""
        return {(pid, st.start) for part in (self.tree, self.outside) for pid, st in part.items() if not st.zombie}


def family(root: int, started: int, mark: str) -> Family:
    """The family of the bot ``root`` started at ``started`` (clock ticks) with ``mark`` ("": none)."""
    table = processes()
    me = os.getpid()
    children: dict[int, list[int]] = {}
    for pid, st in table.items():
        children.setdefault(st.ppid, []).append(pid)

    def under(tops: list[int], seen: set[int]) -> dict[int, Stat]:
        """``tops`` and their descendants not in ``seen``, breadth first (parents first)."""
        out: dict[int, Stat] = {}
        queue = [p for p in tops if p not in seen]
        seen.update(queue)
        while queue:
            pid = queue.pop(0)
            out[pid] = table[pid]
            for child in children.get(pid, ()):
                if child not in seen and child != me:
                    seen.add(child)
                    queue.append(child)
        return out

    seen = {root, me}
    tree = under(children.get(root, []), seen)
    seeds = [
        pid for pid, st in table.items()
        if pid not in seen and st.start >= started  # nothing older than the bot is its child
        and (st.pgid == root or st.sid == root or (mark and not st.zombie and marked(pid, mark)))
    ]  # fmt: skip
    return Family(tree, under(seeds, seen))


__all__ = ["MARK_ENV", "TICK", "Family", "Stat", "family", "marked", "processes", "start_time", "stat"]
