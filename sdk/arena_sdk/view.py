"""The view a bot gets with every decision: what its seat may know, with helpers.

A :class:`View` is built from a ``DecisionRequest`` (over the wire or in the
local harness, through the same conversion).  Its fields mirror the
``SeatView`` message; its methods answer the questions bots ask most.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

from arena_sdk.engine import CARDS, Card, Decision, Ruleset, Suit
from arena_sdk.engine.seats import team_of
from arena_sdk.engine.state import Trick
from arena_sdk.protocol import KIND_FROM_PROTO, cards_from_text, parse_action_text
from arena_sdk.wire import arena_pb2 as pb

_T = TypeVar("_T")


class _lazy(Generic[_T]):  # noqa: N801 - used like a decorator, named like one
    """A property computed on first use and kept in the instance's ``__dict__``.

    ``functools.cached_property`` without its lock: in Python 3.11 taking that
    lock costs more than most of these properties (a view is one thread's).
    """

    def __init__(self, compute: Callable[[Any], _T]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _lazy[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> _T | _lazy[_T]:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.compute(obj)
        return value


class View:
    """One seat's knowledge at one decision.  Seats are 0..3 (N, E, S, W) or 0..1 (A, B).

    Built from the request message; the fields most decisions need (``kind``,
    ``legal``, ``hand``) are decoded at once, the rest on first use, so a bot
    pays only for what it reads.
    """

    def __init__(
        self,
        rules: Ruleset,
        request: pb.DecisionRequest,
        known_tricks: list[Trick] | None = None,
        received_at: float | None = None,
        hard_cap_ms: int = 0,
        clock: Callable[[], float] = time.monotonic,
        *,
        cpu_clock: Callable[[], float] | None = None,
        cpu_margin_s: float = 0.0,
    ) -> None:
        """``cpu_clock``: set when the match is charged CPU time (``MatchInfo.clock == "cpu"``):
        this process's CPU clock (``time.process_time``), read now; ``cpu_margin_s`` is
        taken off what is left for the CPU the request cost before it reached the bot."""
        self.rules = rules
        #: What :meth:`time_left` counts by (the driver's clock; injectable for tests).
        self.clock = clock
        #: The CPU clock this decision is charged by, or None: it is charged wall time.
        self.cpu_clock = cpu_clock
        #: This process's CPU time when the decision began (less the margin), under the CPU clock.
        self.cpu_started_at: float = cpu_clock() - max(0.0, cpu_margin_s) if cpu_clock is not None else 0.0
        #: The wall hard cap in ms (0: not said); under the CPU clock it still counts wall time.
        self.hard_cap_ms: int = hard_cap_ms
        self._message = request.view
        self._known_tricks = known_tricks
        self.kind: Decision = KIND_FROM_PROTO[request.kind]
        self.request_id: int = request.request_id
        self.move_ms: int = request.move_ms
        self.bank_ms: int = request.bank_ms
        #: When the request arrived, by :attr:`clock` (see BotDriver.handle for a request that waited).
        self.received_at: float = clock() if received_at is None else received_at
        #: What the referee enforces for this decision, in ms: min(move + bank, hard cap).
        self.allowed_ms: int = request.allowed_ms or _allowed_ms(
            request.move_ms, request.bank_ms, hard_cap_ms
        )
        kind = self.kind
        #: Legal actions in canonical order (empty for an exchange: any 0-3 of your cards).
        self.legal: list[Any] = (
            list(cards_from_text(request.legal))
            if kind is Decision.PLAY
            else [parse_action_text(kind, t) for t in request.legal]
        )
        #: Your cards in canonical order (empty while ``hand_hidden``).
        self.hand: list[Card] = list(cards_from_text(self._message.hand))

    @classmethod
    def from_request(
        cls, rules: Ruleset, request: pb.DecisionRequest, known_tricks: list[Trick] | None = None
    ) -> View:
        """Build the view of a decision request message.

        ``known_tricks`` are the tricks of this hand already parsed from an
        earlier request (completed tricks never change), so only new ones are
        parsed: that keeps the per-decision cost flat through the hand.
        """
        return cls(rules, request, known_tricks)

    # ---------------------------------------------------------------- decoded on use

    @_lazy
    def seat(self) -> int:
        return int(self._message.seat)

    @_lazy
    def hand_number(self) -> int:
        return int(self._message.hand_number)

    @_lazy
    def first(self) -> int:
        """Dealer (four players) or first player (two players) of this hand."""
        return int(self._message.first)

    @_lazy
    def hand_hidden(self) -> bool:
        """True while you must decide blind nil without seeing your cards."""
        return bool(self._message.hand_hidden)

    @_lazy
    def bids(self) -> list[int | None]:
        """Bids per seat (``None``: not bid yet)."""
        return [None if b < 0 else b for b in self._message.bids]

    @_lazy
    def blind(self) -> list[bool]:
        """Which seats bid blind nil."""
        return list(self._message.blind)

    @_lazy
    def tricks_won(self) -> list[int]:
        """Tricks won this hand per seat."""
        return list(self._message.tricks_won)

    @_lazy
    def leader(self) -> int | None:
        """Who led the trick in progress (``None`` outside play)."""
        leader = self._message.leader
        return None if leader < 0 else leader

    @_lazy
    def current_trick(self) -> list[tuple[int, Card]]:
        """The trick in progress: ``(seat, card)`` in play order."""
        plays = self._message.current_trick
        cards = cards_from_text([p.card for p in plays])
        return [(p.seat, c) for p, c in zip(plays, cards, strict=True)]

    @_lazy
    def tricks(self) -> list[Trick]:
        """Completed tricks of this hand."""
        message = self._message.tricks
        known = self._known_tricks or []
        # Reused only if they are still this hand's: in unrated play a person's undo can take
        # the hand back (docs/protocol.md), and a stale trick would then be the last one known.
        if len(known) > len(message) or (known and not _same_trick(known[-1], message[len(known) - 1])):
            known = []
        tricks = known[:]
        for t in message[len(known) :]:
            tricks.append(Trick(t.leader, cards_from_text(t.cards), t.winner))
        return tricks

    @_lazy
    def spades_broken(self) -> bool:
        return bool(self._message.spades_broken)

    @_lazy
    def scores(self) -> list[int]:
        """Running totals per team at the start of this hand."""
        return list(self._message.scores)

    @_lazy
    def bags(self) -> list[int]:
        """Bags per team at the start of this hand."""
        return list(self._message.bags)

    @_lazy
    def offered_card(self) -> Card | None:
        """Two-player draw: the card you are offered."""
        text = self._message.offered_card
        return cards_from_text([text])[0] if text else None

    @_lazy
    def seen_discards(self) -> list[Card]:
        """Two-player: cards you saw go to the discards."""
        return list(cards_from_text(self._message.seen_discards))

    @_lazy
    def exchanged(self) -> list[int]:
        """Two-player: how many cards each player exchanged (public)."""
        return list(self._message.exchanged)

    def __repr__(self) -> str:
        return (
            f"View(seat={self.seat}, kind={self.kind.value}, hand_number={self.hand_number}, "
            f"hand={[c.name for c in self.hand]}, legal={self.legal!r})"
        )

    # ---------------------------------------------------------------- who is who

    @property
    def players(self) -> int:
        """4 or 2."""
        return self.rules.players

    @property
    def partner(self) -> int | None:
        """Your partner's seat (``None`` in the two-player game)."""
        return (self.seat + 2) % 4 if self.players == 4 else None

    @property
    def team(self) -> int:
        """Your team: 0 (NS, or A) or 1 (EW, or B)."""
        return team_of(self.players, self.seat)

    @property
    def opponents(self) -> list[int]:
        """The seats of the other side."""
        return [s for s in range(self.players) if team_of(self.players, s) != self.team]

    # ---------------------------------------------------------------- bidding

    @property
    def my_bid(self) -> int | None:
        """Your bid this hand, if made."""
        return self.bids[self.seat]

    @property
    def partner_bid(self) -> int | None:
        """Your partner's bid, if made (``None`` in the two-player game)."""
        return None if self.partner is None else self.bids[self.partner]

    def is_nil(self, seat: int) -> bool:
        """True if ``seat`` bid nil or blind nil this hand."""
        return self.bids[seat] == 0

    def team_contract(self, team: int | None = None) -> int:
        """The sum of a team's non-nil bids made so far (default: yours)."""
        team = self.team if team is None else team
        return sum(
            b for s, b in enumerate(self.bids) if b and team_of(self.players, s) == team
        )

    def team_tricks(self, team: int | None = None) -> int:
        """Tricks a team has won this hand (default: yours)."""
        team = self.team if team is None else team
        return sum(t for s, t in enumerate(self.tricks_won) if team_of(self.players, s) == team)

    # ---------------------------------------------------------------- cards

    def legal_cards(self) -> list[Card]:
        """The cards you may play now (empty outside a play decision)."""
        return list(self.legal) if self.kind is Decision.PLAY else []

    @property
    def led_suit(self) -> Suit | None:
        """The suit led to the trick in progress, if any."""
        return self.current_trick[0][1].suit if self.current_trick else None

    def cards_played(self) -> set[Card]:
        """Every card played this hand, the trick in progress included."""
        played = {c for t in self.tricks for c in t.cards}
        played.update(c for _, c in self.current_trick)
        return played

    def cards_seen(self) -> set[Card]:
        """Cards you know the place of: your hand, played cards, discards you saw.

        Two players: once the opponent has exchanged cards after a blind nil,
        some discards (perhaps ones you saw) went to its hand, and which is
        not public, so the discards you saw no longer count as placed.
        """
        seen = set(self.hand) | self.cards_played()
        opponent_exchanged = any(k for s, k in enumerate(self.exchanged) if s != self.seat)
        if not opponent_exchanged:
            seen |= set(self.seen_discards)
        return seen

    def unseen_cards(self) -> set[Card]:
        """Cards that may be in another hand (or, two players, in the discards)."""
        return set(CARDS) - self.cards_seen()

    def winning_play(self) -> tuple[int, Card] | None:
        """The seat and card winning the trick in progress so far."""
        best: tuple[int, Card] | None = None
        for seat, card in self.current_trick:
            if best is None:
                best = (seat, card)
                continue
            top = best[1]
            if (card.suit == top.suit and card > top) or (
                card.suit == Suit.S and top.suit != Suit.S
            ):
                best = (seat, card)
        return best

    # ---------------------------------------------------------------- time

    def time_left(self) -> float:
        """Seconds left before this decision is a timeout, by your own clock.

        What the referee enforces: move time plus bank, but never beyond the
        hard cap; counted from when the request arrived.  Negative once it is
        too late (the referee has already played the default move).  Under
        the CPU clock the move time and bank count this process's CPU time
        (``time.process_time``) and the hard cap still counts wall time: the
        smaller of the two is left.
        """
        return self._left(self.allowed_ms)

    def move_time_left(self) -> float:
        """Seconds left before the bank is touched (on the same clock as :meth:`time_left`)."""
        return self._left(min(self.move_ms, self.allowed_ms))

    @property
    def time_clock(self) -> Callable[[], float]:
        """The clock this decision is charged by: CPU time under the CPU clock, else :attr:`clock`.

        With :attr:`time_start`, for a search's own budget (``deadline = time_start + budget``).
        """
        return self.cpu_clock if self.cpu_clock is not None else self.clock

    @property
    def time_start(self) -> float:
        """When this decision began, on :attr:`time_clock`."""
        return self.cpu_started_at if self.cpu_clock is not None else self.received_at

    def _left(self, limit_ms: int) -> float:
        wall_used = self.clock() - self.received_at
        if self.cpu_clock is None:
            return limit_ms / 1000.0 - wall_used
        left = limit_ms / 1000.0 - (self.cpu_clock() - self.cpu_started_at)
        if self.hard_cap_ms:
            left = min(left, self.hard_cap_ms / 1000.0 - wall_used)
        return left


def _allowed_ms(move_ms: int, bank_ms: int, hard_cap_ms: int) -> int:
    """min(move + bank, hard cap), for a request that does not say (an older referee, a harness)."""
    budget = move_ms + bank_ms
    return min(budget, hard_cap_ms) if hard_cap_ms else budget


def _same_trick(trick: Trick, message: pb.Trick) -> bool:
    """Whether a parsed trick is the message's (the same leader and cards)."""
    return trick.leader == message.leader and [str(c) for c in trick.cards] == list(message.cards)
