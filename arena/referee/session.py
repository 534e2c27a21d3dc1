"""One seat's session: the match loop's :class:`~arena.match.Seat` on one gRPC stream.

The match loop calls :meth:`RemoteSeat.decide`; the request goes out on the
stream at once and the answer comes back through :meth:`RemoteSeat.receive`,
called by the stream's reader.  No thread is crossed on the way: both run on
the server's event loop.
"""

from __future__ import annotations

import asyncio
import functools
import json
import secrets
from collections.abc import Callable
from typing import Any

from arena.match.seat import (
    DecisionPrompt,
    PlatformFault,
    RunningBot,
    SeatEvent,
    SeatLost,
    SeatReply,
)
from arena_sdk.engine import GameResult, HandResult, MalformedInputError, Ruleset
from arena_sdk.engine.record import hand_result_to_json
from arena_sdk.engine.state import Trick
from arena_sdk.protocol import (
    ANSWER_FIELD,
    KIND_FROM_PROTO,
    answer_from_proto,
    request_message,
    trick_to_proto,
)
from arena_sdk.wire import arena_pb2 as pb

#: Refused messages (stale, out of turn) a seat may send in one game before
#: that counts as a protocol violation: it stops floods without punishing a
#: bot that answered a little late a few times.
MAX_REFUSED_PER_GAME = 50
#: How long a seat whose stream broke is watched for its process exiting,
#: to tell a crash from a disconnect.
CRASH_GRACE_S = 0.5
#: Losses a platform failure causes (a stream broken, not yet put down to
#: the bot): when the platform is found to have failed, they become its fault.
PLATFORM_CAUSABLE = frozenset({"disconnect"})

Writer = Callable[[pb.RefereeMessage], Any]


async def platform_fault_of(process: RunningBot) -> str | None:
    """Why the platform ended ``process`` (e.g. the Docker daemon stopped), or None: the bot did."""
    check = getattr(process, "platform_fault", None)  # containers can tell; local processes cannot
    return await check() if check is not None else None


def new_token() -> str:
    """An unguessable per-seat secret."""
    return secrets.token_urlsafe(24)


def describe_answer(answer: pb.Answer) -> str:
    """A short text form of an answer, for records."""
    field = answer.WhichOneof("action")
    if field is None:
        return "no action"
    if field == "exchange":
        return "exchange " + ",".join(answer.exchange.cards)[:80]
    return f"{field} {getattr(answer, field)!s:.80}"


class RemoteSeat:
    """A seat played by a bot over a gRPC stream."""

    def __init__(self, seat: int, match_id: str, token: str | None = None) -> None:
        self.seat = seat
        self.match_id = match_id
        self.token = token or new_token()
        self.name = ""
        self.version = ""
        self.joined = asyncio.Event()
        self.closed = asyncio.Event()
        self._write: Writer | None = None
        self._pending: tuple[int, Any, asyncio.Future[SeatReply]] | None = None
        self._answered: set[int] = set()
        self._lost: SeatLost | None = None
        self._events: list[SeatEvent] = []
        self._refused_this_game = 0
        self._send_lock = asyncio.Lock()
        self._background: set[asyncio.Future[None]] = set()
        self._platform: PlatformFault | None = None
        #: Set by the match host: the bot's process or container, to tell a
        #: crash from a disconnect.
        self.process: RunningBot | None = None
        #: Set by the referee: which seat (if any) a request id was issued to.
        self.owner_of_request: Callable[[int], int | None] = lambda rid: None
        #: Every message written, when a test wants to inspect them.
        self.transcript: list[pb.RefereeMessage] | None = None

    # ------------------------------------------------------------ stream side

    def attach(self, write: Writer, name: str, version: str) -> None:
        """Bind the seat to a joined stream."""
        self._write = write
        self.name = name
        self.version = version
        self.joined.set()

    async def send(self, message: pb.RefereeMessage) -> None:
        """Write one message; a broken stream marks the seat lost."""
        if self._write is None or self._lost is not None or self.closed.is_set():
            return
        try:
            async with self._send_lock:  # notices may be sent while the match loop writes
                if self.transcript is not None:
                    self.transcript.append(message)  # in wire order
                await self._write(message)
        except Exception as exc:  # the stream is gone (reset, cancelled, closed)
            self.mark_lost("disconnect", f"could not send: {type(exc).__name__}")

    def receive(self, message: pb.BotMessage) -> None:
        """Handle one message from the bot (called by the stream reader)."""
        which = message.WhichOneof("message")
        if which != "answer":
            self.mark_lost("protocol", f"unexpected {which or 'empty'} message after join")
            return
        answer = message.answer
        rid = answer.request_id
        pending = self._pending
        if pending is not None and pending[0] == rid:
            _, kind, future = pending
            self._answered.add(rid)
            self._pending = None
            if not future.done():
                future.set_result(self._reply(kind, answer))
            return
        owner = self.owner_of_request(rid)
        if owner is not None and owner != self.seat:
            self.mark_lost("protocol", f"answered request {rid}, which was sent to seat {owner}")
            return
        if rid in self._answered or owner == self.seat:
            self._refuse("stale_answer", f"answer to request {rid}, which is closed", rid)
        else:
            self._refuse("out_of_turn", f"answer to request {rid}, which was never sent", rid)

    def _reply(self, kind: Any, answer: pb.Answer) -> SeatReply:
        raw = describe_answer(answer)
        try:
            action = answer_from_proto(kind, answer)
        except MalformedInputError as exc:
            return SeatReply(malformed=str(exc), raw=raw, think_us=answer.think_time_us)
        return SeatReply(action=action, raw=raw, think_us=answer.think_time_us)

    def _refuse(self, code: str, detail: str, rid: int) -> None:
        self._events.append(SeatEvent(self.seat, code, detail, rid))
        self._refused_this_game += 1
        if self._refused_this_game > MAX_REFUSED_PER_GAME:
            self.mark_lost("protocol", f"more than {MAX_REFUSED_PER_GAME} refused messages in one game")
            return
        task = asyncio.ensure_future(self.notice("info", code, detail, rid))
        self._background.add(task)  # keep a reference until it is sent
        task.add_done_callback(self._background.discard)

    def refuse_join(self, detail: str) -> None:
        """Another stream tried to join as this seat (a reconnect, a copied token): refused, recorded.

        It counts as a refused message, so a stream of joins ends in a protocol forfeit.
        """
        self._refuse("join_refused", detail, 0)

    def platform_failed(self, detail: str) -> None:
        """The platform (not the bot) failed: the game in progress is void, not forfeited.

        A seat whose stream broke and was not yet put down to its bot (what a
        platform failure does to every seat at once) is the platform's too; a
        crash or protocol violation already charged stays the bot's.
        """
        if self._platform is not None:
            return
        if self._lost is not None:
            if self._lost.reason not in PLATFORM_CAUSABLE:
                return
            self._lost = None
        self._platform = PlatformFault(detail)
        if self._pending is not None and not self._pending[2].done():
            self._pending[2].set_exception(self._platform)

    def mark_lost(self, reason: str, detail: str) -> None:
        """The seat is gone; a pending decision fails with :class:`SeatLost`."""
        if self._lost is not None or self._platform is not None:
            return  # a stream broken by the platform's own failure is not the bot's fault
        self._lost = SeatLost(reason, detail)
        self._events.append(SeatEvent(self.seat, f"lost:{reason}", detail))
        if self._pending is not None and not self._pending[2].done():
            self._pending[2].set_exception(self._lost)
        self.closed.set()

    # ------------------------------------------------------------ match side

    def lost(self) -> SeatLost | None:
        return self._lost

    def issued(self, request_id: int) -> bool:
        """True if ``request_id`` was sent to this seat."""
        return request_id in self._answered or (
            self._pending is not None and self._pending[0] == request_id
        )

    def take_events(self) -> list[SeatEvent]:
        events, self._events = self._events, []
        return events

    async def decide(self, prompt: DecisionPrompt, timeout: float) -> SeatReply:
        if self._platform is not None:
            raise self._platform
        if self._lost is not None:
            raise await self._classified(self._lost)
        loop = asyncio.get_running_loop()
        kind = prompt.view.decision
        future: asyncio.Future[SeatReply] = loop.create_future()
        self._pending = (prompt.request_id, kind, future)
        message = request_message(prompt.request_id, prompt.view, prompt.move_ms, prompt.bank_ms)
        timer = loop.call_later(timeout, _expire, future)
        try:
            await self.send(message)
            return await future
        except SeatLost as lost:
            raise await self._classified(lost) from None
        finally:
            timer.cancel()
            if self._pending is not None and self._pending[0] == prompt.request_id:
                self._pending = None
                self._answered.add(prompt.request_id)

    async def _classified(self, lost: SeatLost) -> SeatLost | PlatformFault:
        """A broken stream whose process has exited is a crash, not a disconnect.

        Unless the process ended through the platform (the Docker daemon
        stopping takes its containers with it): then the seat, and the game,
        are the platform's failure (:class:`PlatformFault`, the game is void).
        """
        process = self.process
        if lost.reason != "disconnect" or process is None:
            return lost
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CRASH_GRACE_S
        while loop.time() < deadline:
            if process.exited():
                fault = await platform_fault_of(process)
                if fault is not None:
                    self.platform_failed(fault)
                    assert self._platform is not None
                    return self._platform
                self._lost = SeatLost("crash", await process.exit_detail())
                self._events.append(SeatEvent(self.seat, "lost:crash", self._lost.detail))
                return self._lost
            await asyncio.sleep(0.02)
        return lost

    async def start_game(
        self, index: int, game_id: str, bot_seed: int, first: int,
        scores: tuple[int, ...], bags: tuple[int, ...],
    ) -> None:  # fmt: skip
        self._refused_this_game = 0
        await self.send(
            pb.RefereeMessage(
                game_start=pb.GameStart(
                    game_index=index, game_id=game_id, bot_seed=bot_seed, first=first,
                    scores=scores, bags=bags,
                )  # fmt: skip
            )
        )

    async def end_hand(self, hand: HandResult, tricks: tuple[Trick, ...], rules: Ruleset) -> None:
        await self.send(hand_end_message(hand, tricks, rules.players))

    async def end_game(
        self, index: int, game_id: str, ending: str, winner: int | None,
        result: GameResult | None, scores: tuple[int, ...], bags: tuple[int, ...],
    ) -> None:  # fmt: skip
        await self.send(
            pb.RefereeMessage(
                game_end=pb.GameEnd(
                    game_index=index, game_id=game_id, ending=ending,
                    winner=-1 if winner is None else winner, scores=scores, bags=bags,
                )  # fmt: skip
            )
        )

    async def notice(self, level: str, code: str, message: str, request_id: int = 0) -> None:
        levels = {"info": pb.Notice.INFO, "strike": pb.Notice.STRIKE, "forfeit": pb.Notice.FORFEIT}
        await self.send(
            pb.RefereeMessage(
                notice=pb.Notice(
                    level=levels.get(level, pb.Notice.INFO), code=code, message=message[:500],
                    request_id=request_id,
                )  # fmt: skip
            )
        )

    async def end_match(self, reason: str) -> None:
        """Say goodbye and let the stream close with OK."""
        await self.send(pb.RefereeMessage(match_end=pb.MatchEnd(match_id=self.match_id, reason=reason)))
        self.closed.set()


@functools.lru_cache(maxsize=8)
def hand_end_message(hand: HandResult, tricks: tuple[Trick, ...], players: int) -> pb.RefereeMessage:
    """The HandEnd message of a hand: built once, sent to every seat (never changed)."""
    result = hand_result_to_json(players, hand)
    return pb.RefereeMessage(
        hand_end=pb.HandEnd(
            hand_number=hand.number,
            result_json=json.dumps(result, separators=(",", ":")),
            tricks=[trick_to_proto(t) for t in tricks],
            scores=[t.score_after for t in hand.teams],
            bags=[t.bags_after for t in hand.teams],
        )
    )


def _expire(future: asyncio.Future[SeatReply]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


__all__ = ["ANSWER_FIELD", "KIND_FROM_PROTO", "RemoteSeat", "describe_answer", "new_token"]
