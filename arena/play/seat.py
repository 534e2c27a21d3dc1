"""The person's seat: a client of the referee's protocol that relays each decision to a page.

The referee cannot tell this seat from a bot's: :class:`HumanSeat` joins with
the seat's token over the seat's socket (``arena_sdk.client``'s channel
options), reads the same messages, and answers each ``DecisionRequest`` with an
``Answer``.  Between the two it waits for the person: the page (any number of
them, one at a time: :mod:`arena.play.web`) reads :attr:`HumanSeat.state` and
calls :meth:`HumanSeat.answer`.

Every answer from the page is checked here against the request's ``legal``
list before it goes out: an illegal card is refused with a message and the
same decision stays open, so the referee never sees it (no strike).  When the
person's time for a decision is about to run out (``allowed_ms`` less
:data:`AUTO_MARGIN_S`) the seat answers the protocol's default move for them,
in time: a person at the table is never struck or forfeited by the clock.  When
no page has been connected for ``reconnect_s`` while the seat is asked, the
seat answers that decision with the default move and a note saying why
(``Answer.note``: the record keeps it beside the decision), then leaves the
match (it closes its stream): the referee records the game as forfeited by
the person's side (``forfeit:disconnect``), which :attr:`HumanSeat.abandoned`
reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The SDK's client first: it picks gRPC's transport before grpc is imported (arena_sdk.transport).
from arena_sdk.client import CHANNEL_OPTIONS, grpc_target
from arena_sdk.engine import Decision, MalformedInputError, parse_card
from arena_sdk.protocol import KIND_FROM_PROTO, PROTOCOL_VERSION, answer_to_proto, parse_action_text
from arena_sdk.wire import arena_pb2 as pb
from arena_sdk.wire import arena_pb2_grpc as pb_grpc

import grpc  # noqa: E402

from arena.errors import ArenaError
from arena.play.words import SUIT_NAMES, card_words, describe

#: The seat answers the default move for the person this long before the referee's limit.
AUTO_MARGIN_S = 1.5
#: The default reconnect window: how long a seat that is asked waits for a page to come back.
DEFAULT_RECONNECT_S = 60.0
#: Before the first page has connected, the seat waits at least this long for one.
FIRST_PAGE_WAIT_S = 600.0
#: How long the seat waits for the referee's socket at the start.
CONNECT_TIMEOUT_S = 30.0
#: The name the seat joins with (records name the person's seat by it).
PERSON_NAME = "person"


class AnswerRefused(ArenaError, ValueError):
    """An answer from the page that cannot be sent: not open, not legal, not readable."""


@dataclasses.dataclass
class OpenDecision:
    """The decision the referee has asked the person and not yet had answered."""

    request_id: int
    kind: Decision
    legal: tuple[str, ...]
    view: pb.SeatView
    move_ms: int
    bank_ms: int
    allowed_ms: int
    asked_at: float
    """When it arrived, on :func:`time.monotonic`."""
    answer: asyncio.Future[pb.Answer]
    request: pb.DecisionRequest | None = None
    """The referee's request itself (a hint asks Hard exactly this)."""


@dataclasses.dataclass
class HandEnd:
    """A finished hand as the seat learned it (HandEnd): its result and its tricks."""

    number: int
    first: int
    result: dict[str, Any]
    tricks: list[tuple[int, list[str]]]
    """``(leader, cards in play order)`` per trick."""
    scores: tuple[int, ...]
    bags: tuple[int, ...]
    winners: tuple[int, ...] = ()
    """Who won each trick."""


class SeatTask:
    """The seat's stream as a :class:`arena.match.seat.RunningBot` (what a launcher returns)."""

    def __init__(self, task: asyncio.Task[None]) -> None:
        self.task = task

    def exited(self) -> bool:
        return self.task.done()

    async def exit_detail(self) -> str:
        # A seat that left ends its stream cleanly: the referee records a disconnect.
        return "exited with code 0"

    async def stop(self, grace: float = 2.0) -> int:
        if not self.task.done():
            self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task
        return 0


class HumanSeat:
    """One person's seat at one table: the protocol on one side, the page on the other.

    ``on_change`` is called (on the event loop) whenever :attr:`state` changes.
    """

    def __init__(
        self,
        *,
        reconnect_s: float = DEFAULT_RECONNECT_S,
        auto_margin_s: float = AUTO_MARGIN_S,
        on_change: Callable[[], None] = lambda: None,
        on_hand_end: Callable[[HandEnd], None] = lambda hand: None,
        on_ask: Callable[[OpenDecision], None] = lambda decision: None,
    ) -> None:
        self.reconnect_s = reconnect_s
        self.auto_margin_s = auto_margin_s
        self.on_change = on_change
        self.on_hand_end = on_hand_end
        self.on_ask = on_ask
        self.welcome: pb.Welcome | None = None
        self.game_index = -1
        self.game_id = ""
        self.view: pb.SeatView | None = None
        self.decision: OpenDecision | None = None
        self.hands: list[HandEnd] = []
        self.game_end: pb.GameEnd | None = None
        self.games_ended: list[pb.GameEnd] = []
        self.match_over = False
        self.abandoned = False
        self.just_played: tuple[int, str] | None = None
        """The card the person just played, until the referee's next message shows it."""
        self.message = ""
        """The latest thing the person should be told (a refused answer, a move played for them)."""
        self._pages = 0
        self._page_left_at: float | None = time.monotonic()  # no page yet: the wait starts now
        self._page_seen = False
        self._wake = asyncio.Event()

    # ------------------------------------------------------------ the page's side

    @property
    def players(self) -> int:
        return self.welcome.players if self.welcome is not None else 0

    @property
    def seat(self) -> int:
        return self.welcome.seat if self.welcome is not None else -1

    def reconnect_window(self) -> float:
        """How long the seat, when asked, waits with no page: ``reconnect_s``, or before any page
        has come at all (the person is still opening the address) at least :data:`FIRST_PAGE_WAIT_S`."""
        return self.reconnect_s if self._page_seen else max(self.reconnect_s, FIRST_PAGE_WAIT_S)

    def page_connected(self) -> None:
        """A page is showing the table (the reconnect window stops)."""
        self._pages += 1
        self._page_left_at = None
        self._page_seen = True
        self._wake.set()

    def page_disconnected(self) -> None:
        """A page went away; with none left, the reconnect window starts."""
        self._pages = max(0, self._pages - 1)
        if self._pages == 0:
            self._page_left_at = time.monotonic()
        self._wake.set()

    def answer(self, request_id: int, text: str) -> str:
        """Answer the open decision with ``text`` (as in ``legal``: ``"SA"``, ``"3"``, ``"keep"``,
        exchange: ``"S2,H3"``); returns what was played, in words.

        Raises :class:`AnswerRefused` with a message for the person when the
        decision is not open any more or the answer is not legal; the decision
        then stays open, unchanged.
        """
        decision = self.decision
        if decision is None or decision.request_id != request_id or decision.answer.done():
            raise AnswerRefused("that decision is no longer open: the table has moved on")
        if not isinstance(text, str) or len(text) > 64:
            raise AnswerRefused("that answer cannot be read")
        reason = refusal(decision, text)
        if reason is not None:
            raise AnswerRefused(reason)
        action = parse_action_text(decision.kind, text)
        decision.answer.set_result(answer_to_proto(request_id, decision.kind, action))
        self.message = ""
        if decision.kind is Decision.PLAY:
            self.just_played = (decision.view.seat, text)
        return describe(decision.kind, text)

    def withdraw(self, request_id: int) -> None:
        """Close the open decision for an undo: it is answered with the default move, which the
        referee's loop takes back at once (:mod:`arena.match.undo`) with the person's previous one.

        Raises :class:`AnswerRefused` when that decision is not open any more.
        """
        decision = self.decision
        if decision is None or decision.request_id != request_id or decision.answer.done():
            raise AnswerRefused("that decision is no longer open: the table has moved on")
        text = default_answer(decision)
        decision.answer.set_result(answer_to_proto(request_id, decision.kind, parse_action_text(decision.kind, text)))
        self.message = ""

    # ------------------------------------------------------------ the referee's side

    def launcher(self) -> Callable[[int, str, str, Path | None], Any]:
        """A launcher (:data:`arena.referee.host.Launcher`): starts this seat's stream as a task."""

        async def launch(seat: int, address: str, token: str, log_path: Path | None) -> SeatTask:
            return SeatTask(asyncio.create_task(self.play(address, token), name=f"person-seat-{seat}"))

        return launch

    async def play(self, address: str, token: str) -> None:
        """Join the referee at ``address`` with ``token`` and play the person's seat to the end."""
        async with grpc.aio.insecure_channel(grpc_target(address), options=CHANNEL_OPTIONS) as channel:
            await asyncio.wait_for(channel.channel_ready(), CONNECT_TIMEOUT_S)
            call = pb_grpc.RefereeStub(channel).Play()
            join = pb.Join(token=token, protocol_version=PROTOCOL_VERSION, bot_name=PERSON_NAME, bot_version="")
            await call.write(pb.BotMessage(join=join))
            try:
                await self._stream(call)
            finally:
                self.decision = None
                self.on_change()

    async def _stream(self, call: Any) -> None:
        while True:
            message = await call.read()
            if message is grpc.aio.EOF:
                self.match_over = True
                return
            which = message.WhichOneof("message")
            if which == "request":
                answer = await self._ask(message.request)
                await call.write(pb.BotMessage(answer=answer))
                if self.abandoned:  # leave the match: the referee sees the stream end (a disconnect)
                    with contextlib.suppress(Exception):
                        await call.done_writing()
                    return
            else:
                self._take(which, getattr(message, which))
            if which == "match_end":
                self.match_over = True
                self.on_change()
                with contextlib.suppress(Exception):
                    await call.done_writing()
                return

    def _take(self, which: str, message: Any) -> None:
        """Keep what a message (not a request) tells the seat."""
        if which == "welcome":
            self.welcome = message
        elif which == "game_start":
            self.game_index = message.game_index
            self.game_id = message.game_id
            self.hands = []
            self.game_end = None
            self.view = None
        elif which == "hand_end":
            self.just_played = None
            first = self.view.first if self.view is not None else -1
            hand = HandEnd(
                number=message.hand_number,
                first=first,
                result=json.loads(message.result_json),
                tricks=[(t.leader, list(t.cards)) for t in message.tricks],
                scores=tuple(message.scores),
                bags=tuple(message.bags),
                winners=tuple(t.winner for t in message.tricks),
            )
            self.hands.append(hand)
            self.on_hand_end(hand)
        elif which == "game_end":
            self.game_end = message
            self.games_ended.append(message)
        elif which == "notice":
            self.message = message.message[:300]
        self.on_change()

    async def _ask(self, request: pb.DecisionRequest) -> pb.Answer:
        """Put ``request`` to the page and wait: its answer, or the default move (in time; or abandoned)."""
        loop = asyncio.get_running_loop()
        kind = KIND_FROM_PROTO[request.kind]
        asked_at = time.monotonic()
        decision = OpenDecision(
            request_id=request.request_id, kind=kind, legal=tuple(request.legal), view=request.view,
            move_ms=request.move_ms, bank_ms=request.bank_ms,
            allowed_ms=request.allowed_ms or request.move_ms + request.bank_ms,
            asked_at=asked_at, answer=loop.create_future(), request=request,
        )  # fmt: skip
        self.view = request.view
        self.just_played = None
        self.decision = decision
        self.on_ask(decision)
        self.on_change()
        auto_at = asked_at + max(0.0, decision.allowed_ms / 1000 - self.auto_margin_s)
        try:
            while not decision.answer.done():
                now = time.monotonic()
                if now >= auto_at:
                    text = default_answer(decision)
                    self.message = f"Your time ran out: {describe(kind, text)} was played for you."
                    return answer_to_proto(decision.request_id, kind, parse_action_text(kind, text))
                left_at = self._page_left_at
                window = self.reconnect_window()
                if left_at is not None and now - left_at >= window:
                    self.abandoned = True
                    why = f"no page was connected for {window:g} s"
                    self.message = f"The game was abandoned: {why}."
                    text = default_answer(decision)
                    answer = answer_to_proto(decision.request_id, kind, parse_action_text(kind, text))
                    answer.note = f"the person left the table ({why}): abandoned"
                    return answer
                until = auto_at if left_at is None else min(auto_at, left_at + window)
                self._wake.clear()
                waiter = asyncio.ensure_future(self._wake.wait())
                try:
                    await asyncio.wait(
                        {decision.answer, waiter}, timeout=max(0.0, until - now) + 0.01,
                        return_when=asyncio.FIRST_COMPLETED,
                    )  # fmt: skip
                finally:
                    waiter.cancel()
            return decision.answer.result()
        finally:
            # No push here: the page shows its answer at once by itself, and the referee's
            # next message (with the bots' cards) comes a moment later; one render, not two.
            self.decision = None


def default_answer(decision: OpenDecision) -> str:
    """The referee's default move for a decision, as text (docs/protocol.md "Faults")."""
    kind = decision.kind
    if kind is Decision.BID:
        return "1" if "1" in decision.legal else decision.legal[0]
    if kind is Decision.BLIND_NIL:
        return "false"
    if kind is Decision.DRAW:
        return "keep"
    if kind is Decision.EXCHANGE:
        return ""
    return decision.legal[0]


def refusal(decision: OpenDecision, text: str) -> str | None:
    """Why ``text`` cannot answer ``decision`` (a sentence for the person), or None if it can."""
    kind = decision.kind
    hand = list(decision.view.hand)
    if kind is Decision.EXCHANGE:
        cards = [c for c in text.split(",") if c]
        if len(cards) > 3:
            return "you may return at most 3 cards"
        if len(set(cards)) != len(cards):
            return "each card can be returned once"
        for card in cards:
            if card not in hand:
                return f"you do not hold the {card_words(card)}"
        return None
    if text in decision.legal:
        return None
    if kind is Decision.PLAY:
        try:
            parse_card(text)
        except (MalformedInputError, ValueError):
            return f"{text[:8]!r} is not a card"
        if text not in hand:
            return f"you do not hold the {card_words(text)}"
        trick = decision.view.current_trick
        if trick:
            led = trick[0].card[0]
            if any(c[0] == led for c in hand):
                return f"you cannot play the {card_words(text)}: follow suit, play {SUIT_NAMES[led]}"
        if text[0] == "S" and not trick and not decision.view.spades_broken:
            return f"you cannot lead the {card_words(text)}: spades are not broken yet"
        return f"you cannot play the {card_words(text)} now"
    if kind is Decision.BID:
        return f"{text[:8]!r} is not a bid you can make now (choose one of {', '.join(decision.legal)})"
    return f"{text[:8]!r} is not an answer to this question (choose one of {', '.join(decision.legal)})"
