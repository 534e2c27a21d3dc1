"""Hostile HTTP/2 clients spoken at the frame level (``h2``), for attacks grpc libraries won't do.

Run as a process (``ARENA_ADDRESS`` and the token as local bots get it: ``ARENA_TOKEN_FILE``)::

    python h2client.py stall [WINDOW]     # join, answer pings, grant no flow-control window
    python h2client.py flood COUNT        # open COUNT connections (and streams) and hold them

``stall`` joins its seat like a bot, then never sends a WINDOW_UPDATE: the
referee can write at most WINDOW bytes to it (default 0: not even Welcome).
It keeps answering pings (h2 acks them), so keepalive never drops it.

``flood`` is a bot whose helpers open connections to the referee's socket as
fast as they can, each opening a ``Play`` stream that never sends a Join,
and keeps them open; it writes one JSON line of counts to stdout when it
ends (after ``HOLD_S`` or on SIGTERM).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings

from arena_sdk.client import token_from_env

PLAY_PATH = "/arena.v1.Referee/Play"
#: How long a hostile client lives at most (the test stops it sooner).
HOLD_S = 120.0


def connect(address: str, timeout: float | None = None) -> socket.socket:
    """A connected socket for ``unix:/path`` or ``host:port``."""
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(address[len("unix:") :].removeprefix("//"))
        except OSError:
            sock.close()
            raise
    else:
        host, port = address.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    sock.settimeout(None)
    return sock


def h2_connection(window: int) -> h2.connection.H2Connection:
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.local_settings = h2.settings.Settings(
        client=True,
        initial_values={
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window,
            h2.settings.SettingCodes.ENABLE_PUSH: 0,
        },
    )
    conn.initiate_connection()
    return conn


def open_play(conn: h2.connection.H2Connection) -> int:
    stream = conn.get_next_available_stream_id()
    conn.send_headers(
        stream,
        [
            (":method", "POST"), (":scheme", "http"), (":path", PLAY_PATH),
            (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
        ],
    )  # fmt: skip
    return stream


def join_frame(token: str) -> bytes:
    """A length-prefixed gRPC message holding BotMessage{join} (encoded by hand: no protobuf needed)."""

    def field(number: int, payload: bytes) -> bytes:
        return bytes([number << 3 | 2, len(payload)]) + payload

    def varint(number: int, value: int) -> bytes:
        return bytes([number << 3, value])

    join = field(1, token.encode()) + varint(2, 1) + field(3, b"staller") + field(4, b"1")
    message = field(1, join)
    return b"\x00" + len(message).to_bytes(4, "big") + message


def stall(address: str, token: str, window: int) -> None:
    sock = connect(address)
    conn = h2_connection(window)
    stream = open_play(conn)
    conn.send_data(stream, join_frame(token))
    sock.sendall(conn.data_to_send())
    received = 0
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 1.0)
        if not ready:
            continue
        data = sock.recv(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.DataReceived):
                received += len(event.data)  # never acknowledged: no WINDOW_UPDATE
        sock.sendall(conn.data_to_send())  # ping and settings acks only
    print(json.dumps({"received_bytes": received}), flush=True)


def flood(address: str, token: str, count: int) -> None:
    """Open up to ``count`` connections at once, reopening what the referee closes.

    Every other stream sends a Join with this seat's token (a flood the
    referee can put down to the seat); the rest send nothing.  Ends after
    ``HOLD_S``, on SIGTERM, or when the parent bot is gone.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, count + 64)), hard))
    held: list[socket.socket] = []
    counts = {"connected": 0, "refused": 0, "closed_by_referee": 0}
    stop = False
    parent = os.getppid()

    def on_term(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    deadline = time.monotonic() + HOLD_S
    reported = time.monotonic()
    while not stop and time.monotonic() < deadline and os.getppid() == parent:
        check = time.monotonic() - reported > 0.2
        if check:
            reported = time.monotonic()
            print(json.dumps(counts), flush=True)  # progress, in case we are killed
        if len(held) < count:
            try:
                sock = connect(address, timeout=0.05)  # a full backlog: try again
                conn = h2_connection(65535)
                stream = open_play(conn)
                if counts["connected"] % 2:
                    conn.send_data(stream, join_frame(token))
                sock.sendall(conn.data_to_send())
                sock.setblocking(False)
                held.append(sock)
                counts["connected"] += 1
            except OSError:
                counts["refused"] += 1
                time.sleep(0.001)
        else:
            time.sleep(0.05)
        if check:
            # Drop what the referee closed, so the flood keeps trying.
            poller = select.poll()
            by_fd = {sock.fileno(): sock for sock in held}
            for fd in by_fd:
                poller.register(fd, select.POLLIN)
            for fd, _ in poller.poll(0):
                sock = by_fd[fd]
                try:
                    if sock.recv(65536):
                        continue
                except OSError:
                    pass
                counts["closed_by_referee"] += 1
                held.remove(sock)
                sock.close()
    print(json.dumps(counts), flush=True)


def main(argv: list[str]) -> int:
    address, token = os.environ["ARENA_ADDRESS"], token_from_env()
    assert token, "no ARENA_TOKEN or ARENA_TOKEN_FILE"
    mode = argv[0]
    if mode == "stall":
        stall(address, token, int(argv[1]) if len(argv) > 1 else 0)
    elif mode == "flood":
        flood(address, token, int(argv[1]))
    else:
        print(f"unknown mode {mode!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
