"""Slowloris at a low descriptor limit, and SIGTERM with connections open, against the real ``arena ladder serve``.

Before this (the main branch): 190 half-sent requests were all still held
after 40 s; at a 1,024-descriptor limit the site stopped answering and wrote
hundreds of thousands of "Too many open files" lines (at 256 descriptors and
400 half-sent requests here: a GET timed out, all 400 were held, 624,981 lines
in 25 s).  Now half-sent requests are closed after ``[server] header_timeout``,
a new connection at the cap evicts the oldest half-sent one, and a failed
accept is reported once a minute.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from docker_support import engine_or_skip
from guard_support import NO_BUILDS, bot_part_start, closed_by_server, lines_of, multipart_head, serve_with_fd_limit
from ladder_support import Ladder

pytestmark = [pytest.mark.docker, pytest.mark.timeout(600)]

FD_LIMIT = 256
HALF_SENT = 300  # more than the descriptors left for connections at FD_LIMIT


@pytest.fixture
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder's slowloris test")
    client.close()
    yield Ladder(tmp_path_factory.mktemp("ladder") / "lad", NO_BUILDS, "server.header_timeout=3.0",
                 "server.shutdown_timeout=2.0", teams=("alpha",))  # fmt: skip


def _half_sent(port: int, n: int) -> list[socket.socket]:
    """``n`` connections that each sent the start of a request and then nothing."""
    opened = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        with contextlib.suppress(OSError):  # evicted already: the server closed it
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        opened.append(s)
    return opened


def test_half_sent_requests_at_a_low_descriptor_limit_neither_block_the_site_nor_flood_its_log(ladder: Ladder):
    with serve_with_fd_limit(ladder, FD_LIMIT) as process:
        before = lines_of(ladder.log)
        held = _half_sent(ladder.port, HALF_SENT)
        try:
            answer = httpx.get(ladder.url + "/api/leaderboard", timeout=30)  # while all of them are held
            assert answer.status_code == 200
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not all(closed_by_server(s) for s in held):
                time.sleep(0.5)
            still_open = sum(not closed_by_server(s) for s in held)
            assert still_open == 0, f"{still_open} half-sent requests were still held after a minute"
            assert httpx.get(ladder.url + "/api/leaderboard", timeout=30).status_code == 200
        finally:
            for s in held:
                s.close()
        assert process.poll() is None
        logged = lines_of(ladder.log) - before
        assert logged <= 20, f"{logged} lines logged:\n{ladder.log.read_text()[-3000:]}"


def test_sigterm_stops_the_web_server_with_slow_connections_open(ladder: Ladder):
    """Half-sent requests and an upload stalled mid-body: SIGTERM still ends the server, cleanly."""
    ladder.start()
    held = _half_sent(ladder.port, 20)
    upload = socket.create_connection(("127.0.0.1", ladder.port), timeout=30)
    upload.sendall(multipart_head("/api/submissions", 150_000, ladder.tokens["alpha"]) + bot_part_start() + b"\0" * 10_000)
    try:
        time.sleep(1.0)  # the upload is being received
        started = time.monotonic()
        assert ladder.stop(signal.SIGTERM, timeout=120) == 0, ladder.log.read_text()[-3000:]
        took = time.monotonic() - started
    finally:
        for s in [*held, upload]:
            s.close()
    log = ladder.log.read_text()
    assert "did not stop in time" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert not any((ladder.directory / "tmp").glob("upload-*")), "the cut-off upload left its spool file"
    print(f"SIGTERM to exit: {took:.1f} s")
