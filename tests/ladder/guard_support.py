"""Helpers for the site-security tests (test_guard_*.py): a ladder whose builds fail at once, raw sockets, sign-in."""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from ladder_support import Ladder

#: Builds fail at once (no such base image): nothing is built or played, the site is what is tested.
NO_BUILDS = 'submissions.base_image="arena-no-such-base:none"'


def signed_in(ladder: Ladder, token: str, origin: str | None = None) -> httpx.Client:
    """A client with the session cookie of ``token`` (signed in through the form, from the site's own origin)."""
    client = httpx.Client(base_url=ladder.url, timeout=30)
    response = client.post("/signin", data={"token": token}, headers={"Origin": origin or ladder.url})
    assert response.status_code == 303, response.text
    assert client.cookies.get("arena_session"), "no session cookie"
    return client


def paused(ladder: Ladder) -> bool:
    return bool(ladder.get("/api/leaderboard").json()["paused"])


def raw_request(port: int, head: bytes, body: bytes = b"", timeout: float = 30.0, host: str = "127.0.0.1") -> bytes:
    """Send ``head`` (and ``body``) on a new connection; everything the server sends until it closes or ``timeout``."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(head + body)
        return read_until_closed(s, timeout)


def read_until_closed(s: socket.socket, timeout: float) -> bytes:
    """What arrives on ``s`` until the server closes it (or a reset, or ``timeout`` with nothing more)."""
    s.settimeout(timeout)
    received = b""
    with contextlib.suppress(ConnectionResetError, TimeoutError):
        while chunk := s.recv(65536):
            received += chunk
    return received


def closed_by_server(s: socket.socket) -> bool:
    """Whether the server has closed ``s`` (without waiting)."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def multipart_head(path: str, length: int, token: str | None = None, boundary: str = "guardboundary") -> bytes:
    """The request line and headers of a multipart upload of ``length`` bytes (the body is the caller's)."""
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: multipart/form-data; boundary={boundary}",
             f"Content-Length: {length}"]  # fmt: skip
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def bot_part_start(boundary: str = "guardboundary") -> bytes:
    return (f"--{boundary}\r\nContent-Disposition: form-data; name=\"bot\"; filename=\"bot.tar.gz\"\r\n"
            "Content-Type: application/gzip\r\n\r\n").encode()  # fmt: skip


def status_of(response: bytes) -> int:
    assert response.startswith(b"HTTP/1.1 "), response[:200]
    return int(response[9:12])


@contextlib.contextmanager
def serve_with_fd_limit(ladder: Ladder, limit: int) -> Iterator[subprocess.Popen[str]]:
    """``arena ladder serve`` with ``RLIMIT_NOFILE`` at ``limit``, its output (stdout and stderr) in ladder.log."""

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    log = ladder.log.open("a")
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "ladder", "serve", str(ladder.directory), "--port", str(ladder.port)],
        stdout=log, stderr=subprocess.STDOUT, text=True, preexec_fn=lower,
    )  # fmt: skip
    ladder.process = process
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(ladder.url + "/api/leaderboard", timeout=2).status_code == 200:
                    break
            assert process.poll() is None and time.monotonic() < deadline, (
                f"the server {'ended with ' + str(process.returncode) if process.returncode is not None else 'did not answer'}"
                f" at RLIMIT_NOFILE={limit}; its log:\n{ladder.log.read_text()[-4000:]}"
            )
            time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()


def lines_of(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)
