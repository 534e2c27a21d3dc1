"""Clients that never read their answers cannot hold the site (issue 44), against the real ``arena ladder serve``.

Before this (the main branch): a client that asks for a large answer and
never reads it escaped every deadline: the answer waited in the transport's
buffer, a closing transport kept it (and its socket) until the client took it,
and eviction at the cap could not close it.  48 such clients held 48
connections and +666 MiB for as long as they liked, then 66 of 80 ordinary
GETs were refused.  Here 36 clients with small receive buffers ask for a
16 MiB game record (one message) or a 16 MiB validation record (a file,
streamed) and read nothing, against a cap of 40 connections: every ordinary
GET is answered meanwhile, the memory their answers hold stays under the
site's bound, and the server drops all of them within a bounded time.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import json
import os
import random
import socket
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from docker_support import engine_or_skip
from site_support import SyntheticLadder, free_port

pytestmark = [pytest.mark.docker, pytest.mark.timeout(600)]

ANSWER_BYTES = 16 * 2**20
NON_READERS = 36
ORDINARY_GETS = 80
#: The most the non-readers' answers may hold: the site's bound (http_server.STALLED_BYTES, 64 MiB) and slack.
MEMORY_BOUND = 160 * 2**20
SERVER = {"send_timeout": "3.0", "keep_alive": "1.0", "max_connections": "40"}


def _server_settings(toml: Path) -> None:
    text = toml.read_text()
    for key, value in SERVER.items():
        head, sep, tail = text.partition(f"\n{key} = ")
        assert sep, key
        text = head + sep + value + tail[tail.index(" "):]
    toml.write_text(text)


@pytest.fixture
def large_answers(tmp_path: Path) -> Iterator[tuple[SyntheticLadder, str]]:
    """A ladder with a 16 MiB game record and a 16 MiB validation record (alpha@1's); yields it and the record's path."""
    client = engine_or_skip("the site's write-side test")  # serve prunes the ladder's containers at start
    client.close()
    ladder = SyntheticLadder(tmp_path / "lad")
    for team in ("alpha", "beta"):
        ladder.add_team(team)
    version = ladder.add_version("alpha")
    ladder.add_version("beta")
    ladder.add_pair("alpha@1", "beta@1", rng=random.Random(1), records=True)
    found = next(ladder.directory.rglob("L0000001-t1.json"))
    data = json.loads(found.read_text())
    data["padding"] = "x" * ANSWER_BYTES  # served as it is stored: one 16 MiB JSON answer
    found.write_text(json.dumps(data))
    ladder.add_validation_record(version, "validate.json", "y" * ANSWER_BYTES)  # served as a file, in pieces
    _server_settings(ladder.directory / "ladder.toml")
    ladder.close()
    yield ladder, "/teams/alpha/versions/1/validation/validate.json"


@contextlib.contextmanager
def _serve(directory: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    log = (directory / "serve.log").open("a")
    # A fixed mmap threshold: glibc returns every large block it frees, so the resident size is what is held
    # (by default it raises the threshold after a free and keeps the freed 16 MiB blocks resident).
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}
    process = subprocess.Popen([sys.executable, "-m", "arena", "ladder", "serve", str(directory), "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, text=True, env=env)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/api/leaderboard", timeout=5).status_code == 200:
                    break
            assert process.poll() is None and time.monotonic() < deadline, (directory / "serve.log").read_text()[-4000:]
            time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def _non_reader(port: int, request: bytes) -> socket.socket:
    """A connection with a 4 KiB receive buffer that sends ``request`` and never reads a byte."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: the window it offers stays small
    s.connect(("127.0.0.1", port))
    s.sendall(request)
    return s


def _unread(s: socket.socket) -> int:
    """Bytes waiting in ``s``'s receive buffer (FIONREAD), not read."""
    return int(struct.unpack("i", fcntl.ioctl(s.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0])


def _held_by_server(pid: int, port: int, client_ports: set[int]) -> int:
    """How many of ``client_ports``' connections the server process still holds a socket for."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = fd.readlink().name
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    held = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, remote, inode = fields[1], fields[2], fields[9]
                if inode in inodes and int(local.rsplit(":", 1)[1], 16) == port and int(remote.rsplit(":", 1)[1], 16) in client_ports:
                    held += 1
    return held


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_clients_that_never_read_are_cut_and_cannot_lock_out_real_ones(large_answers: tuple[SyntheticLadder, str]):
    ladder, validation_path = large_answers
    port = free_port()
    token = ladder.tokens["alpha"]
    asks = [
        b"GET /api/games/L0000001-t1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        f"GET {validation_path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n".encode(),
    ]
    with _serve(ladder.directory, port) as process:
        before = _rss(process.pid)
        held = [_non_reader(port, asks[k % 2]) for k in range(NON_READERS)]
        try:
            client_ports = {s.getsockname()[1] for s in held}
            deadline = time.monotonic() + 120  # every one is being answered (its buffer has bytes it does not read)
            while not all(_unread(s) for s in held):
                assert time.monotonic() < deadline, f"{sum(not _unread(s) for s in held)} were never answered"
                time.sleep(0.2)
            holding = _rss(process.pid) - before

            def ordinary(_: int) -> int:
                try:
                    return httpx.get(f"http://127.0.0.1:{port}/api/leaderboard", timeout=60).status_code
                except httpx.HTTPError as exc:
                    return -1 if not isinstance(exc, httpx.TimeoutException) else -2

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                statuses = list(pool.map(ordinary, range(ORDINARY_GETS)))
            deadline = time.monotonic() + 180
            while (left := _held_by_server(process.pid, port, client_ports)) and time.monotonic() < deadline:
                time.sleep(0.5)
            after = _rss(process.pid) - before
        finally:
            for s in held:
                s.close()
        assert process.poll() is None
    refused = sum(status != 200 for status in statuses)
    print(f"memory held by the non-readers' answers: {holding / 2**20:.0f} MiB; after they were cut: "
          f"{after / 2**20:.0f} MiB; ordinary GETs refused: {refused} of {ORDINARY_GETS}")  # fmt: skip
    assert refused == 0, f"{refused} of {ORDINARY_GETS} ordinary GETs were not answered: {statuses}"
    assert left == 0, f"the server still held {left} of {NON_READERS} clients that never read, 3 minutes on"
    assert holding < MEMORY_BOUND, f"the answers not taken held {holding / 2**20:.0f} MiB"
    log = (ladder.directory / "serve.log").read_text()
    assert "Traceback" not in log, log[-3000:]
