"""What a seat's own socket may cost the referee (issue 24.6): streams counted, rate-limited, charged.

Everything that arrives on a seat's own socket (``seat-N/referee.sock``, one
gRPC server per seat: ``RefereeServer.add_seat_listener``) comes from that
seat: a container mounts only its own seat's directory.  So the referee can
charge that seat for it, where a shared listener (``--listen``, ``arena
serve``) cannot tell who sent a stream.  A :class:`SeatGuard` keeps one seat
socket's books:

* every new stream (any method: ``Play``, health checks) takes a token from
  a bucket (:data:`STREAM_RATE` a second, bursts of :data:`STREAM_BURST`);
  a stream that finds the bucket empty is refused (``RESOURCE_EXHAUSTED``)
  and charged;
* every ``Play`` stream that does not become the seat's one stream is
  refused and charged to the seat: recorded in its events (``join_refused``
  for any stream after the seat's Welcome, ``stream_refused`` for one before
  it: a wrong or another seat's token, no Join, a stream reset before its
  Join, a stream over the rate) and counted as a refused message, so that
  more than ``MAX_REFUSED_PER_GAME`` (50) in a game is ``forfeit:protocol``,
  the same path as any other flood of refused messages;
* a seat lost for a protocol violation through its socket has its listener
  closed (``cut``): the flood ends with the connections that carried it;
* :class:`CpuWatch` bounds the referee's CPU: when the process uses more
  than :data:`CPU_BOUND` seconds of CPU a second over a window and one seat's
  socket opened at least :data:`CPU_MIN_STREAMS` streams in it, that seat is
  out (``forfeit:protocol``) and its socket is cut.

What cannot be charged: work gRPC does below the streams the referee sees
(streams reset before gRPC starts a call for them, bare connections; at most
:data:`SEAT_MAX_CONNECTIONS` at once per socket), and anything on a shared
listener.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import grpc

from arena.referee.session import RemoteSeat

log = logging.getLogger(__name__)

#: New streams a seat's socket takes per second, in bursts of up to STREAM_BURST
#: (a bot needs one stream; a health check now and then, retries after a crowded join).
STREAM_RATE = 8.0
STREAM_BURST = 16
#: The referee's CPU bound: CPU seconds per second of wall time over a window of CPU_WINDOW_S.
CPU_BOUND = 0.5
CPU_WINDOW_S = 1.0
#: Streams a seat's socket must have opened in a window over the bound for the excess to be put
#: down to it (an honest seat opens none after its Welcome).
CPU_MIN_STREAMS = 16
#: How long a cut listener's streams get to end (the lost seat's stream gets its status).
CUT_GRACE_S = 0.2


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved; :meth:`take` spends one if there is one."""

    __slots__ = ("_clock", "_last", "_tokens", "burst", "rate")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def take(self) -> bool:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True


class SeatGuard:
    """One seat socket's books: streams seen, charged, rate-limited; the cut when the seat is out."""

    def __init__(self, seat: RemoteSeat, live: Callable[[RemoteSeat], bool]) -> None:
        """``live(seat)``: whether the seat's match is still registered (its token works)."""
        self.seat = seat
        self._live = live
        self.bucket = TokenBucket(STREAM_RATE, STREAM_BURST)
        #: New streams seen on the socket (any method), and those charged to the seat.
        self.streams = 0
        self.charged = 0
        self._window_mark = 0
        #: Why the socket was cut ("" while it serves); set by :meth:`cut`.
        self.cut_reason = ""
        self._on_cut: Callable[[], None] | None = None

    def live(self) -> bool:
        return self._live(self.seat)

    def bind(self, on_cut: Callable[[], None]) -> None:
        """What :meth:`cut` does: close the seat's listener (set by the server once it runs)."""
        self._on_cut = on_cut

    def admit(self) -> bool:
        """A new stream arrived: count it; False when the socket's stream rate is spent."""
        self.streams += 1
        return self.bucket.take()

    def charge(self, detail: str, event: str = "stream_refused") -> None:
        """A stream on the seat's socket was refused: recorded (as ``event``) and counted against the seat.

        Past the seat's refused-message limit the seat is out (``protocol``) and
        its socket is cut.  Nothing is charged once the match is over.
        """
        if not self.live():
            return
        self.charged += 1
        self.seat.refuse_stream(event, detail)
        lost = self.seat.lost()
        if lost is not None and lost.reason == "protocol":
            self.cut(lost.detail)

    def window_streams(self) -> int:
        """Streams seen since the last call (the CPU watch's window)."""
        count, self._window_mark = self.streams - self._window_mark, self.streams
        return count

    def cut(self, why: str) -> None:
        """Close the seat's listener (once): its connections, and any flood on them, end."""
        if self.cut_reason:
            return
        self.cut_reason = why
        log.warning("seat %d's socket closed: %s", self.seat.seat, why)
        if self._on_cut is not None:
            self._on_cut()


class GuardInterceptor(grpc.aio.ServerInterceptor):
    """Runs every new stream on a seat's socket past its :class:`SeatGuard` (the rate limit)."""

    def __init__(self, guard: SeatGuard, charge: Callable[[str], None] | None = None) -> None:
        """``charge(detail)``: how a refused stream is charged (default: ``guard.charge``)."""
        self._guard = guard
        self._charge = charge or guard.charge

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        guard = self._guard
        if guard.admit() or handler is None or not guard.live():
            return handler
        why = f"more than {STREAM_RATE:g} new streams a second on seat {guard.seat.seat}'s socket"
        self._charge(f"RESOURCE_EXHAUSTED: {why}")
        return _refusing(handler, grpc.StatusCode.RESOURCE_EXHAUSTED, why)


def _refusing(handler: Any, code: grpc.StatusCode, why: str) -> grpc.RpcMethodHandler:
    """A handler of ``handler``'s shape that ends the call with ``code`` before reading anything."""

    async def refuse(request: Any, context: grpc.aio.ServicerContext) -> None:
        await context.abort(code, why)

    kw = {"request_deserializer": handler.request_deserializer, "response_serializer": handler.response_serializer}
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(refuse, **kw)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(refuse, **kw)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(refuse, **kw)
    return grpc.unary_unary_rpc_method_handler(refuse, **kw)


class CpuWatch:
    """Bounds the referee's CPU: a seat whose socket's streams push it over :data:`CPU_BOUND` is out.

    Every :data:`CPU_WINDOW_S` it reads the process's CPU time (all threads:
    the event loop and gRPC's); over the bound, the seat whose socket opened
    the most streams in the window (at least :data:`CPU_MIN_STREAMS`) is lost
    for a protocol violation and its socket is cut.  Over the bound with no
    such seat, nothing is done: the load is not a seat's socket's (a busy
    machine, a fast table), or it is below what the referee can see.
    """

    def __init__(
        self, guards: Callable[[], Iterable[SeatGuard]], cpu_clock: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self._guards = guards
        self._cpu_clock = cpu_clock
        self._clock = clock
        self._cpu = cpu_clock()
        self._at = clock()
        #: Seats cut by the watch: (seat, why).
        self.cut: list[tuple[int, str]] = []

    def check(self) -> SeatGuard | None:
        """Close one window: the guard cut for it, if any."""
        cpu, at = self._cpu_clock(), self._clock()
        used, span = cpu - self._cpu, at - self._at
        self._cpu, self._at = cpu, at
        counts = [(g.window_streams(), g) for g in self._guards() if not g.cut_reason and g.live()]
        if span <= 0 or used <= CPU_BOUND * span or not counts:
            return None
        streams, guard = max(counts, key=lambda c: c[0])
        if streams < CPU_MIN_STREAMS:
            return None
        why = (
            f"its socket's streams pushed the referee over its CPU bound: {streams} new streams "
            f"and {used:.2f} s of CPU in {span:.2f} s (bound {CPU_BOUND:g} s a second)"
        )
        guard.seat.mark_lost("protocol", why)
        guard.cut(why)
        self.cut.append((guard.seat.seat, why))
        return guard

    async def run(self) -> None:
        """Check every window until cancelled."""
        while True:
            await asyncio.sleep(CPU_WINDOW_S)
            self.check()
