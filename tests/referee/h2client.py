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

``churn`` (``python h2client.py churn CONNECTIONS STREAMS SECONDS [join]``)
is the stream-churn attack of issue 24.6: a few side connections to the
seat's own socket, each opening ``Play`` streams that send a Join with a
wrong token and are reset at once (RST_STREAM; with ``join``: left open for
the referee to refuse), in a loop, bounded by ``STREAMS`` streams in all and
``SECONDS``; connections the referee closes are reopened (until it refuses
them).  It prints a JSON line of counts now and then and at the end.
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
import h2.exceptions
import h2.settings
from arena_sdk.client import token_from_env

PLAY_PATH = "/arena.v1.Referee/Play"
#: How long a hostile client lives at most (the test stops it sooner).
HOLD_S = 120.0
#: Streams ``churn`` opens and resets per write on each connection.
BATCH = 16


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


def _play_header_block() -> bytes:
    """The HEADERS block of a Play request, encoded without the HPACK dynamic table
    (never indexed), so that every stream can reuse the same bytes."""
    import hpack

    headers = [
        (":method", "POST"), (":scheme", "http"), (":path", PLAY_PATH),
        (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
    ]  # fmt: skip
    return hpack.Encoder().encode([hpack.NeverIndexedHeaderTuple(n, v) for n, v in headers])


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(4, 0, 0, b"")


class _RawChurn:
    """One connection that opens and resets Play streams from prebuilt bytes (no h2 state: fast)."""

    def __init__(self, sock: socket.socket, join: bytes) -> None:
        self.sock = sock
        self.next_stream = 1
        self.headers = _play_header_block()
        self.join = join
        self.buffer = b""
        sock.sendall(_PREFACE)
        sock.setblocking(False)

    def batch(self, count: int) -> bytes:
        out = []
        for _ in range(count):
            sid = self.next_stream
            self.next_stream += 2
            out.append(_frame(1, 0x4, sid, self.headers))  # HEADERS, END_HEADERS
            out.append(_frame(0, 0, sid, self.join))  # DATA: the Join
            out.append(_frame(3, 0, sid, (8).to_bytes(4, "big")))  # RST_STREAM CANCEL
        return b"".join(out)

    def answer(self) -> None:
        """Ack the referee's SETTINGS and PINGs (else it drops us); raise when it closes us."""
        while True:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            if not data:
                raise ConnectionError("closed")
            self.buffer += data
            while len(self.buffer) >= 9:
                length = int.from_bytes(self.buffer[:3], "big")
                if len(self.buffer) < 9 + length:
                    break
                kind, flags = self.buffer[3], self.buffer[4]
                payload = self.buffer[9 : 9 + length]
                self.buffer = self.buffer[9 + length :]
                if kind == 7:  # GOAWAY
                    raise ConnectionError("goaway")
                if kind == 4 and not flags & 1:
                    self._send(_frame(4, 1, 0, b""))
                elif kind == 6 and not flags & 1:
                    self._send(_frame(6, 1, 0, payload))

    def _send(self, data: bytes) -> None:
        self.sock.setblocking(True)
        try:
            self.sock.sendall(data)
        finally:
            self.sock.setblocking(False)


def churn(address: str, connections: int, streams: int, seconds: float, reset: bool = True) -> dict[str, int]:
    """Open Play streams that send a wrong-token Join on ``connections`` connections, in a loop.

    ``reset``: each stream is reset at once (RST_STREAM) after its Join; else
    it is left to the referee to refuse (``UNAUTHENTICATED``) and up to the
    connection's stream limit are kept open.  Bounded by ``streams`` streams
    in all and ``seconds``.  Returns (and prints) the counts: streams opened,
    refusals read, connections made and refused, and connections the referee
    closed (GOAWAY or EOF).
    """
    counts = {"streams": 0, "answered": 0, "connected": 0, "refused": 0, "closed_by_referee": 0}
    if reset:
        return _churn_reset(address, connections, streams, seconds, counts)
    live: dict[socket.socket, tuple[h2.connection.H2Connection, set[int]]] = {}
    bogus = join_frame("not-a-token-of-this-match-" + "x" * 8)
    deadline = time.monotonic() + seconds
    reported = time.monotonic()
    refused_since = 0.0
    while counts["streams"] < streams and time.monotonic() < deadline:
        while len(live) < connections and time.monotonic() - refused_since > 0.05:
            try:
                sock = connect(address, timeout=0.05)
            except OSError:  # the cap is full or the socket is gone: try again a little later
                counts["refused"] += 1
                refused_since = time.monotonic()
                break
            conn = h2_connection(65535)
            sock.sendall(conn.data_to_send())
            live[sock] = (conn, set())
            counts["connected"] += 1
        if time.monotonic() - reported > 0.2:
            reported = time.monotonic()
            print(json.dumps(counts), flush=True)
        if not live:
            time.sleep(0.01)
            continue
        for sock, (conn, open_streams) in list(live.items()):
            room = max(0, min(BATCH, conn.remote_settings.max_concurrent_streams) - len(open_streams))
            for _ in range(room):
                stream = open_play(conn)
                conn.send_data(stream, bogus, end_stream=True)
                open_streams.add(stream)
                counts["streams"] += 1
            try:
                sock.sendall(conn.data_to_send())
            except OSError:
                counts["closed_by_referee"] += 1
                del live[sock]
                sock.close()
        ready, _, _ = select.select(list(live), [], [], 0.005)
        for sock in ready:  # take what the referee sent (settings, pings, refusals)
            conn, open_streams = live[sock]
            try:
                data = sock.recv(65536)
                if not data:
                    raise ConnectionError("closed")
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.ConnectionTerminated):
                        raise ConnectionError("goaway")
                    if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                        counts["answered"] += event.stream_id in open_streams
                        open_streams.discard(event.stream_id)
                sock.sendall(conn.data_to_send())
            except (OSError, h2.exceptions.ProtocolError):
                counts["closed_by_referee"] += 1
                del live[sock]
                sock.close()
    for sock in live:
        sock.close()
    print(json.dumps(counts), flush=True)
    return counts


def _churn_reset(address: str, connections: int, streams: int, seconds: float, counts: dict[str, int]) -> dict[str, int]:
    live: list[_RawChurn] = []
    bogus = join_frame("not-a-token-of-this-match-" + "x" * 8)
    deadline = time.monotonic() + seconds
    reported = time.monotonic()
    refused_since = 0.0
    while counts["streams"] < streams and time.monotonic() < deadline:
        while len(live) < connections and time.monotonic() - refused_since > 0.05:
            try:
                live.append(_RawChurn(connect(address, timeout=0.05), bogus))
                counts["connected"] += 1
            except OSError:  # the cap is full or the socket is gone: try again a little later
                counts["refused"] += 1
                refused_since = time.monotonic()
                break
        if time.monotonic() - reported > 0.2:
            reported = time.monotonic()
            print(json.dumps(counts), flush=True)
        if not live:
            time.sleep(0.01)
            continue
        for conn in list(live):
            try:
                conn._send(conn.batch(BATCH))
                counts["streams"] += BATCH
                conn.answer()
            except OSError:
                counts["closed_by_referee"] += 1
                live.remove(conn)
                conn.sock.close()
    for conn in live:
        conn.sock.close()
    print(json.dumps(counts), flush=True)
    return counts


def main(argv: list[str]) -> int:
    address, mode = os.environ["ARENA_ADDRESS"], argv[0]
    if mode == "churn":  # needs no token: it never sends a valid one
        churn(address, int(argv[1]), int(argv[2]), float(argv[3]), reset=argv[4:5] != ["join"])
        return 0
    token = token_from_env()
    assert token, "no ARENA_TOKEN or ARENA_TOKEN_FILE"
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
