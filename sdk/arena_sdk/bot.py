"""The bot base class, and the driver that feeds it referee messages.

Subclass :class:`Bot`, implement :meth:`Bot.bid` and :meth:`Bot.play`, and
call :func:`arena_sdk.run`.  The variant decisions (blind nil, the two-player
draw and exchange) have sensible defaults; the hooks do nothing by default.

:class:`BotDriver` turns each ``RefereeMessage`` into calls on the bot and
returns the ``Answer`` to send; it knows nothing about transport, so the gRPC
client and the in-process harness share it.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import random
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from arena_sdk.engine import Card, Decision, Ruleset, Suit, seat_name
from arena_sdk.engine.state import Trick
from arena_sdk.protocol import answer_to_proto, cards_from_text
from arena_sdk.view import View
from arena_sdk.wire import arena_pb2 as pb

#: Seconds a bot connected over gRPC keeps in hand for the transport, which
#: its own clock cannot see: the referee starts a decision's clock before it
#: writes the request and stops it when it has read the answer, while the SDK
#: can count only from its own read of the request to its own write of the
#: answer.  ``View.time_left()`` (and ``move_time_left()``) are that much
#: smaller.  Measured on the 2-core development machine under heavy load
#: (load average about 12): the referee's time per decision minus the bot's
#: own was p50 0.6 ms, p90 1.5 ms, p99 8 ms; on a quiet machine a whole round
#: trip is about 0.3 ms p50, 0.7 ms p99 (bench/referee.py).  5 ms covers the
#: usual case at 0.5% of a 1 s move; a bot sets its own in ``transport_margin_s``.
TRANSPORT_MARGIN_S = 0.005
#: The longest note (characters) a bot's answer carries; the referee keeps no more.
NOTE_MAX_CHARS = 300


@dataclasses.dataclass(frozen=True)
class MatchInfo:
    """What the referee said when the bot joined."""

    match_id: str
    seat: int
    partner: int | None
    rules: Ruleset
    move_ms: int
    bank_ms: int
    games: int
    seat_names: tuple[str, ...]
    """Bot names per seat as known when you joined ("" for a seat not joined yet; not updated)."""
    hard_cap_ms: int = 0
    """No decision may take longer than this, whatever the bank holds (0: no cap said)."""
    strikes_to_forfeit: int = 0
    """Strikes in one game that forfeit it."""
    clock: str = "wall"
    """What the move time and bank count: ``wall`` or ``cpu`` (this process's CPU time;
    the hard cap stays wall time).  ``View.time_left()`` counts the same clock."""


@dataclasses.dataclass(frozen=True)
class GameInfo:
    """The start of one game."""

    index: int
    game_id: str
    bot_seed: int
    first: int
    scores: tuple[int, ...]
    bags: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class HandSummary:
    """A scored hand: its result (the record's hand result object) and all its tricks."""

    hand_number: int
    result: dict[str, Any]
    tricks: tuple[Trick, ...]
    scores: tuple[int, ...]
    bags: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class GameSummary:
    """The end of one game: ``ending`` is target, floor, max_hands, forfeit:... or void:..."""

    index: int
    game_id: str
    ending: str
    winner: int | None
    scores: tuple[int, ...]
    bags: tuple[int, ...]


class Bot:
    """Base class of a Spades bot.

    ``self.rng`` is a :class:`random.Random` seeded from the per-game seed the
    referee sends, so a bot that draws its randomness from it plays the same
    game the same way.  ``self.match`` holds the :class:`MatchInfo`;
    ``self.argv`` the command-line arguments ``run()`` left to the bot.
    """

    #: Shown in tables and records; override in your subclass.
    name: str = "bot"
    version: str = "0"
    #: Seconds ``time_left()`` keeps in hand for the transport when playing over
    #: gRPC (:data:`TRANSPORT_MARGIN_S`); raise it for a referee across a network.
    transport_margin_s: float = TRANSPORT_MARGIN_S

    def __init__(self) -> None:
        self.rng = random.Random(0)
        self.match: MatchInfo | None = None
        #: The command-line arguments that are not the SDK's (``--address``,
        #: ``--token``): set by ``run()`` before it connects.
        self.argv: list[str] = []

    # ------------------------------------------------------------ decisions

    def bid(self, view: View) -> int:
        """Return your bid, 0-13 (0 is nil)."""
        raise NotImplementedError("implement bid(view) in your Bot subclass")

    def play(self, view: View) -> Card:
        """Return the card to play; ``view.legal_cards()`` lists the legal ones."""
        raise NotImplementedError("implement play(view) in your Bot subclass")

    def blind_nil(self, view: View) -> bool:
        """Bid blind nil without seeing your cards?  Default: decline.

        Asked only where the ruleset allows blind nil and your seat is
        eligible.  A blind nil rarely makes without a plan for it, so the
        default is the referee's own default: no.
        """
        return False

    def draw(self, view: View) -> bool:
        """Two-player draw: keep ``view.offered_card`` (True) or take the next card (False).

        Default: keep spades and cards of ten or higher.
        """
        card = view.offered_card
        assert card is not None
        return card.suit == Suit.S or card.rank >= Card.CT.rank

    def exchange(self, view: View) -> list[Card]:
        """Two-player blind nil: up to 3 cards to return.  Default: the three most dangerous.

        For a nil, high cards and high spades win tricks: return the highest.
        """
        danger = sorted(view.hand, key=lambda c: (c.rank, c.suit == Suit.S), reverse=True)
        return danger[:3]

    # ------------------------------------------------------------ hooks

    def on_match_start(self, info: MatchInfo) -> None:
        """Called once, after joining."""

    def on_game_start(self, info: GameInfo) -> None:
        """Called at the start of every game (after ``self.rng`` is reseeded)."""

    def on_trick_end(self, trick: Trick, view: View | None) -> None:
        """Called once per completed trick (``view`` is the latest view, if any)."""

    def on_hand_end(self, summary: HandSummary) -> None:
        """Called after each hand is scored."""

    def on_game_end(self, summary: GameSummary) -> None:
        """Called at the end of every game, forfeits and voids included."""

    # ------------------------------------------------------------ notes

    def note(self, text: object) -> None:
        """Attach a note to your current decision ("expect 3 tricks; partner void in hearts").

        Notes written during ``bid``/``play``/... go with that answer (several
        are joined with "; "); notes written elsewhere go with the next answer.
        The referee keeps the first :data:`NOTE_MAX_CHARS` characters
        (control characters dropped) and stores them in the record beside the
        decision, where the viewer shows them to you; published results leave
        them out unless the organiser asks.
        """
        self.__dict__.setdefault("_pending_notes", []).append(str(text))

    def take_notes(self) -> str:
        """The notes written since the last answer, joined (and forgotten here)."""
        notes = self.__dict__.pop("_pending_notes", None)
        return "; ".join(notes)[:NOTE_MAX_CHARS] if notes else ""

    def on_notice(self, level: str, code: str, message: str) -> None:
        """Called when the referee tells the bot something: a strike, a refused answer.

        ``level`` is ``info``, ``strike`` or ``forfeit``; ``code`` a short
        machine-readable reason (``timeout``, ``illegal``, ``malformed``,
        ``stale_answer``...).  The default prints strikes to stderr.
        """
        if level != "info":
            print(f"{self.name}: {level} {code}: {message}", file=sys.stderr)


def default_seed_rng(seed: int) -> random.Random:
    """The generator a bot gets for a game."""
    return random.Random(seed)


class BotDriver:
    """Feeds referee messages to a :class:`Bot`; returns the answers to send."""

    def __init__(
        self,
        bot: Bot,
        *,
        catch_errors: bool = True,
        clock: Callable[[], float] = time.monotonic,
        transport_margin_s: float = 0.0,
    ) -> None:
        self.bot = bot
        #: Seconds on a monotonic scale: when requests arrived, and what views
        #: count ``time_left()`` by (injectable, so that tests need no sleeps).
        self.clock = clock
        #: Each view's clock starts this much before the request arrived: the
        #: transport's share of the referee's time (the gRPC client passes the
        #: bot's ``transport_margin_s``; the in-process harness has no transport).
        self.transport_margin_s = max(0.0, transport_margin_s)
        self._wants_tricks = _overrides(bot, "on_trick_end")
        self._wants_hands = _overrides(bot, "on_hand_end")
        #: Survive an exception in the bot's code (log it, answer with no
        #: action: a strike) rather than crash and forfeit the whole match.
        self.catch_errors = catch_errors
        self.rules: Ruleset | None = None
        self._tricks_reported = 0
        self._hand = 0
        self.finished = False
        self._hard_cap_ms = 0
        #: The CPU clock views count by when the match is charged CPU time (set by the Welcome).
        self._cpu_clock: Callable[[], float] | None = None
        # When the referee closed our latest decision (at our answer or its
        # deadline), and the latest arrival time known of a message read: a
        # request that was already waiting when read cannot have arrived
        # earlier than either (the stream is in order; a seat's next request
        # is sent only after its previous decision closed).
        self._closed_at: float | None = None
        self._arrived: float | None = None
        self.last_view: View | None = None
        self._last_hand = 0  # the hand number of last_view's request
        #: Why the last answer could not be encoded (``None`` when it could).
        self.last_error: str | None = None
        #: Log, with a failed or struck decision, the command that reproduces it
        #: (off where the decisions are already being reproduced).
        self.reproduce_hints = True
        self._seat_label = ""
        self._game_id = ""
        self._decisions = 0  # this game's decisions so far: the index of the next one
        self._decision_of: dict[int, int] = {}  # request id -> its decision index, this game
        self._hinted: set[int] = set()  # decisions of this game already logged with a hint
        self._exception: BaseException | None = None

    def handle(
        self, message: pb.RefereeMessage, queued: bool = False, read_at: float | None = None
    ) -> pb.Answer | None:
        """Process one message; returns an answer for a decision request, else None.

        ``read_at``: when the transport read the message (default: now, by
        :attr:`clock`).  ``queued``: it was already waiting when read (it came
        while the bot was busy, or right behind another message), so its
        arrival time is unknown.  A queued request is stamped as early as it
        can have arrived: when the message before it arrived (as far as known)
        or when our previous decision closed, whichever is later.  The view's
        ``received_at`` is that arrival less :attr:`transport_margin_s`: the
        moment its ``time_left()`` counts from.
        """
        if read_at is None:
            read_at = self.clock()
        which = message.WhichOneof("message")
        if which == "request":
            return self._decide(message.request, queued, read_at)
        if not queued:
            self._arrived = read_at  # it came while we waited: it arrived about now
        if which == "welcome":
            self._welcome(message.welcome)
        elif which == "game_start":
            g = message.game_start
            self.bot.rng = default_seed_rng(g.bot_seed)
            self.last_view = None
            # The stamp state needs no reset: the latest arrival known (this
            # GameStart's own, when it was waited for) bounds the next request,
            # and the previous game's last close only ever raises that bound.
            # Dropping it would stamp a request that waited behind an overrun
            # at the game's end from the overrun's start, not its deadline.
            self._tricks_reported = 0
            self._hand = 0
            self._game_id = g.game_id
            self._decisions = 0
            self._decision_of = {}
            self._hinted = set()
            self._guarded(
                "on_game_start", self.bot.on_game_start,
                GameInfo(g.game_index, g.game_id, g.bot_seed, g.first, tuple(g.scores), tuple(g.bags))
            )
        elif which == "hand_end" and (self._wants_tricks or self._wants_hands):
            # (Parsed only for a bot that listens: it is on the path of the next hand's first decision.)
            h = message.hand_end
            tricks = tuple(Trick(t.leader, cards_from_text(t.cards), t.winner) for t in h.tricks)
            self._report_tricks(h.hand_number, tricks)
            if self._wants_hands:
                self._guarded(
                    "on_hand_end", self.bot.on_hand_end,
                    HandSummary(h.hand_number, json.loads(h.result_json), tricks, tuple(h.scores), tuple(h.bags))
                )
        elif which == "game_end":
            g = message.game_end
            self._guarded(
                "on_game_end", self.bot.on_game_end,
                GameSummary(
                    g.game_index, g.game_id, g.ending, None if g.winner < 0 else g.winner,
                    tuple(g.scores), tuple(g.bags),
                )
            )
        elif which == "match_end":
            self.finished = True
        elif which == "notice":
            n = message.notice
            level = pb.Notice.Level.Name(n.level).lower()
            self._guarded("on_notice", self.bot.on_notice, level, n.code, n.message)
            if n.level == pb.Notice.STRIKE and n.request_id in self._decision_of:
                self._hint(self._decision_of[n.request_id], f"strike {n.code}: {n.message}")
        return None

    def _guarded(self, what: str, fn: Any, *args: Any) -> Any:
        """Call bot code; with ``catch_errors``, log an exception instead of raising it."""
        if not self.catch_errors:
            return fn(*args)
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - the bot's code may raise anything; logged, not lost
            print(f"{self.bot.name}: exception in {what}():", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            self._exception = exc
            return _FAILED

    def _hint(self, k: int, what: str) -> None:
        """Log a failed or struck decision with the command that asks the bot it again.

        The bot cannot know where the referee keeps the record (inside a
        container a host path means nothing): it names the record by its file
        name, ``<game id>.json``, which ``arena match run``, tournaments and
        sprt runs use; the match's output prints the full path.
        """
        if not self.reproduce_hints or k in self._hinted:
            return
        self._hinted.add(k)
        where = f"decision {k} of seat {self._seat_label} in game {self._game_id or '?'}"
        command = (
            f"python -m arena_sdk.testing {bot_source(self.bot)} --replay {self._game_id or 'RECORD'}.json "
            f"--seat {self._seat_label} --decision {k}"
        )
        print(f"{self.bot.name}: {where}: {what}; reproduce: {command}", file=sys.stderr, flush=True)

    def _welcome(self, w: pb.Welcome) -> None:
        self.rules = Ruleset.from_dict(json.loads(w.ruleset_json))
        self._seat_label = seat_name(self.rules.players, w.seat) if 0 <= w.seat < self.rules.players else str(w.seat)
        info = MatchInfo(
            match_id=w.match_id,
            seat=w.seat,
            partner=None if w.partner < 0 else w.partner,
            rules=self.rules,
            move_ms=w.time_control.move_ms,
            bank_ms=w.time_control.bank_ms,
            games=w.games,
            seat_names=tuple(w.seat_names),
            hard_cap_ms=w.time_control.hard_cap_ms,
            strikes_to_forfeit=w.time_control.strikes_to_forfeit,
            clock="cpu" if w.time_control.clock == pb.CLOCK_CPU else "wall",
        )
        self._hard_cap_ms = info.hard_cap_ms
        self._cpu_clock = time.process_time if info.clock == "cpu" else None
        self.bot.match = info
        self._guarded("on_match_start", self.bot.on_match_start, info)

    def _report_tricks(self, hand_number: int, tricks: tuple[Trick, ...] | list[Trick]) -> None:
        """Call on_trick_end for the tricks of this hand not reported yet."""
        if hand_number != self._hand:
            self._hand = hand_number
            self._tricks_reported = 0
        elif len(tricks) < self._tricks_reported:  # the hand was taken back (a person's undo in unrated play)
            self._tricks_reported = len(tricks)
        for trick in tricks[self._tricks_reported :]:
            self._guarded("on_trick_end", self.bot.on_trick_end, trick, self.last_view)
        self._tricks_reported = max(self._tricks_reported, len(tricks))

    def _decide(self, request: pb.DecisionRequest, queued: bool, read_at: float) -> pb.Answer:
        if self.rules is None:
            raise RuntimeError("decision request before welcome")
        started = time.perf_counter()
        received = read_at
        if queued:
            # It was waiting when read: right behind another message (it came
            # with it, not before it) or behind our own late answer (it can
            # have come as soon as the referee closed that one, not earlier).
            earliest = self._arrived
            closed = self._closed_at
            if closed is not None and (earliest is None or closed > earliest):
                earliest = closed
            if earliest is not None and earliest < received:
                received = earliest
        self._arrived = received
        previous = self.last_view  # reset at each game start
        hand = request.view.hand_number
        known = None
        if previous is not None and self._last_hand == hand:
            known = previous.__dict__.get("tricks")  # only if that view parsed them already
        self._last_hand = hand
        # The referee's clock started before the request was written and stops
        # only when it has read our answer: count from earlier by the margin.
        view = View(
            self.rules, request, known, received_at=received - self.transport_margin_s,
            hard_cap_ms=self._hard_cap_ms, clock=self.clock,
            cpu_clock=self._cpu_clock, cpu_margin_s=self.transport_margin_s,
        )  # fmt: skip
        self.last_view = view
        k = self._decisions
        self._decisions += 1
        self._decision_of[request.request_id] = k
        try:
            return self._answer(request, view, started)
        finally:
            # The referee closes a request at our answer or at its deadline, whichever is first.
            self._closed_at = min(self.clock(), view.received_at + view.allowed_ms / 1000.0)

    def _answer(self, request: pb.DecisionRequest, view: View, started: float) -> pb.Answer:
        answer = self._action_answer(request, view, started)
        note = self.bot.take_notes()
        if note:
            answer.note = note
        return answer

    def _action_answer(self, request: pb.DecisionRequest, view: View, started: float) -> pb.Answer:
        if self._wants_tricks:  # parsing every trick costs time; only for bots that listen
            self._report_tricks(view.hand_number, view.tricks)
        kind = view.kind
        method = _METHOD[kind]
        action = self._guarded(method, getattr(self.bot, method), view)
        think_us = int((time.perf_counter() - started) * 1e6)
        if action is _FAILED:
            self.last_error = f"{method}() raised an exception (traceback above)"
            exc = self._exception
            what = f"{method}() raised {type(exc).__name__}: {_shown(exc, str)}"
            self._hint(self._decision_of.get(request.request_id, self._decisions - 1), what)
            # The answer goes without an action (a strike); the note tells the record why.
            self.bot.note(what)
            return pb.Answer(request_id=request.request_id, think_time_us=think_us)
        try:
            answer = answer_to_proto(request.request_id, kind, action, think_us)
        except Exception as exc:  # noqa: BLE001 - MalformedInputError, or the answer's own code raising
            # Not worth a crash (a crash forfeits the rest of the match): send an
            # answer without an action, which the referee strikes like any
            # malformed answer and replaces with the default move.
            self.last_error = f"{_METHOD[kind]}() returned {_shown(action, repr)}: {_shown(exc, str)}"
            print(f"{self.bot.name}: {self.last_error}", file=sys.stderr)
            return pb.Answer(request_id=request.request_id, think_time_us=think_us)
        self.last_error = None
        return answer


_FAILED = object()  # what _guarded returns when the bot's code raised


def _shown(value: object, how: Callable[[object], str]) -> str:
    """``how(value)``, or a placeholder when the bot's own ``__str__``/``__repr__`` raises.

    A bot's exception or answer is shown in its log and note; its own code must
    not be able to turn that report into a crash of the driver.
    """
    try:
        return how(value)
    except Exception:  # noqa: BLE001 - any failure of the bot's code
        return f"<{type(value).__name__} that cannot be shown>"


def bot_source(bot: Bot) -> str:
    """How ``python -m arena_sdk.testing`` names this bot: ``path/to/bot.py:ClassName``, or a tier.

    The path is relative to the working directory when the file is under it.
    """
    cls = type(bot)
    if cls.__module__.startswith("arena_sdk.bots."):
        from arena_sdk.bots import TIERS  # only for the built-in bots (it imports their modules)

        for tier, tier_cls in TIERS.items():
            if tier_cls is cls:
                return tier
    try:
        path = inspect.getsourcefile(cls) or ""
    except TypeError:  # defined in the interpreter, not in a file
        path = ""
    if not path:
        return f"BOT.py:{cls.__name__}"
    relative = os.path.relpath(path)
    return f"{path if relative.startswith('..') else relative}:{cls.__name__}"


def _overrides(bot: Bot, hook: str) -> bool:
    """Does ``bot`` do anything on ``hook`` (a method of its class, or one set on the instance)?"""
    return getattr(type(bot), hook) is not getattr(Bot, hook) or hook in vars(bot)


#: The Bot method that answers each decision kind.
_METHOD: dict[Decision, str] = {
    Decision.PLAY: "play",
    Decision.BID: "bid",
    Decision.BLIND_NIL: "blind_nil",
    Decision.DRAW: "draw",
    Decision.EXCHANGE: "exchange",
}
