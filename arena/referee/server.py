"""The referee's gRPC server: joins, tokens, the per-seat streams, health.

One :class:`RefereeServer` can host several matches at once; each match
registers its seats (and their secret tokens) and unregisters them when it
ends, so a token dies with its match.  The server, the streams and the match
loops share one asyncio event loop.

Besides its shared addresses (``start``), a referee can give each seat a
listener of its own (``add_seat_listener``): its own socket, its own gRPC
server and connection cap, taking only that seat's token.  A seat whose
helpers flood its socket then only fills its own cap (issue #9.2): the other
seats' sockets are untouched.  Every listener serves the same
:class:`RefereeService` on the same event loop.

What arrives on a seat's own socket is that seat's doing, so it is charged
to it (issue 24.6, ``seat_guard``): new streams are rate-limited, every
``Play`` stream that does not become the seat's one stream is refused and
counted against the seat (a flood of them is ``forfeit:protocol`` and closes
the socket), and the referee's CPU is bounded.  Shared addresses charge no
one: they cannot tell who opened a stream.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import logging
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from arena.match.spec import TimeControl
from arena.referee.seat_guard import CUT_GRACE_S, CpuWatch, GuardInterceptor, SeatGuard
from arena.referee.session import RemoteSeat
from arena_sdk.engine import Ruleset
from arena_sdk.protocol import MAX_MESSAGE_BYTES, PROTOCOL_VERSION, welcome_message
from arena_sdk.wire import arena_pb2 as pb
from arena_sdk.wire import arena_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

#: How often the server pings an idle bot, and how long it waits for the
#: ack: a frozen bot is noticed within about KEEPALIVE_TIME + PING_TIMEOUT.
KEEPALIVE_TIME_MS = 2000
PING_TIMEOUT_MS = 2000
#: How long a new stream may take to send its Join (a bot sends it at once).
JOIN_TIMEOUT_S = 5.0
#: Connections one referee (one match) accepts at once: its seats, health
#: checks, and a few strangers.  Beyond this gRPC closes new connections at
#: once, so a bot whose helpers flood the socket cannot take the runner's
#: file descriptors (records, the results database, other tables).
MAX_CONNECTIONS = 32
#: Connections one seat's own socket accepts at once: the bot's stream, a
#: health check, a reconnect or two.  Each seat listener is its own gRPC
#: server, so this cap is the seat's alone.
SEAT_MAX_CONNECTIONS = 8
#: Streams that may wait up to JOIN_TIMEOUT_S for their Join at once.  A
#: stream beyond these is not refused unread (that let one seat's flood keep
#: the others from joining, issue #9.2): it gets CROWDED_JOIN_TIMEOUT_S to
#: send its Join, and a Join with a valid token is taken whatever the count;
#: only a stream that sends none in that time is refused (RESOURCE_EXHAUSTED).
#: So unauthenticated streams stay few and short-lived (at most
#: MAX_CONNECTIONS x the streams per connection, each for at most this long),
#: and an honest bot, which sends its Join at once, is never starved.
MAX_PENDING_JOINS = 8
CROWDED_JOIN_TIMEOUT_S = 1.0
#: How long a stream refused whatever it sends (a second stream on a joined seat's socket)
#: may take to deliver its first message before the refusal is sent.
REFUSAL_DRAIN_S = 0.5
#: A connection must finish its HTTP/2 handshake within this, and one with no
#: stream open is closed after CONNECTION_IDLE_MS.
HANDSHAKE_TIMEOUT_MS = 10_000
CONNECTION_IDLE_MS = 20_000
NAME_LIMIT = 64
REFUSALS_KEPT = 100
#: Generation thresholds while a referee runs (the default first one is 700).
GC_THRESHOLDS = (20_000, 20, 20)


def server_options(max_connections: int = MAX_CONNECTIONS) -> list[tuple[str, int]]:
    """gRPC server options: a small receive limit, keepalive that notices frozen bots, and
    bounds on connections and streams (a flood costs the runner a bounded number of descriptors)."""
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
        ("grpc.keepalive_timeout_ms", PING_TIMEOUT_MS),
        ("grpc.http2.ping_timeout_ms", PING_TIMEOUT_MS),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_ping_interval_without_data_ms", 1000),
        # A bot needs one stream; a health check another connection.
        ("grpc.max_concurrent_streams", 4),
        ("grpc.max_allowed_incoming_connections", max_connections),
        ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
        ("grpc.max_connection_idle_ms", CONNECTION_IDLE_MS),
    ]


class _Match:
    """What the server knows of a registered match."""

    def __init__(
        self, match_id: str, rules: Ruleset, time_control: TimeControl, games: int,
        seats: Sequence[RemoteSeat],
    ) -> None:  # fmt: skip
        self.match_id = match_id
        self.rules = rules
        self.time_control = time_control
        self.games = games
        self.seats = list(seats)
        for seat in self.seats:
            seat.owner_of_request = self.owner_of

    def owner_of(self, request_id: int) -> int | None:
        for seat in self.seats:
            if seat.issued(request_id):
                return seat.seat
        return None

    def welcome(self, seat: RemoteSeat) -> pb.Welcome:
        tc = self.time_control
        return welcome_message(
            self.match_id, seat.seat, self.rules,
            move_ms=int(tc.move_s * 1000), bank_ms=int(tc.bank_s * 1000), hard_cap_ms=int(tc.hard_cap_s * 1000),
            strikes_to_forfeit=tc.strikes_to_forfeit, games=self.games, seat_names=[s.name for s in self.seats],
            clock=tc.clock,
        )  # fmt: skip


#: How the stream of a seat removed from the match ends (docs/protocol.md "Joining").
_ABORT_STATUS = {
    "protocol": grpc.StatusCode.PERMISSION_DENIED,
    "timeout": grpc.StatusCode.DEADLINE_EXCEEDED,
}


class _Gate:
    """What one listener knows of the streams it admits: how many wait for their Join, and,
    for a seat's own socket, the seat whose token it takes (None: any seat's) and its books."""

    __slots__ = ("guard", "pending", "seat")

    def __init__(self, guard: SeatGuard | None = None) -> None:
        self.pending = 0
        self.guard = guard
        self.seat = guard.seat if guard is not None else None


class _SeatServicer(pb_grpc.RefereeServicer):
    """The Referee service as one seat's own listener serves it (its own join gate)."""

    def __init__(self, service: RefereeService, gate: _Gate) -> None:
        self._service = service
        self._gate = gate

    async def Play(self, request_iterator: object, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        await self._service.play(request_iterator, context, self._gate)


class RefereeService(pb_grpc.RefereeServicer):
    """The ``arena.v1.Referee`` service."""

    def __init__(self) -> None:
        self._by_token: dict[str, tuple[_Match, RemoteSeat]] = {}
        self.matches: list[_Match] = []
        #: The latest refused streams (status, why); older ones are only counted.
        self.refusals: collections.deque[tuple[str, str]] = collections.deque(maxlen=REFUSALS_KEPT)
        self.refused = 0
        #: Streams refused because too many were waiting to join and they sent no Join in time.
        self.refused_floods = 0
        #: The join gate of the shared addresses; each seat listener has its own.
        self._gate = _Gate()
        #: Streams refused anywhere (shared or seat sockets), and rate-limited ones:
        #: while it moves, the referee is busy with churn (seats read it for their lag).
        self.churn = 0

    def register(self, match: _Match) -> None:
        self.matches.append(match)
        for seat in match.seats:
            self._by_token[seat.token] = (match, seat)
            seat.churn_seen = self.churn_seen

    def churn_seen(self) -> int:
        """How many streams the referee has refused so far (any listener)."""
        return self.churn

    def live(self, seat: RemoteSeat) -> bool:
        """True while ``seat``'s match is registered (its token joins)."""
        entry = self._by_token.get(seat.token)
        return entry is not None and entry[1] is seat

    def unregister(self, match: _Match) -> None:
        if match in self.matches:
            self.matches.remove(match)
        for seat in match.seats:
            self._by_token.pop(seat.token, None)

    async def _refuse(
        self, context: grpc.aio.ServicerContext, code: grpc.StatusCode, why: str, gate: _Gate | None = None,
        event: str = "stream_refused",
    ) -> None:  # fmt: skip
        """End a stream that did not join; on a seat's own socket it is charged to that seat (as ``event``)."""
        self.refusals.append((code.name, why))
        self.refused += 1
        self.charge(gate, f"{code.name}: {why}", event)
        await context.abort(code, why)

    def charge(self, gate: _Gate | None, detail: str, event: str = "stream_refused") -> None:
        """A stream was refused (``detail``: why); on a seat's own socket (``gate``) it is that seat's.

        ``event``: its code in the seat's events: ``join_refused`` for a stream
        after the seat's Welcome (joining again), ``stream_refused`` for any other.
        """
        self.churn += 1
        if gate is not None and gate.guard is not None:
            gate.guard.charge(f"on seat {gate.guard.seat.seat}'s socket: {detail}", event)

    async def Play(self, request_iterator: object, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        await self.play(request_iterator, context, self._gate)

    async def play(self, request_iterator: object, context: grpc.aio.ServicerContext, gate: _Gate) -> None:
        """One ``Play`` stream, admitted by ``gate`` (the listener it came in on)."""
        if await self._refused_again(context, gate):
            return
        join = await self._read_join(context, gate)
        if join is None:
            return
        admitted = await self._admit(context, gate, join)
        if admitted is None:
            return
        match, seat = admitted
        seat.attach(context.write, join.bot_name[:NAME_LIMIT] or f"seat{seat.seat}", join.bot_version[:NAME_LIMIT])
        seat.post(pb.RefereeMessage(welcome=match.welcome(seat)))
        reader = asyncio.ensure_future(self._read(context, seat))
        closed = asyncio.ensure_future(seat.closed.wait())
        try:
            await asyncio.wait({reader, closed}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            seat.mark_lost("disconnect", "the stream was cancelled")
            raise
        finally:
            for task in (reader, closed):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            # Whatever the bot has not taken by now is abandoned (a write held
            # by its flow control must not keep the stream, or the table, open).
            seat.stop_writing()
        lost = seat.lost()
        if lost is not None and lost.reason in _ABORT_STATUS:
            await context.abort(_ABORT_STATUS[lost.reason], lost.detail)

    async def _refused_again(self, context: grpc.aio.ServicerContext, gate: _Gate) -> bool:
        """Whether the stream came on a seat's own socket after its Welcome: then it has been refused."""
        guard = gate.guard
        if guard is None or not (guard.seat.joined.is_set() or guard.seat.lost() is not None) or not guard.live():
            return False
        # A seat has one stream: any other on its own socket after its Welcome is
        # refused whatever it sends (it cannot become the seat's) and charged to it.
        why = f"seat {guard.seat.seat} has already joined this match (one stream per seat)"
        # Its first message is taken (briefly) before the answer: a grpc.aio client
        # whose write is still in flight when the status arrives reports INTERNAL
        # instead of the referee's status (grpc/grpc#36066), and the bot must read
        # why it was refused.  A stream that sends nothing waits REFUSAL_DRAIN_S.
        with contextlib.suppress(Exception):  # a timeout, garbage, a reset: refused all the same
            await asyncio.wait_for(context.read(), REFUSAL_DRAIN_S)
        await self._refuse(context, grpc.StatusCode.ALREADY_EXISTS, why, gate, "join_refused")
        return True

    async def _read_join(self, context: grpc.aio.ServicerContext, gate: _Gate) -> pb.Join | None:
        """The stream's first message, a Join in this protocol's version; None when the stream was refused."""
        # The token decides, not the count: every stream's first message is
        # read, and only how long a stream may take to send it depends on how
        # many are waiting (a flood's streams cannot crowd out a valid Join).
        patient = gate.pending < MAX_PENDING_JOINS
        if patient:
            gate.pending += 1
        try:
            first = await asyncio.wait_for(context.read(), JOIN_TIMEOUT_S if patient else CROWDED_JOIN_TIMEOUT_S)
        except TimeoutError:
            if not patient:
                # Counted, not listed: a flood must not push real refusals out of the list.
                self.refused_floods += 1
                self.charge(gate, "RESOURCE_EXHAUSTED: too many streams waiting to join")
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many streams waiting to join")
                return None
            await self._refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED, "no Join within the join timeout", gate)
            return None
        except asyncio.CancelledError:
            self.charge(gate, "CANCELLED: the stream was reset before its Join")
            raise
        except Exception as exc:  # an unparsable first message (garbage bytes)
            await self._refuse(
                context, grpc.StatusCode.INVALID_ARGUMENT,
                f"the first message must be Join ({type(exc).__name__})", gate,
            )  # fmt: skip
            return None
        finally:
            if patient:
                gate.pending -= 1
        if first is grpc.aio.EOF or first.WhichOneof("message") != "join":
            # (EOF: also a stream reset before its Join.)
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Join", gate)
            return None
        join: pb.Join = first.join
        if join.protocol_version != PROTOCOL_VERSION:
            await self._refuse(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {join.protocol_version} is not supported; this referee speaks {PROTOCOL_VERSION}",
                gate,
            )
            return None
        return join

    async def _admit(
        self, context: grpc.aio.ServicerContext, gate: _Gate, join: pb.Join
    ) -> tuple[_Match, RemoteSeat] | None:
        """The match and seat ``join``'s token names, if this socket may serve it and it has not joined; else None (refused)."""
        entry = self._by_token.get(join.token)
        if entry is None:
            await self._refuse(context, grpc.StatusCode.UNAUTHENTICATED, "unknown or expired seat token", gate)
            return None
        match, seat = entry
        if gate.seat is not None and seat is not gate.seat:
            # Charged to the socket's own seat: only its container sees this socket (local
            # processes are not isolated from each other: docs/protocol.md "Connection").
            await self._refuse(
                context, grpc.StatusCode.PERMISSION_DENIED, f"this socket serves seat {gate.seat.seat} only", gate
            )
            return None
        if seat.joined.is_set() or seat.lost() is not None:
            why = f"seat {seat.seat} has already joined this match"
            if gate.guard is not None:  # (its seat's own socket: charged once, by the guard)
                await self._refuse(context, grpc.StatusCode.ALREADY_EXISTS, why, gate, "join_refused")
                return None
            seat.refuse_join(f"a second Join with seat {seat.seat}'s token")
            await self._refuse(context, grpc.StatusCode.ALREADY_EXISTS, why)
            return None
        return match, seat

    async def _read(self, context: grpc.aio.ServicerContext, seat: RemoteSeat) -> None:
        while True:
            try:
                message = await context.read()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                seat.mark_lost("protocol", f"unreadable message: {type(exc).__name__}: {exc}")
                return
            if message is grpc.aio.EOF:
                if not seat.closed.is_set():
                    # gRPC ends a stream the same way when the bot closes it and when it
                    # resets it for a message over the receive limit: say both.
                    limit = MAX_MESSAGE_BYTES >> 10
                    seat.mark_lost(
                        "disconnect",
                        f"the stream ended: closed by the bot, or reset for a message over {limit} KiB",
                    )
                return
            seat.receive(message)


class RefereeServer:
    """A running gRPC referee: ``await RefereeServer.start([...addresses])``."""

    def __init__(self, max_connections: int = MAX_CONNECTIONS) -> None:
        self.service = RefereeService()
        self.max_connections = max_connections
        self.health = health.aio.HealthServicer() if hasattr(health, "aio") else health.HealthServicer()
        self._servers: list[grpc.aio.Server] = []
        #: The shared addresses (any seat's token); seat listeners are in ``seat_addresses``.
        self.addresses: list[str] = []
        self.seat_addresses: dict[int, str] = {}
        #: Each seat listener's books (``seat_guard``), the CPU watch over them, and
        #: the listeners being closed because their seat was cut.
        self.guards: list[SeatGuard] = []
        self.cpu_watch = CpuWatch(lambda: self.guards)
        self._watching: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()

    async def start(self, addresses: Sequence[str]) -> RefereeServer:
        """Bind ``addresses`` (``unix:/path`` or ``127.0.0.1:PORT``; port 0 picks one) and serve.

        No addresses: serve only on seat listeners added later (``add_seat_listener``).
        """
        if addresses:
            self.addresses.extend(await self._serve(addresses, self.service, self.max_connections))
        await _set_serving(self.health)
        tune_gc()
        return self

    async def add_seat_listener(
        self, address: str, seat: RemoteSeat, max_connections: int = SEAT_MAX_CONNECTIONS
    ) -> str:
        """Serve ``seat`` alone on ``address``: its own gRPC server and connection cap; the bound address.

        Only ``seat``'s token joins there, so what its bot does to the socket
        (a flood of connections) costs no other seat its join, and every
        stream there that does not become the seat's is charged to the seat
        (``seat_guard``).
        """
        guard = SeatGuard(seat, self.service.live)
        gate = _Gate(guard)
        servers: list[grpc.aio.Server] = []
        (bound,) = await self._serve(
            [address], _SeatServicer(self.service, gate), max_connections,
            interceptors=[GuardInterceptor(guard, lambda detail: self.service.charge(gate, detail))], started=servers,
        )  # fmt: skip
        guard.bind(lambda: self._close(servers[0]))
        self.guards.append(guard)
        self.seat_addresses[seat.seat] = bound
        if self._watching is None:
            self._watching = asyncio.ensure_future(self.cpu_watch.run())
        return bound

    def _close(self, server: grpc.aio.Server) -> None:
        """Stop one listener (a seat's, cut) without waiting here."""
        if server in self._servers:
            self._servers.remove(server)
            task = asyncio.ensure_future(server.stop(CUT_GRACE_S))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def _serve(
        self, addresses: Sequence[str], servicer: object, max_connections: int,
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (), started: list[grpc.aio.Server] | None = None,
    ) -> list[str]:  # fmt: skip
        server = grpc.aio.server(options=server_options(max_connections), interceptors=list(interceptors) or None)
        pb_grpc.add_RefereeServicer_to_server(servicer, server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        bound = []
        try:
            for address in addresses:
                port = server.add_insecure_port(address)
                if address.rsplit(":", 1)[-1] == "0" and not address.startswith("unix:"):
                    address = f"{address.rsplit(':', 1)[0]}:{port}"
                bound.append(address)
            await server.start()
        except BaseException:
            await server.stop(None)
            raise
        self._servers.append(server)
        if started is not None:
            started.append(server)
        return bound

    def add_match(
        self, match_id: str, rules: Ruleset, time_control: TimeControl, games: int,
        seats: Sequence[RemoteSeat],
    ) -> _Match:  # fmt: skip
        """Open the seats of a match for joining (their tokens become valid)."""
        match = _Match(match_id, rules, time_control, games, seats)
        self.service.register(match)
        return match

    def remove_match(self, match: _Match) -> None:
        """Close a match: its tokens are no longer accepted."""
        self.service.unregister(match)

    async def stop(self, grace: float = 1.0) -> None:
        """Stop serving.  Games still in progress become void (the platform's fault, not the bots')."""
        for match in list(self.service.matches):
            for seat in match.seats:
                seat.platform_failed("the referee stopped")
        if self._watching is not None:
            self._watching.cancel()
            self._watching = None
        servers, self._servers = self._servers, []
        await asyncio.gather(*(server.stop(grace) for server in servers), *self._closing)


_gc_tuned = False


def tune_gc() -> None:
    """Process-wide collector tuning for a referee process; only the first call does anything.

    A full collection in the middle of a decision would be charged to a bot's
    clock: keep start-up objects out of the collector's way (``gc.freeze``)
    and collect young objects less often.  Done once per process (the entry
    point, or the first referee started): freezing again at every table
    would keep each table's garbage for good.
    """
    global _gc_tuned
    if _gc_tuned:
        return
    _gc_tuned = True
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


async def _set_serving(servicer: object) -> None:
    result = servicer.set("", health_pb2.HealthCheckResponse.SERVING)  # type: ignore[attr-defined]
    if asyncio.iscoroutine(result):
        await result
