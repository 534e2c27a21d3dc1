"""The view a bot gets with every decision: what its seat may know, with helpers.

A :class:`View` is built from a ``DecisionRequest`` (over the wire or in the
local harness, through the same conversion).  Its fields mirror the
``SeatView`` message; its methods answer the questions bots ask most.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from arena_sdk.engine import CARDS, Card, Decision, Ruleset, Suit
from arena_sdk.engine.seats import team_of
from arena_sdk.engine.state import Trick
from arena_sdk.protocol import KIND_FROM_PROTO, cards_from_text, parse_action_text
from arena_sdk.wire import arena_pb2 as pb


@dataclasses.dataclass
class View:
    """One seat's knowledge at one decision.  Seats are 0..3 (N, E, S, W) or 0..1 (A, B)."""

    rules: Ruleset
    seat: int
    kind: Decision
    request_id: int
    hand_number: int
    first: int
    """Dealer (four players) or first player (two players) of this hand."""
    hand: list[Card]
    """Your cards in canonical order (empty while ``hand_hidden``)."""
    hand_hidden: bool
    bids: list[int | None]
    blind: list[bool]
    tricks_won: list[int]
    leader: int | None
    current_trick: list[tuple[int, Card]]
    tricks: list[Trick]
    """Completed tricks of this hand."""
    spades_broken: bool
    scores: list[int]
    bags: list[int]
    offered_card: Card | None
    seen_discards: list[Card]
    exchanged: list[int]
    legal: list[Any]
    """Legal actions in canonical order (empty for an exchange: any 0-3 of your cards)."""
    move_ms: int
    bank_ms: int
    received_at: float = dataclasses.field(default_factory=time.monotonic)

    @classmethod
    def from_request(
        cls, rules: Ruleset, request: pb.DecisionRequest, known_tricks: list[Trick] | None = None
    ) -> View:
        """Build the view of a decision request message.

        ``known_tricks`` are the tricks of this hand already parsed from an
        earlier request (completed tricks never change), so only new ones are
        parsed: that keeps the per-decision cost flat through the hand.
        """
        kind = KIND_FROM_PROTO[request.kind]
        v = request.view
        known = known_tricks or []
        if len(known) > len(v.tricks):
            known = []
        tricks = known[:]
        for t in v.tricks[len(known) :]:
            tricks.append(Trick(t.leader, cards_from_text(t.cards), t.winner))
        return cls(
            rules=rules,
            seat=v.seat,
            kind=kind,
            request_id=request.request_id,
            hand_number=v.hand_number,
            first=v.first,
            hand=list(cards_from_text(v.hand)),
            hand_hidden=v.hand_hidden,
            bids=[None if b < 0 else b for b in v.bids],
            blind=list(v.blind),
            tricks_won=list(v.tricks_won),
            leader=None if v.leader < 0 else v.leader,
            current_trick=[(p.seat, cards_from_text([p.card])[0]) for p in v.current_trick],
            tricks=tricks,
            spades_broken=v.spades_broken,
            scores=list(v.scores),
            bags=list(v.bags),
            offered_card=cards_from_text([v.offered_card])[0] if v.offered_card else None,
            seen_discards=list(cards_from_text(v.seen_discards)),
            exchanged=list(v.exchanged),
            legal=[parse_action_text(kind, t) for t in request.legal],
            move_ms=request.move_ms,
            bank_ms=request.bank_ms,
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
        """Cards you know the place of: your hand, played cards, discards you saw."""
        return set(self.hand) | self.cards_played() | set(self.seen_discards)

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
        """Seconds left for this decision, bank included, by your own clock."""
        budget = (self.move_ms + self.bank_ms) / 1000.0
        return budget - (time.monotonic() - self.received_at)

    def move_time_left(self) -> float:
        """Seconds left before the bank is touched."""
        return self.move_ms / 1000.0 - (time.monotonic() - self.received_at)
