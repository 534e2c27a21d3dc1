"""The hostile-bot zoo: one image, the behaviour chosen by ``ARENA_HOSTILE``.

SDK behaviours live here (a :class:`arena_sdk.Bot` that plays the first legal
card and bids 2, and misbehaves as told); the raw-gRPC behaviours (wrong ids,
garbage bytes, floods, reconnects, tokens) are in ``raw.py``.  Whatever a bot
finds out about its sandbox it prints as one line ``HOSTILE {json}`` so the
test can read it from the seat's log.

Network: the only address any behaviour ever connects to is 127.0.0.1 (the
container's own loopback; it has no other interface).  No name is resolved.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from arena_sdk import Bot, run

BEHAVIOUR = os.environ.get("ARENA_HOSTILE", "")

#: Behaviours that speak raw gRPC (raw.py) instead of the SDK.
RAW = {
    "silent", "twice", "out-of-turn", "foreign-request", "token-guess", "garbage",
    "oversized", "flood", "reconnect", "illegal",
}  # fmt: skip


def report(**data: object) -> None:
    print("HOSTILE " + json.dumps({"behaviour": BEHAVIOUR, **data}), flush=True)


def _errno(exc: OSError) -> str:
    return f"{type(exc).__name__}:{exc.errno}"


# ---------------------------------------------------------------- sandbox probes


#: The fork bomb runs in a process of its own, started with vfork/exec (no
#: gRPC state is copied): it forks sleeping children until the kernel refuses,
#: reports, and keeps every pid it got until the container is removed.
BOMB = r"""
import json, os, sys, time
children, error = 0, ""
while children < 100000:
    try:
        pid = os.fork()
    except OSError as exc:
        error = f"{type(exc).__name__}:{exc.errno}"
        break
    if pid == 0:
        time.sleep(3600)
        os._exit(0)
    children += 1
print(json.dumps({"children": children, "error": error}), flush=True)
time.sleep(3600)
"""


def fork_bomb() -> None:
    started = time.monotonic()
    bomb = subprocess.Popen([sys.executable, "-c", BOMB], stdout=subprocess.PIPE, text=True)
    line = bomb.stdout.readline() if bomb.stdout else ""  # the bomb's report, once it is out of pids
    try:
        result = json.loads(line)
    except ValueError:
        result = {"children": None, "error": f"no report: {line!r}"}
    # Can this process still start a thread with every pid taken?
    try:
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
        result["new_thread"] = "started"
    except RuntimeError as exc:
        result["new_thread"] = f"RuntimeError: {exc}"
    report(**result, seconds=round(time.monotonic() - started, 3))


def memory_bomb() -> None:
    hog = []
    while True:
        chunk = bytearray(8 * 1024 * 1024)
        for i in range(0, len(chunk), 4096):  # touch every page
            chunk[i] = 1
        hog.append(chunk)


def fill_tmp() -> None:
    written = 0
    error = ""
    block = b"x" * (1 << 20)
    try:
        with open("/tmp/fill", "wb") as f:
            while written < (1 << 30):
                f.write(block)
                f.flush()
                written += len(block)
    except OSError as exc:
        error = _errno(exc)
    # After ENOSPC the bot still works: /tmp is full, memory is not.
    report(written_bytes=written, error=error)


def network() -> None:
    interfaces = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
    ports = {}
    for port in (22, 80, 443, 2375, 2376, 50051):
        try:  # 127.0.0.1 only: the container's own loopback
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            ports[str(port)] = "connected"
        except OSError as exc:
            ports[str(port)] = type(exc).__name__
    report(interfaces=interfaces, connect=ports)


def host_files() -> None:
    found: dict[str, object] = {"uid": os.getuid()}
    try:
        found["arena_dir"] = sorted(os.listdir("/arena"))
    except OSError as exc:
        found["arena_dir"] = _errno(exc)
    targets = {"write_arena": "/arena/x", "write_root": "/x", "write_etc": "/etc/x", "write_bot": "/bot/x"}
    for name, path in targets.items():
        try:
            with open(path, "w") as f:
                f.write("x")
            found[name] = "written"
        except OSError as exc:
            found[name] = _errno(exc)
    try:
        with open("/etc/shadow") as f:
            f.read(1)
        found["read_shadow"] = "read"
    except OSError as exc:
        found["read_shadow"] = _errno(exc)
    found["docker_socket"] = [p for p in ("/var/run/docker.sock", "/run/docker.sock") if os.path.exists(p)]
    try:
        found["root_home"] = sorted(os.listdir("/root"))
    except OSError as exc:
        found["root_home"] = _errno(exc)
    # Other seats' tokens: look through every process this container can see.
    own = os.environ.get("ARENA_TOKEN", "")
    tokens = set()
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                for item in f.read().split(b"\0"):
                    if item.startswith(b"ARENA_TOKEN="):
                        tokens.add(item.split(b"=", 1)[1].decode())
        except OSError:
            pass
    found["processes"] = len(pids)
    found["foreign_tokens"] = len(tokens - {own})
    mounts = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                mounts.append(fields[4])
    except OSError:
        pass
    found["bind_mounts"] = [m for m in mounts if m == "/arena" or m.startswith("/arena/")]
    report(**found)


def spin() -> None:
    while True:
        pass


LOG_CHUNK = b"spam " * 52_429  # about 256 KiB


# ---------------------------------------------------------------- the SDK bot


class Hostile(Bot):
    name = "hostile"
    version = "1"

    def __init__(self) -> None:
        super().__init__()
        self.name = f"hostile-{BEHAVIOUR}"[:64]
        self.decisions = 0

    def on_game_start(self, info) -> None:
        self.decisions = 0

    def bid(self, view):
        self.misbehave()
        return 2

    def play(self, view):
        self.misbehave()
        return view.legal_cards()[0]

    def misbehave(self) -> None:
        self.decisions += 1
        n = self.decisions
        if BEHAVIOUR == "slow-sometimes":
            if n == 3:
                time.sleep(0.6)  # over the move time; the bank pays
            elif n == 8:
                # Past what is left of the bank (0.7 s) by less than a move time: the struck answer is
                # late, but the next decision (asked while it sleeps) is still answered in time, so one
                # overrun is one strike, never a cascade into a forfeit (0.6 s over it gave three).
                time.sleep(1.15)
        elif BEHAVIOUR == "slow-always":
            time.sleep(1.5)
        elif BEHAVIOUR == "crash" and n == 6:
            sys.stderr.write("hostile: crashing mid-hand\n")
            sys.stderr.flush()
            os._exit(3)
        elif n == 2 and BEHAVIOUR == "memory-bomb":
            memory_bomb()
        elif n == 2 and BEHAVIOUR == "fork-bomb":
            fork_bomb()
        elif n == 2 and BEHAVIOUR == "fill-tmp":
            fill_tmp()
        elif n == 2 and BEHAVIOUR == "network":
            network()
        elif n == 2 and BEHAVIOUR == "host-files":
            host_files()
        elif BEHAVIOUR == "log-spam":
            sys.stdout.buffer.write(LOG_CHUNK + b"\n")
            sys.stdout.flush()
            sys.stderr.write("spam on stderr too\n" * 100)


def main() -> None:
    # As PID 1 a process ignores TERM unless it handles it: exit at once when
    # the platform stops the container (the KILL after the grace would do too).
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if BEHAVIOUR in RAW:
        import raw

        raw.main(BEHAVIOUR)
        return
    if BEHAVIOUR == "exit0":
        report(exiting=0)
        sys.exit(0)
    if BEHAVIOUR == "cpu-spin":
        threading.Thread(target=spin, daemon=True).start()
    run(Hostile())


if __name__ == "__main__":
    main()
