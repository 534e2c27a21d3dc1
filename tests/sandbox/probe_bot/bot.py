"""A test bot whose behaviour the ARENA_PROBE environment variable selects.

Probes that only look at the sandbox print one JSON line and exit; the others
join the referee and misbehave at their first decision.
"""

from __future__ import annotations

import json
import os
import socket
import sys

from arena_sdk import Bot, run

PROBE = os.environ.get("ARENA_PROBE", "")


def report(**data: object) -> None:
    print(json.dumps(data), flush=True)


def probe_fs() -> None:
    results = {}
    for path in ("/bot/x", "/x", "/venv/x", "/tmp/ok"):
        try:
            with open(path, "w") as f:
                f.write("x")
            results[path] = "written"
        except OSError as exc:
            results[path] = type(exc).__name__ + ":" + str(exc.errno)
    report(probe="fs", results=results, uid=os.getuid())


def probe_write() -> None:
    """Write to each of ARENA_PROBE_PATHS (comma-separated): what an image's VOLUME path allows."""
    results = {}
    for path in filter(None, os.environ.get("ARENA_PROBE_PATHS", "").split(",")):
        try:
            with open(path, "wb") as f:
                f.write(b"x" * (1 << 20))
            results[path] = "written"
        except OSError as exc:
            results[path] = type(exc).__name__ + ":" + str(exc.errno)
    report(probe="write", results=results)


def probe_net() -> None:
    interfaces = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
    port = int(os.environ.get("ARENA_PROBE_PORT", "0"))
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        outcome = "connected"
    except OSError as exc:
        outcome = type(exc).__name__
    report(probe="net", interfaces=interfaces, connect=outcome)


def probe_fork() -> None:
    children = 0
    error = ""
    pids = []
    try:
        for _ in range(500):
            pid = os.fork()
            if pid == 0:
                import time

                time.sleep(30)
                os._exit(0)
            pids.append(pid)
            children += 1
    except OSError as exc:
        error = type(exc).__name__
    report(probe="fork", children=children, error=error)
    for pid in pids:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def probe_sockets() -> None:
    """What the seat sees of the referee's sockets: everything under /arena, then it plays."""
    seen = []
    for root, dirs, files in os.walk("/arena"):
        seen.extend(os.path.join(root, name) for name in sorted(dirs + files))
    report(probe="sockets", seen=sorted(seen), address=os.environ.get("ARENA_ADDRESS", ""))


#: x86-64 system call numbers the "kernel" probe tries (the arena's seccomp profile refuses them).
SYSCALLS = {
    "io_setup": 206, "io_destroy": 207, "io_getevents": 208, "io_submit": 209, "io_cancel": 210,
    "io_pgetevents": 333, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "sysinfo": 99, "mount": 165, "umount2": 166, "unshare": 272, "setns": 308, "bpf": 321,
    "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248, "process_vm_readv": 310,
}  # fmt: skip
#: Host files a seat must not read: the kernel's command line, the host's disks, and counters of the
#: whole host that partners could signal through.
HOST_FILES = (
    "/proc/cmdline", "/proc/partitions", "/proc/sys/fs/aio-nr", "/proc/sys/fs/aio-max-nr",
    "/proc/sys/kernel/pty/nr", "/proc/sys/fs/inode-state", "/proc/cgroups", "/proc/crypto",
)  # fmt: skip


def probe_kernel() -> None:
    """What a seat reaches of the kernel: refused system calls (errno), host files, capabilities, mounts."""
    import ctypes
    import glob
    import subprocess

    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(4096)
    errnos = {}
    for name, number in SYSCALLS.items():
        ctypes.set_errno(0)
        if name == "io_setup":
            ctx = ctypes.c_ulong(0)
            result = libc.syscall(number, 1, ctypes.byref(ctx))
        elif name in ("sysinfo", "io_uring_setup"):
            result = libc.syscall(number, *((buffer,) if name == "sysinfo" else (1, buffer)))
        elif name == "mount":
            result = libc.syscall(number, b"none", b"/tmp", b"tmpfs", 0, None)
        elif name == "unshare":
            result = libc.syscall(number, 0x10000000)  # CLONE_NEWUSER
        else:
            result = libc.syscall(number, 0, 0, 0, 0, 0)
        errnos[name] = 0 if result >= 0 else ctypes.get_errno()
        if name in ("io_uring_setup",) and result >= 0:
            os.close(result)
    files = {}
    for path in HOST_FILES:
        try:
            with open(path, "rb") as f:
                files[path] = f.read(200).decode("latin1")
        except OSError as exc:
            files[path] = f"OSError:{exc.errno}"
    # Every readable file of /proc/sys and /sys but the seat's own cgroup and network namespace.
    readable = []
    for root in ("/proc/sys", "/sys"):
        for directory, dirs, names in os.walk(root):
            if directory.startswith(("/sys/fs/cgroup", "/proc/sys/net")):
                dirs[:] = []
                continue
            for name in names:
                try:
                    with open(os.path.join(directory, name), "rb") as f:
                        f.read(1)
                    readable.append(os.path.join(directory, name))
                except OSError:
                    pass
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
    caps = {key: status[key].strip() for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
    executed = {}
    for directory in ("/tmp", "/dev/shm"):
        path = os.path.join(directory, "run.sh")
        try:
            with open(path, "w") as f:
                f.write("#!/bin/sh\nexit 0\n")
            os.chmod(path, 0o755)
            executed[directory] = subprocess.run([path], check=False).returncode
        except OSError as exc:
            executed[directory] = f"OSError:{exc.errno}"
    shm = os.statvfs("/dev/shm")
    with open("/proc/self/mountinfo") as f:
        mountinfo = f.read()
    report(
        probe="kernel", errnos=errnos, files=files, readable=readable[:50], readable_count=len(readable),
        caps=caps, executed=executed, shm_bytes=shm.f_blocks * shm.f_frsize,
        mountinfo=mountinfo, cpus=os.cpu_count(),
        masked_sys=sorted(glob.glob("/sys/*")),
    )  # fmt: skip


def probe_flood() -> None:
    """Numbered lines to stdout, ARENA_PROBE_BYTES in all, as fast as it can; then it waits to be stopped."""
    import time

    total = int(os.environ.get("ARENA_PROBE_BYTES", str(4 << 20)))
    line = 0
    written = 0
    out = sys.stdout.buffer
    while written < total:
        text = f"line {line:08d} " + "x" * 49 + "\n"  # 64 bytes a line
        out.write(text.encode())
        written += len(text)
        line += 1
    out.flush()
    time.sleep(float(os.environ.get("ARENA_PROBE_LINGER", "0")))


class Probe(Bot):
    name = "probe"

    def bid(self, view):
        self.misbehave()
        return 3

    def play(self, view):
        self.misbehave()
        return view.legal_cards()[0]

    def misbehave(self) -> None:
        if PROBE == "oom":
            hog = []
            while True:
                hog.append(bytearray(16 * 1024 * 1024))


if __name__ == "__main__":
    if PROBE == "fs":
        probe_fs()
    elif PROBE == "net":
        probe_net()
    elif PROBE == "write":
        probe_write()
    elif PROBE == "fork":
        probe_fork()
    elif PROBE == "exit":
        sys.exit(0)
    elif PROBE == "kernel":
        probe_kernel()
    elif PROBE == "flood":
        probe_flood()
    elif PROBE == "sockets":
        probe_sockets()
        run(Probe())
    else:
        run(Probe())
