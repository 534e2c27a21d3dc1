"""Two partners' covert channel through the host: a sender and a receiver in two seat containers.

The sender (``COVERT_ROLE=send``) sends ``COVERT_BITS`` one per slot of
``COVERT_SLOT`` seconds from ``COVERT_START`` (a wall-clock time both share):
for a 1 it keeps ``COVERT_SPINNERS`` processes busy for the slot, for a 0 it
sleeps.  The receiver (``COVERT_ROLE=recv``) watches, in each slot, what a
bot could read about the host: the host-wide counter files (``/proc/loadavg``,
``/proc/stat``, ``/proc/meminfo``, ``/proc/uptime``), the ``sysinfo`` system
call (load averages, process count) and its own speed (loop iterations per
second: the CPU-timing channel).  It prints one JSON line per slot.

The kernel-counter pair (``COVERT_ROLE=send-kernel`` / ``recv-kernel``, the
red team's faster channel of round 3) uses short slots: for a 1 the sender
holds ``COVERT_AIO`` aio slots (``io_setup``) and ``COVERT_PTYS`` open
pseudo-terminals (``/dev/ptmx``) for the slot; the receiver samples the
host-wide counters ``/proc/sys/fs/aio-nr`` and ``/proc/sys/kernel/pty/nr``
in each slot and prints their mean and the number of distinct values.  Both
print what the kernel answered first (``errno`` of ``io_setup``, of opening
``/dev/ptmx``, what the counter files read as).
"""

from __future__ import annotations

import ctypes
import json
import os
import time

ROLE = os.environ.get("COVERT_ROLE", "")
START = float(os.environ.get("COVERT_START", "0"))
SLOT = float(os.environ.get("COVERT_SLOT", "0.5"))
BITS = os.environ.get("COVERT_BITS", "")
SPINNERS = int(os.environ.get("COVERT_SPINNERS", "4"))
FILES = ("/proc/loadavg", "/proc/stat", "/proc/meminfo", "/proc/uptime")
AIO_NR = "/proc/sys/fs/aio-nr"
PTY_NR = "/proc/sys/kernel/pty/nr"
AIO = int(os.environ.get("COVERT_AIO", "4096"))
PTYS = int(os.environ.get("COVERT_PTYS", "8"))
SYS_IO_SETUP, SYS_IO_DESTROY = 206, 207  # x86-64


class SysInfo(ctypes.Structure):
    _fields_ = [
        ("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3),
        ("totalram", ctypes.c_ulong), ("freeram", ctypes.c_ulong), ("sharedram", ctypes.c_ulong),
        ("bufferram", ctypes.c_ulong), ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong),
        ("procs", ctypes.c_ushort), ("pad", ctypes.c_ushort), ("totalhigh", ctypes.c_ulong),
        ("freehigh", ctypes.c_ulong), ("mem_unit", ctypes.c_uint), ("_f", ctypes.c_char * 8),
    ]  # fmt: skip


LIBC = ctypes.CDLL(None, use_errno=True)


def sysinfo() -> tuple[int, int]:
    info = SysInfo()
    if LIBC.sysinfo(ctypes.byref(info)) != 0:
        return -1, -1
    return int(info.loads[0]), int(info.procs)


def read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        return f"{type(exc).__name__}:{exc.errno}"


def sleep_until(t: float) -> None:
    while (left := t - time.time()) > 0:
        time.sleep(min(left, 0.05))


def send() -> None:
    for i, bit in enumerate(BITS):
        sleep_until(START + i * SLOT)
        end = START + (i + 1) * SLOT
        if bit != "1":
            continue
        children = []
        for _ in range(SPINNERS):
            pid = os.fork()
            if pid == 0:
                while time.time() < end:
                    pass
                os._exit(0)
            children.append(pid)
        for pid in children:
            os.waitpid(pid, 0)


def receive() -> None:
    for i in range(len(BITS)):
        begin = START + i * SLOT + 0.2 * SLOT  # skip the edges: the sender starts and stops
        end = START + (i + 1) * SLOT - 0.1 * SLOT
        sleep_until(begin)
        texts: dict[str, set[str]] = {path: set() for path in FILES}
        running, loads, procs = [], [], []
        iterations = 0
        started = time.perf_counter()
        while True:  # at least one sample, even when this slot's window has passed (a busy machine)
            for path in FILES:
                texts[path].add(read(path))
            fields = read("/proc/loadavg").split()
            if len(fields) >= 4 and "/" in fields[3]:
                running.append(int(fields[3].split("/")[0]))
            load, nprocs = sysinfo()
            loads.append(load)
            procs.append(nprocs)
            for _ in range(20000):  # the timing channel: how much work this slot allows
                iterations += 1
            if time.time() >= end:
                break
        seconds = time.perf_counter() - started
        print(json.dumps({
            "slot": i,
            "distinct": {path: sorted(found)[:3] for path, found in texts.items()},
            "distinct_count": {path: len(found) for path, found in texts.items()},
            "running": sum(running) / len(running) if running else None,
            "sysinfo_load": sum(loads) / len(loads) if loads else None,
            "sysinfo_procs": sum(procs) / len(procs) if procs else None,
            "speed": iterations / seconds if seconds > 0 else 0.0,
        }), flush=True)  # fmt: skip


def counter(path: str) -> int | None:
    text = read(path).strip()
    return int(text) if text.isdigit() else None


def send_kernel() -> None:
    """A 1: hold AIO aio slots and PTYS pseudo-terminals for the slot; a 0: hold none."""
    ctx = ctypes.c_ulong(0)
    aio_errno = 0 if LIBC.syscall(SYS_IO_SETUP, AIO, ctypes.byref(ctx)) == 0 else ctypes.get_errno()
    if aio_errno == 0:
        LIBC.syscall(SYS_IO_DESTROY, ctx)
    try:
        os.close(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
        pty_errno = 0
    except OSError as exc:
        pty_errno = exc.errno or -1
    print(json.dumps({"io_setup_errno": aio_errno, "ptmx_errno": pty_errno}), flush=True)
    for i, bit in enumerate(BITS):
        sleep_until(START + i * SLOT)
        if bit != "1":
            continue
        ctx = ctypes.c_ulong(0)
        held = LIBC.syscall(SYS_IO_SETUP, AIO, ctypes.byref(ctx)) == 0
        ptys = []
        for _ in range(PTYS):
            try:
                ptys.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
            except OSError:
                break
        sleep_until(START + (i + 1) * SLOT - 0.05 * SLOT)
        for fd in ptys:
            os.close(fd)
        if held:
            LIBC.syscall(SYS_IO_DESTROY, ctx)


def receive_kernel() -> None:
    """Per slot: the mean of aio-nr and pty/nr over the slot's middle, and how many values they took."""
    print(json.dumps({"aio_nr": read(AIO_NR).strip()[:40], "pty_nr": read(PTY_NR).strip()[:40], "sysinfo": sysinfo()}), flush=True)
    for i in range(len(BITS)):
        begin = START + i * SLOT + 0.2 * SLOT
        end = START + (i + 1) * SLOT - 0.1 * SLOT
        sleep_until(begin)
        aio, pty = [], []
        while True:
            aio.append(counter(AIO_NR))
            pty.append(counter(PTY_NR))
            if time.time() >= end:
                break
        print(json.dumps({
            "slot": i,
            "aio": sum(v or 0 for v in aio) / len(aio), "aio_values": len(set(aio)),
            "pty": sum(v or 0 for v in pty) / len(pty), "pty_values": len(set(pty)),
        }), flush=True)  # fmt: skip


if __name__ == "__main__":
    if ROLE == "send":
        send()
    elif ROLE == "recv":
        receive()
    elif ROLE == "send-kernel":
        send_kernel()
    elif ROLE == "recv-kernel":
        receive_kernel()
