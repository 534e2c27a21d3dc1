"""The ladder's uvicorn: timeouts on every phase of a request, a cap on open connections, trusted proxies only.

uvicorn bounds the wait *between* requests (``timeout_keep_alive``) but not a
request that arrives slowly: its keep-alive timer is cancelled by the first
byte, so a client sending a header line now and then (slowloris) holds its
connection, and its file descriptor, for ever.  At the process's descriptor
limit the site stops answering, and asyncio's accept loop logs every failed
``accept()``: hundreds of thousands of lines a minute.

:class:`GuardedH11Protocol` is uvicorn's own h11 protocol with deadlines
(the way uvicorn takes a custom protocol: ``Config(http=...)``):

- ``header_timeout``: a request's line and headers must be complete this many
  seconds after its first byte (or after the connection opened);
- ``body_timeout`` and ``idle_timeout``: its body must be complete this many
  seconds after the headers, with no pause longer than ``idle_timeout``;
- ``send_timeout``: the write side.  An answer waiting in memory for its
  client (the socket's buffers full: the client reads nothing) must move by
  :data:`MIN_SEND_PROGRESS` bytes, or to its end, every ``send_timeout``
  seconds, else the connection is cut and the answer dropped.  This holds
  after the answer is complete and the connection closing too: a closing
  transport keeps its buffer, and its socket, until the client takes it, so
  closing one is not enough; it is aborted.  All connections together hold
  at most :data:`STALLED_BYTES` of such answers: past that, those that did
  not move since the last look, then the longest waiting, are cut at once;
- ``max_connections`` (kept below the descriptor limit): a connection counts
  until its socket is gone, a closing one included.  At the cap a new
  connection evicts, in this order, a closing one still holding an answer,
  the oldest one that has not yet sent a whole request (half-sent or idle:
  slowloris is always the oldest), the one whose answer has waited longest
  for its client; so a real client is answered at once.  With none to evict,
  the new one is closed.

Expiry closes the connection; the app sees the client gone (an upload in
flight removes its spool file, an answer being sent ends).  Closings are
counted and reported at most once a minute, never per connection.  The
app's own time to make an answer is not bounded here: that is the app's.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn._compat import asyncio_run
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import Server

from arena.ladder.site.settings import ServerSettings

#: Descriptors kept for everything but the site's connections (stores, Docker, tables, logs).
FD_RESERVE = 96
#: Connections accepted in one turn of the event loop (also the listen backlog); bounds the burst past the cap.
ACCEPT_BACKLOG = 64
#: Seconds between two reports of closed connections.
REPORT_EVERY = 60.0
#: Bytes of a waiting answer its client must take every ``send_timeout`` seconds (or the rest, if less).
MIN_SEND_PROGRESS = 16 * 1024
#: Bytes of answers all connections together may hold in memory for clients that do not take them.
STALLED_BYTES = 64 * 2**20

logger = logging.getLogger("arena.ladder.http")


def connection_cap(settings: ServerSettings, soft_limit: int | None = None) -> int:
    """Open connections allowed: ``max_connections``, and below the descriptor limit with room for the rest."""
    if soft_limit is None:
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft_limit == resource.RLIM_INFINITY:
        return settings.max_connections
    return max(8, min(settings.max_connections, soft_limit - FD_RESERVE - ACCEPT_BACKLOG))


class _Report:
    """Counts of connections closed by the guards, logged at most once every :data:`REPORT_EVERY` seconds."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.last = 0.0

    def add(self, why: str) -> None:
        self.counts[why] = self.counts.get(why, 0) + 1
        if time.monotonic() - self.last >= REPORT_EVERY:
            self.flush()

    def flush(self) -> None:
        """Log what was counted since the last report (nothing if nothing was)."""
        self.last = time.monotonic()
        if self.counts:
            summary = ", ".join(f"{n} {reason}" for reason, n in sorted(self.counts.items()))
            self.counts = {}
            logger.warning("closed connections: %s", summary)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with deadlines on both sides, a connection cap and eviction (module docstring)."""

    settings: ClassVar[ServerSettings] = ServerSettings()
    cap: ClassVar[int] = ServerSettings.max_connections
    #: Bytes of answers not taken that all connections together may hold (:data:`STALLED_BYTES`).
    stalled_bytes: ClassVar[int] = STALLED_BYTES
    #: Connections that have not yet sent a whole request line and headers, oldest first (a dict as an ordered set).
    waiting: ClassVar[dict[GuardedH11Protocol, None]] = {}
    #: Connections with an answer waiting in memory for their client, longest waiting first.
    sending: ClassVar[dict[GuardedH11Protocol, None]] = {}
    report: ClassVar[_Report] = _Report()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._phase = "headers"
        self._send_check: asyncio.TimerHandle | None = None
        self._send_left = 0  # bytes waiting at the last look
        self._send_moved = False  # the transport asked for more since the last look (the client took some)
        self._lost = False

    # ------------------------------------------------------------ phases

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.cap:
            victim = self._victim()
            if victim is None:
                self._close("over the connection cap")
                return
            victim._close("evicted at the connection cap")
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._disarm()
        self._stop_send_watch()
        self.waiting.pop(self, None)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._phase == "idle":  # the first byte of the next request on a kept-alive connection
            self._await_headers()
        elif self._phase == "body" and self._idle is not None:
            self._idle.cancel()
            self._idle = self.loop.call_later(self.settings.idle_timeout, self._expire, "idle in a request body")
        super().data_received(data)

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.transport.is_closing() or self.cycle is None:
            return
        if self.cycle is not before and self._phase == "headers":  # a request's headers are in
            self.waiting.pop(self, None)
            self._disarm()
            self._phase = "body"
            self._deadline = self.loop.call_later(self.settings.body_timeout, self._expire, "too slow a request body")
            self._idle = self.loop.call_later(self.settings.idle_timeout, self._expire, "idle in a request body")
        if self._phase == "body" and (not self.cycle.more_body or self.conn.their_state is not h11.SEND_BODY):
            self._disarm()  # the whole request is in: what follows is the app's time
            self._phase = "app"

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        """A WebSocket (a practice table's page) takes the connection over: this protocol's deadlines and its
        place among the waiting end here (else the header deadline would close the socket under it)."""
        self._disarm()
        self._stop_send_watch()
        self.waiting.pop(self, None)
        self._phase = "upgraded"
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # arms uvicorn's keep-alive timer for the next request
        if not self.transport.is_closing() and self._phase != "headers":
            self._disarm()
            self._phase = "idle"
            self.waiting[self] = None  # idle connections may be evicted at the cap too
        if self._buffered():  # the answer is complete but not yet taken (closing or not): it still must move
            self._watch_send()

    def shutdown(self) -> None:
        """The server stops: a request still arriving is cut now (its app sees the client gone and cleans up).

        A request already received in full keeps uvicorn's grace
        (``shutdown_timeout``) to finish its answer.
        """
        if self._phase in ("headers", "body"):
            self._close("cut at shutdown")
            return
        super().shutdown()

    # ------------------------------------------------------------ the write side

    def pause_writing(self) -> None:
        """The transport's buffer is over its high-water mark: the client is not taking the answer as it comes."""
        super().pause_writing()
        self._watch_send()
        self._trim_stalled()

    def resume_writing(self) -> None:
        """The buffer drained to its low-water mark: the client took some of the answer."""
        super().resume_writing()
        self._send_moved = True

    def _buffered(self) -> int:
        """Bytes of answers written to the transport and not yet sent on the socket."""
        if self._lost or self.transport is None:
            return 0
        return int(self.transport.get_write_buffer_size())

    def _watch_send(self) -> None:
        """Look every ``send_timeout`` seconds whether the waiting answer moved (already watched: nothing)."""
        if self._send_check is not None or self._lost:
            return
        self._send_left = self._buffered()
        self.sending[self] = None
        self._send_check = self.loop.call_later(self.settings.send_timeout, self._check_send)

    def _check_send(self) -> None:
        self._send_check = None
        left = self._buffered()
        if left == 0 and not self.flow.write_paused:
            self.sending.pop(self, None)  # all taken: nothing waits any more
            return
        if self._send_moved or left <= self._send_left - MIN_SEND_PROGRESS:
            self._send_moved = False
            self._send_left = left
            self._send_check = self.loop.call_later(self.settings.send_timeout, self._check_send)
            return
        self._close("took none of its answer")

    def _stop_send_watch(self) -> None:
        if self._send_check is not None:
            self._send_check.cancel()
            self._send_check = None
        self.sending.pop(self, None)

    def _trim_stalled(self) -> None:
        """Past :attr:`stalled_bytes` of answers waiting for their clients, cut some: those that did not move
        since the last look first, then the longest waiting (a new answer of a real client is cut last)."""
        held = {protocol: protocol._buffered() for protocol in self.sending}
        total = sum(held.values())
        for protocol in sorted(held, key=lambda p: p._send_moved):  # stable: longest waiting first within each
            if total <= self.stalled_bytes:
                return
            protocol._close("over the memory for answers not taken")
            total -= held[protocol]

    def _victim(self) -> GuardedH11Protocol | None:
        """Whom a new connection evicts at the cap: a closing one holding an answer, the oldest waiting, the longest sending."""
        closing = next((p for p in self.sending if p.transport.is_closing()), None)
        if closing is not None:
            return closing
        return next(iter(self.waiting), None) or next(iter(self.sending), None)

    # ------------------------------------------------------------ timers

    def _await_headers(self) -> None:
        self._disarm()
        self._phase = "headers"
        self.waiting.pop(self, None)
        self.waiting[self] = None
        self._deadline = self.loop.call_later(self.settings.header_timeout, self._expire, "too slow request headers")

    def _disarm(self) -> None:
        for timer in (self._deadline, self._idle):
            if timer is not None:
                timer.cancel()
        self._deadline = self._idle = None

    def _expire(self, why: str) -> None:
        self._close(why)

    def _close(self, why: str) -> None:
        """Close the connection (counted under ``why``); one holding an answer not taken is aborted, the answer dropped.

        ``transport.close()`` alone would keep the buffer, and the socket,
        until the client takes it: for a client that never reads, for ever.
        """
        self._disarm()
        self.waiting.pop(self, None)
        if self._lost:
            return
        if self._buffered():
            self._stop_send_watch()
            self.report.add(why)
            self.transport.abort()  # connection_lost follows (the app sees the client gone)
        elif not self.transport.is_closing():
            self.report.add(why)
            self.transport.close()


def guarded_protocol(settings: ServerSettings) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` class of its own for one server (its settings, cap and registry)."""
    return type(
        "LadderH11Protocol",
        (GuardedH11Protocol,),
        {"settings": settings, "cap": connection_cap(settings), "waiting": {}, "sending": {}, "report": _Report()},
    )


def server_config(app: Any, host: str, port: int, settings: ServerSettings) -> uvicorn.Config:
    """uvicorn's configuration for the ladder's site: the guarded protocol, proxies trusted only as configured."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(settings),
        log_level="warning",
        lifespan="off",
        # X-Forwarded-Proto/-For only from the configured proxy; with none, nobody's are believed.
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=list(settings.trusted_proxies) or None,
        timeout_keep_alive=max(1, round(settings.keep_alive)),
        timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout)),
        backlog=ACCEPT_BACKLOG,
        server_header=False,
    )


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Report asyncio's failed ``accept()`` (out of descriptors) once a minute, not once per try.

    asyncio logs every failed accept of its accept loop (:data:`ACCEPT_BACKLOG`
    a turn, five lines each, and again every second): at the descriptor limit
    that alone floods the organiser's console.
    """
    report = _Report()
    default = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if "out of system resource" in str(context.get("message", "")):
            report.add("accept() failures: out of file descriptors")
            return
        if default is not None:
            default(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def run(server: Server) -> None:
    """Run ``server`` in this thread (the ladder's web thread) until it is told to exit."""

    async def main() -> None:
        quiet_accept_errors(asyncio.get_running_loop())
        try:
            await server.serve()
        finally:
            protocol = server.config.http
            if isinstance(protocol, type) and issubclass(protocol, GuardedH11Protocol):
                protocol.report.flush()  # the last minute's count, not lost at the stop

    asyncio_run(main(), loop_factory=server.config.get_loop_factory())


__all__ = ["MIN_SEND_PROGRESS", "STALLED_BYTES", "GuardedH11Protocol", "connection_cap", "guarded_protocol", "quiet_accept_errors", "run", "server_config"]
