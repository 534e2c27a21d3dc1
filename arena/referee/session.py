"""One seat's session: the match loop's :class:`~arena.match.Seat` on one gRPC stream.

The match loop calls :meth:`RemoteSeat.decide`; the request goes out on the
stream at once and the answer comes back through :meth:`RemoteSeat.receive`,
called by the stream's reader.  No thread is crossed on the way: both run on
the server's event loop.
"""

from __future__ import annotations

import asyncio
import collections
import secrets
import time
from collections.abc import Callable
from typing import Any

from arena_sdk.bot import NOTE_MAX_CHARS
from arena_sdk.engine import GameResult, HandResult, MalformedInputError, Ruleset
from arena_sdk.engine.state import Trick
from arena_sdk.protocol import (
    ANSWER_FIELD,
    KIND_FROM_PROTO,
    answer_from_proto,
    game_end_message,
    game_start_message,
    hand_end_message,
    request_message,
)
from arena_sdk.wire import arena_pb2 as pb

from arena.match.seat import (
    DecisionPrompt,
    DecisionTimeout,
    PlatformFault,
    RunningBot,
    SeatEvent,
    SeatLost,
    SeatReply,
)

#: Notes a seat's answers may carry in one game (one per decision is about 60 a hand); the
#: rest are dropped and counted once as a ``notes_dropped`` event: a flood is the seat's own loss.
NOTES_PER_GAME = 1000
_NOTE_DROP = dict.fromkeys(
    [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)


def clean_note(text: str) -> str:
    """A bot's note as the record keeps it: no control or bidi characters, at most NOTE_MAX_CHARS."""
    return text.translate(_NOTE_DROP)[:NOTE_MAX_CHARS]


#: Refused messages (stale, out of turn) a seat may send in one game before
#: that counts as a protocol violation: it stops floods without punishing a
#: bot that answered a little late a few times.
MAX_REFUSED_PER_GAME = 50
#: How long a seat whose stream broke is watched for its process exiting,
#: to tell a crash from a disconnect.  A process may say it needs longer
#: (``exit_grace_s``): a container's exit is seen through the Docker daemon,
#: which on a loaded machine takes well over half a second.
CRASH_GRACE_S = 0.5
#: Messages a seat may leave unread (queued behind a write its flow control
#: holds back) before it counts as not taking its messages.
MAX_UNSENT = 64
#: How long the last messages of a match (MatchEnd) may take to go out
#: before the stream is closed anyway.
END_FLUSH_S = 2.0
#: While a decision is open the referee checks its own event loop this
#: often: a check that runs late reveals a stall of the referee (the
#: platform); that time is added to the bot's, never charged to it.
LAG_TICK_S = 0.02
#: Lateness of a check below this is ordinary scheduling noise, not a stall
#: (and not worth crediting: a bot that keeps every core busy delays the
#: referee a little too, and must not earn time by it).
LAG_TOLERANCE_S = 0.02
#: While a decision is open and the referee refuses streams (churn on some
#: socket), the referee process's CPU time beyond this is taken as its own
#: backlog: answers and ticks wait behind that work, so it is lag (the
#: platform's time, added to the seat's), even when no single tick ran late.
CHURN_CPU_TOLERANCE_S = 0.005
#: What a RunningBot says of a process that exited with status 0.
CLEAN_EXIT = "exited with code 0"
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

    def __init__(
        self, seat: int, match_id: str, token: str | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """``clock``: what requests, answers and deadlines are timed by; pass the match
        loop's (``Clock.now``) when it is not the real one, so that both judge by one clock."""
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
        self._notes_this_game = 0
        self._refused_unlisted = 0
        self._timed_out: set[int] = set()
        # Outgoing messages go through one writer task per seat, so that no
        # write ever blocks the match loop: a bot that grants no flow-control
        # window holds back only its own messages.
        self._outbox: collections.deque[pb.RefereeMessage] = collections.deque()
        self._queued = 0
        self._sent = 0
        self._writer: asyncio.Task[None] | None = None
        self._inline: asyncio.Task[Any] | None = None
        self._inline_expired = False
        self._platform: PlatformFault | None = None
        # The open decision's deadline (loop time) and the referee's own
        # stalls measured while it was open.
        self._deadline = 0.0
        self._tick_due = 0.0
        self._checked = 0.0
        self._lag = 0.0
        # The referee's CPU and its count of refused streams when the decision
        # opened, and the backlog lag they showed (see CHURN_CPU_TOLERANCE_S).
        self._churn_mark = 0
        self._cpu_mark = 0.0
        self._backlog = 0.0
        self._received_at: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due = 0.0  # when the running timer fires (it may serve several decisions)
        self._clock = clock
        # The event loop's timers run on time.monotonic: with that clock a
        # deadline can be handed to call_at as it is (no clock read to convert).
        self._loop_clock = clock is time.monotonic
        # The bot's CPU clock (its process or container), read around each decision.
        self._cpu: Callable[[], float | None] | None = None
        self._cpu_start: float | None = None
        self._cpu_used: float | None = None
        # Under the CPU clock, the CPU seconds the open decision may use (polled by the tick).
        self._cpu_limit: float | None = None
        # Off-turn CPU (docs/time-control.md): the latest meter reading, where (wall, CPU) the span
        # the seat is not asked began (its answer, the game's start; None while it is asked, and
        # after a timeout until its late answer: it is still on that decision), and the span that
        # ended at the open request (its CPU None where not measured).
        self._cpu_now: float | None = None
        self._idle_from: tuple[float, float | None] | None = None
        self._offturn: tuple[float | None, float] = (None, 0.0)
        #: Set by the match host: the bot's process or container, to tell a
        #: crash from a disconnect.
        self.process: RunningBot | None = None
        #: Set by the referee: which seat (if any) a request id was issued to.
        self.owner_of_request: Callable[[int], int | None] = lambda rid: None
        #: Set by the referee: how many streams it has refused so far (churn it works through).
        self.churn_seen: Callable[[], int] = lambda: 0
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
        """Queue one message for the bot; never waits for the bot to take it."""
        self.post(message)

    def post(self, message: pb.RefereeMessage) -> int:
        """Queue ``message``; returns its sequence number (0 if the seat takes no more messages).

        A seat whose queue holds more than :data:`MAX_UNSENT` messages does not
        take its messages (its flow-control window stays shut): it is lost
        (``timeout``), and only its own games are forfeited.
        """
        if self._write is None or self._lost is not None or self.closed.is_set():
            return 0
        if self.transcript is not None:
            self.transcript.append(message)  # in wire order
        self._outbox.append(message)
        self._queued += 1
        if len(self._outbox) > MAX_UNSENT:
            self.mark_lost("timeout", f"took none of its last {MAX_UNSENT} messages (flow control held)")
            return 0
        if self._writer is None and self._inline is None:  # (an inline write starts it when done)
            self._writer = asyncio.ensure_future(self._drain())
        return self._queued

    async def _drain(self) -> None:
        """Write queued messages in order (the seat's only writer)."""
        try:
            outbox = self._outbox
            write = self._write
            assert write is not None
            while outbox:
                await write(outbox[0])
                outbox.popleft()
                self._sent += 1
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream is gone (reset, cancelled, closed)
            self._outbox.clear()
            self.mark_lost("disconnect", f"could not send: {type(exc).__name__}")
        finally:
            self._writer = None

    def unsent(self) -> int:
        """Messages queued and not yet taken by the bot's transport."""
        return len(self._outbox)

    def stop_writing(self) -> None:
        """Abandon the messages the bot did not take (its stream is being closed)."""
        self._outbox.clear()
        writer = self._writer
        if writer is not None:
            writer.cancel()

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
            # Stamped on receipt: the answer is judged by when it arrived, not
            # by when the match loop gets round to it.
            now = self._received_at = self._clock()
            self._cpu_used = self._cpu_since_request()
            # Its off-turn span starts here, from the reading just taken (no extra read).
            self._idle_from = (now, self._cpu_now if self._cpu_used is not None else None)
            late = now - self._checked - LAG_TICK_S
            if late > LAG_TOLERANCE_S:
                # The loop stalled since the timer last ran (the answer may have
                # waited in the transport meanwhile): the platform's time.
                self._lag += late
            self._note_backlog()
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
        if rid in self._timed_out:
            # A slow bot's answer to a request that timed out: the strike was
            # its price; it is recorded, and is no flood.
            self._timed_out.discard(rid)
            if self._pending is None and self._idle_from is None:
                self._open_idle()  # done with its late decision: not asked from here on
            self._refuse("stale_answer", f"late answer to request {rid}, which timed out", rid, counts=False)
        elif rid in self._answered or owner == self.seat:
            self._refuse("stale_answer", f"answer to request {rid}, which is closed", rid)
        else:
            self._refuse("out_of_turn", f"answer to request {rid}, which was never sent", rid)

    def _cpu_since_request(self) -> float | None:
        """The bot's CPU time since the open request was sent (None where it cannot be measured)."""
        start, cpu = self._cpu_start, self._cpu
        if start is None or cpu is None:
            return None
        now = self._cpu_now = cpu()
        return None if now is None else max(0.0, now - start)

    def _open_idle(self) -> None:
        """Start an off-turn span now (the game's start, a late answer): one meter read."""
        cpu = self._cpu = getattr(self.process, "cpu_seconds", None)  # a CpuMeter (arena.match.seat)
        self._idle_from = (self._clock(), cpu() if cpu is not None else None)

    def offturn_tail(self) -> tuple[float | None, float]:
        """``(cpu_s, wall_s)`` since the seat's last answer of the game ((None, 0.0): not measured).

        Called by the match loop when the game is over (:class:`arena.match.seat.OffTurnMeter`);
        it closes the span, so the time between games counts nowhere.
        """
        idle, self._idle_from = self._idle_from, None
        cpu = self._cpu
        if idle is None or idle[1] is None or cpu is None or self._pending is not None:
            return None, 0.0
        now = cpu()
        if now is None:
            return None, 0.0
        return max(0.0, now - idle[1]), max(0.0, self._clock() - idle[0])

    def _note_backlog(self) -> None:
        """While streams are being refused, the referee's CPU since the decision opened is its backlog."""
        if self.churn_seen() != self._churn_mark:
            backlog = time.process_time() - self._cpu_mark - CHURN_CPU_TOLERANCE_S
            self._backlog = max(self._backlog, backlog)

    def _platform_lag(self) -> float:
        """The open decision's platform time: the loop's stalls, or the churn backlog if larger."""
        return max(self._lag, self._backlog)

    def _reply(self, kind: Any, answer: pb.Answer) -> SeatReply:
        raw = describe_answer(answer)
        received = self._received_at
        lag = self._platform_lag()
        cpu = self._cpu_used
        note = self._take_note(answer.note)
        try:
            action = answer_from_proto(kind, answer)
        except MalformedInputError as exc:
            return SeatReply(
                malformed=str(exc), raw=raw, think_us=answer.think_time_us,
                received_at=received, platform_lag_s=lag, cpu_s=cpu, note=note,
                offturn_cpu_s=self._offturn[0], offturn_s=self._offturn[1],
            )  # fmt: skip
        return SeatReply(
            action=action, raw=raw, think_us=answer.think_time_us, received_at=received,
            platform_lag_s=lag, cpu_s=cpu, note=note, offturn_cpu_s=self._offturn[0], offturn_s=self._offturn[1],
        )  # fmt: skip

    def _take_note(self, text: str) -> str:
        """The answer's note, cleaned and capped; past the game's budget dropped and counted once."""
        if not text:
            return ""
        if self._notes_this_game >= NOTES_PER_GAME:
            if self._notes_this_game == NOTES_PER_GAME:
                self._events.append(SeatEvent(self.seat, "notes_dropped", f"more than {NOTES_PER_GAME} notes in a game"))
            self._notes_this_game += 1
            return ""
        self._notes_this_game += 1
        return clean_note(text)

    def _refuse(self, code: str, detail: str, rid: int, *, counts: bool = True) -> None:
        if counts:
            self._refused_this_game += 1
        if self._refused_this_game > MAX_REFUSED_PER_GAME + 1:
            # Counted, not listed: a flood must not fill the record.
            self._refused_unlisted += 1
            return
        self._events.append(SeatEvent(self.seat, code, detail, rid))
        if self._refused_this_game > MAX_REFUSED_PER_GAME:
            self.mark_lost("protocol", f"more than {MAX_REFUSED_PER_GAME} refused messages in one game")
            return
        self.post(_notice(pb.Notice.INFO, code, detail, rid))

    def refuse_join(self, detail: str) -> None:
        """Another stream tried to join as this seat (a reconnect, a copied token): refused, recorded.

        It counts as a refused message, so a stream of joins ends in a protocol forfeit.
        """
        self._refuse("join_refused", detail, 0)

    def refuse_stream(self, code: str, detail: str) -> None:
        """A stream on this seat's own socket was refused (``code``: ``join_refused`` after the
        seat's Welcome, else ``stream_refused``): recorded, and counted as a refused message."""
        self._refuse(code, detail, 0)

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
        if self._refused_unlisted:
            events.append(
                SeatEvent(self.seat, "refused_unlisted", f"{self._refused_unlisted} more refused messages, not listed")
            )
            self._refused_unlisted = 0
        return events

    async def decide(self, prompt: DecisionPrompt, timeout: float) -> SeatReply:
        if self._platform is not None:
            raise self._platform
        if self._lost is not None:
            raise await self._classified(self._lost)
        loop = asyncio.get_running_loop()
        rid = prompt.request_id
        future: asyncio.Future[SeatReply] = loop.create_future()
        self._pending = (rid, prompt.view.decision, future)
        self._received_at = None
        self._lag = 0.0
        self._backlog = 0.0
        self._churn_mark = self.churn_seen()
        self._cpu_mark = time.process_time()
        cpu = self._cpu = getattr(self.process, "cpu_seconds", None)  # a CpuMeter (arena.match.seat)
        self._cpu_start = cpu() if cpu is not None else None
        self._cpu_used = None
        self._cpu_limit = prompt.cpu_limit_s
        if self._cpu_limit is not None and self._cpu_start is None:
            # The CPU clock, but this seat's CPU cannot be read: it is charged
            # wall time (never less), so its wait ends at the allowance.
            timeout = min(timeout, self._cpu_limit)
            self._cpu_limit = None
        # The seat's clock runs from here: a request its transport has not
        # taken yet is still its time.
        now = self._clock()  # by default the event loop's own clock (loop.time()), read directly
        # The span it was not asked ends here: its CPU from the readings at its last answer and now.
        idle, self._idle_from = self._idle_from, None
        if idle is not None and idle[1] is not None and self._cpu_start is not None:
            self._offturn = (max(0.0, self._cpu_start - idle[1]), max(0.0, now - idle[0]))
        else:
            self._offturn = (None, 0.0)
        self._checked = now
        self._deadline = now + timeout
        due = self._tick_due = now + min(timeout, LAG_TICK_S)  # when this decision is first checked
        timer = self._timer
        # The seat's tick keeps running from one decision to the next (no timer
        # made and cancelled per decision); a new one only when none is due in time.
        # One that comes early only checks early: lateness counts from _tick_due.
        if timer is None or self._timer_due > due:
            if timer is not None:
                timer.cancel()
            self._timer_due = due
            self._timer = self._call_at(loop, due, now)
        message = request_message(rid, prompt.view, prompt.move_ms, prompt.bank_ms, prompt.allowed_ms)
        seq = 0
        try:
            if self._writer is None and not self._outbox and self._write is not None and self._lost is None:
                seq = await self._write_inline(message)
            else:
                seq = self.post(message)  # behind queued messages, in order
            return await future
        except SeatLost as lost:
            raise await self._classified(lost) from None
        except DecisionTimeout as timeout_:
            timeout_.cpu_s = self._cpu_since_request()
            timeout_.offturn_cpu_s, timeout_.offturn_s = self._offturn
            self._timed_out.add(rid)
            if seq and self._sent < seq:
                self.mark_lost(
                    "timeout", f"did not take its messages: request {rid} still unsent after {timeout:.3f} s"
                )
            raise
        finally:
            if self._pending is not None and self._pending[0] == rid:
                self._pending = None
                self._answered.add(rid)

    async def _write_inline(self, message: pb.RefereeMessage) -> int:
        """Write a request with nothing queued ahead of it, here (no task per decision).

        The decision's timer interrupts a write the bot's transport holds back
        (:meth:`_tick`); messages queued meanwhile go out after it.  Returns
        the message's sequence number.
        """
        assert self._write is not None
        if self.transcript is not None:
            self.transcript.append(message)
        self._queued += 1
        seq = self._queued
        task = self._inline = asyncio.current_task()
        try:
            await self._write(message)
            self._sent += 1
        except asyncio.CancelledError:
            if not self._inline_expired:
                raise
            if task is not None:
                task.uncancel()  # our own interruption: the decision timed out
        except Exception as exc:  # the stream is gone (reset, cancelled, closed)
            self.mark_lost("disconnect", f"could not send: {type(exc).__name__}")
        finally:
            self._inline = None
            self._inline_expired = False
        if self._outbox and self._writer is None and self._lost is None:
            self._writer = asyncio.ensure_future(self._drain())
        return seq

    def _tick(self) -> None:
        """The seat's timer while a decision is open: expire it, unless the referee itself stalled.

        A tick that runs late means the referee's loop was held up (the
        platform's fault): that time is added to the deadline and recorded.
        With no decision open the ticks stop (the next decision starts them).
        """
        pending = self._pending
        if pending is None or pending[2].done():
            self._timer = None
            return
        future = pending[2]
        loop = future.get_loop()
        now = self._clock()
        late = now - self._tick_due  # (never due before the decision opened: decide sets it)
        if late > LAG_TOLERANCE_S:
            self._lag += late  # the loop could not run when it should have
        self._checked = now
        self._note_backlog()
        lag = self._platform_lag()
        deadline = self._deadline + lag
        if now >= deadline or self._cpu_over():
            future.set_exception(DecisionTimeout(lag))
            if self._inline is not None:  # the request itself is held back: stop waiting for it
                self._inline_expired = True
                self._inline.cancel()
            self._timer = None
            return
        self._tick_due = self._timer_due = min(now + LAG_TICK_S, deadline)
        self._timer = self._call_at(loop, self._tick_due, now)

    def _cpu_over(self) -> bool:
        """Under the CPU clock: the open decision has used more CPU than it may (struck at once,
        not at the wall hard cap).  The referee's own stalls do not count here: they are not the bot's CPU."""
        limit = self._cpu_limit
        if limit is None:
            return False
        used = self._cpu_since_request()
        return used is not None and used > limit

    def _call_at(self, loop: asyncio.AbstractEventLoop, due: float, now: float) -> asyncio.TimerHandle:
        """Run the seat's tick at ``due`` on the seat's clock (``now`` is that clock's time)."""
        if self._loop_clock:
            return loop.call_at(due, self._tick)
        return loop.call_later(due - now, self._tick)

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
        deadline = loop.time() + getattr(process, "exit_grace_s", CRASH_GRACE_S)
        while loop.time() < deadline:
            if process.exited():
                fault = await platform_fault_of(process)
                if fault is not None:
                    self.platform_failed(fault)
                    assert self._platform is not None
                    return self._platform
                detail = await process.exit_detail()
                if detail == CLEAN_EXIT:
                    # The bot ended its stream and left cleanly (e.g. after the
                    # referee reset it for a message over the limit): a disconnect.
                    return lost
                self._lost = SeatLost("crash", detail)
                self._events.append(SeatEvent(self.seat, "lost:crash", self._lost.detail))
                return self._lost
            await asyncio.sleep(0.02)
        return lost

    async def start_game(
        self, index: int, game_id: str, bot_seed: int, first: int,
        scores: tuple[int, ...], bags: tuple[int, ...],
    ) -> None:  # fmt: skip
        self._refused_this_game = 0
        self._notes_this_game = 0
        self._open_idle()
        await self.send(game_start_message(index, game_id, bot_seed, first, scores, bags))

    async def end_hand(self, hand: HandResult, tricks: tuple[Trick, ...], rules: Ruleset) -> None:
        await self.send(hand_end_message(hand, tricks, rules.players))

    async def end_game(
        self, index: int, game_id: str, ending: str, winner: int | None,
        result: GameResult | None, scores: tuple[int, ...], bags: tuple[int, ...],
    ) -> None:  # fmt: skip
        await self.send(game_end_message(index, game_id, ending, winner, scores, bags))

    async def notice(self, level: str, code: str, message: str, request_id: int = 0) -> None:
        self.post(_notice(_LEVELS.get(level, pb.Notice.INFO), code, message, request_id))

    async def end_match(self, reason: str) -> None:
        """Say goodbye and let the stream close with OK (once the bot has taken its last messages)."""
        self.post(pb.RefereeMessage(match_end=pb.MatchEnd(match_id=self.match_id, reason=reason)))
        writer = self._writer
        if writer is not None:
            # Bounded: a bot that takes nothing more only loses its goodbye.
            await asyncio.wait({writer}, timeout=END_FLUSH_S)
        self.closed.set()


_LEVELS = {"info": pb.Notice.INFO, "strike": pb.Notice.STRIKE, "forfeit": pb.Notice.FORFEIT}


def _notice(level: int, code: str, message: str, request_id: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(
        notice=pb.Notice(level=level, code=code, message=message[:500], request_id=request_id)  # type: ignore[arg-type]
    )


__all__ = ["ANSWER_FIELD", "KIND_FROM_PROTO", "RemoteSeat", "describe_answer", "new_token"]
