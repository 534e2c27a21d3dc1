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
    elif PROBE == "sockets":
        probe_sockets()
        run(Probe())
    else:
        run(Probe())
