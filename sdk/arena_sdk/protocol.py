"""Conversion between the engine's values and the wire messages of ``arena.v1``.

Both sides use this module: the referee turns engine views into
``DecisionRequest`` messages and ``Answer`` messages into engine actions; the
SDK does the reverse.  The in-process test harness goes through it too, so a
bot tested locally sees exactly what it would see over the wire.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from arena_sdk.engine import (
    CARDS, Card, Decision, HandResult, MalformedInputError, Ruleset, parse_card, parse_cards,
)  # fmt: skip
from arena_sdk.engine.cards import CARD_NAMES
from arena_sdk.engine.record import hand_result_to_json
from arena_sdk.engine.state import SeatView as EngineView
from arena_sdk.engine.state import Trick
from arena_sdk.wire import arena_pb2 as pb

PROTOCOL_VERSION = 1
#: The receive limit both sides set: a decision request is a few KiB at most.
MAX_MESSAGE_BYTES = 64 * 1024

KIND_TO_PROTO: dict[Decision, int] = {
    Decision.BLIND_NIL: pb.BLIND_NIL,
    Decision.DRAW: pb.DRAW,
    Decision.EXCHANGE: pb.EXCHANGE,
    Decision.BID: pb.BID,
    Decision.PLAY: pb.PLAY,
}
KIND_FROM_PROTO: dict[int, Decision] = {v: k for k, v in KIND_TO_PROTO.items()}
#: Which ``Answer.action`` field each decision kind must set.
ANSWER_FIELD: dict[Decision, str] = {
    Decision.BLIND_NIL: "blind_nil",
    Decision.DRAW: "keep",
    Decision.EXCHANGE: "exchange",
    Decision.BID: "bid",
    Decision.PLAY: "card",
}


def action_text(kind: Decision, action: Any) -> str:
    """The text form of a legal action in ``DecisionRequest.legal``."""
    if kind is Decision.PLAY:
        return CARD_NAMES[action]
    if kind is Decision.BID:
        return str(int(action))
    if kind is Decision.BLIND_NIL:
        return "true" if action else "false"
    if kind is Decision.DRAW:
        return "keep" if action else "discard"
    return ",".join(CARD_NAMES[c] for c in action)


def parse_action_text(kind: Decision, text: str) -> Any:
    """Inverse of :func:`action_text`."""
    if kind is Decision.PLAY:
        return parse_cards((text,))[0]
    if kind is Decision.BID:
        return int(text)
    if kind is Decision.BLIND_NIL:
        return text == "true"
    if kind is Decision.DRAW:
        return text == "keep"
    return tuple(parse_card(c) for c in text.split(",") if c)


@functools.lru_cache(maxsize=4096)
def trick_to_proto(trick: Trick) -> pb.Trick:
    """A completed trick as a message.

    Cached: every request of a hand repeats the hand's completed tricks.  The
    cached message is only ever copied into requests, never changed.
    """
    names = CARD_NAMES
    return pb.Trick(leader=trick.leader, cards=[names[c] for c in trick.cards], winner=trick.winner)


@functools.lru_cache(maxsize=64)
def _completed_tricks(tricks: tuple[Trick, ...]) -> pb.SeatView:
    """A view holding only ``tricks``, to be merged into requests (never changed).

    Every request of a hand repeats the hand's completed tricks: one merge of
    this cached message costs about half as much as adding them one by one.
    """
    return pb.SeatView(tricks=[trick_to_proto(t) for t in tricks])


def fill_view(message: pb.SeatView, view: EngineView) -> None:
    """Write the engine's view of one seat into ``message``: nothing more than the view holds.

    Filling a message in place is about half the cost of keyword
    construction plus copying (this is on every decision's path).
    """
    names = CARD_NAMES
    if view.tricks:
        # First, into the empty message: the completed tricks in one C-level merge.
        try:
            message.MergeFrom(_completed_tricks(tuple(view.tricks)))
        except TypeError:  # a view built by hand, with lists inside: not cacheable
            message.tricks.extend([trick_to_proto.__wrapped__(t) for t in view.tricks])
    message.seat = view.seat
    message.hand_number = view.hand_number
    message.first = view.first
    if view.hand is None:
        message.hand_hidden = True
    else:
        message.hand.extend([names[c] for c in view.hand])
    message.bids.extend([-1 if b is None else b for b in view.bids])
    message.blind.extend(view.blind)
    message.tricks_won.extend(view.tricks_won)
    message.leader = -1 if view.leader is None else view.leader
    for seat, card in view.current_trick:
        play = message.current_trick.add()
        play.seat = seat
        play.card = names[card]
    message.spades_broken = view.spades_broken
    message.scores.extend(view.scores)
    message.bags.extend(view.bags)
    if view.offered_card is not None:
        message.offered_card = names[view.offered_card]
    if view.seen_discards:
        message.seen_discards.extend([names[c] for c in view.seen_discards])
    if view.exchanged:
        message.exchanged.extend(view.exchanged)


def view_to_proto(view: EngineView) -> pb.SeatView:
    """The engine's view of one seat as a message."""
    message = pb.SeatView()
    fill_view(message, view)
    return message


def fill_request(
    message: pb.DecisionRequest, request_id: int, view: EngineView, move_ms: int, bank_ms: int,
    allowed_ms: int = 0,
) -> None:  # fmt: skip
    """Write a decision request for the seat of ``view`` (which must be to move) into ``message``.

    ``allowed_ms`` is what the referee will enforce for this decision (0: not said).
    """
    kind = view.decision
    assert kind is not None, "only the seat to move is asked"
    message.request_id = request_id
    message.kind = KIND_TO_PROTO[kind]  # type: ignore[assignment]
    fill_view(message.view, view)
    if kind is Decision.PLAY:
        names = CARD_NAMES
        message.legal.extend([names[c] for c in view.legal_actions])
    else:
        message.legal.extend([action_text(kind, a) for a in view.legal_actions])
    message.move_ms = move_ms
    message.bank_ms = bank_ms
    if allowed_ms:
        message.allowed_ms = allowed_ms


def request_to_proto(
    request_id: int, view: EngineView, move_ms: int, bank_ms: int, allowed_ms: int = 0
) -> pb.DecisionRequest:
    """A decision request message for the seat of ``view``."""
    message = pb.DecisionRequest()
    fill_request(message, request_id, view, move_ms, bank_ms, allowed_ms)
    return message


def request_message(
    request_id: int, view: EngineView, move_ms: int, bank_ms: int, allowed_ms: int = 0
) -> pb.RefereeMessage:
    """The referee's message carrying a decision request, built in place (no copies)."""
    message = pb.RefereeMessage()
    fill_request(message.request, request_id, view, move_ms, bank_ms, allowed_ms)
    return message


# The referee's messages other than requests: one builder each, used by the referee
# (arena.referee) and the local harness (arena_sdk.testing) alike, so a bot sees the
# same bytes in both.


def welcome_message(
    match_id: str,
    seat: int,
    rules: Ruleset,
    *,
    move_ms: int,
    bank_ms: int,
    hard_cap_ms: int,
    strikes_to_forfeit: int,
    games: int,
    seat_names: Sequence[str],
    clock: str = "wall",
) -> pb.Welcome:
    """The Welcome a seat gets when it joins: its seat, partner, the rules and the clock.

    ``clock``: ``wall`` or ``cpu``, what the time control counts (docs/time-control.md).
    """
    n = rules.players
    return pb.Welcome(
        match_id=match_id,
        seat=seat,
        partner=(seat + 2) % 4 if n == 4 else -1,
        players=n,
        ruleset_json=json.dumps(rules.to_dict(), separators=(",", ":")),
        ruleset_hash=rules.hash,
        time_control=pb.TimeControl(
            move_ms=move_ms, bank_ms=bank_ms, hard_cap_ms=hard_cap_ms, strikes_to_forfeit=strikes_to_forfeit,
            clock=pb.CLOCK_CPU if clock == "cpu" else pb.CLOCK_WALL,
        ),
        games=games,
        seat_names=list(seat_names),
        protocol_version=PROTOCOL_VERSION,
    )


def game_start_message(
    index: int, game_id: str, bot_seed: int, first: int, scores: Sequence[int], bags: Sequence[int]
) -> pb.RefereeMessage:
    """A game begins: its index and id, the seat's bot seed, who acts first, the scores so far."""
    return pb.RefereeMessage(
        game_start=pb.GameStart(
            game_index=index, game_id=game_id, bot_seed=bot_seed, first=first, scores=scores, bags=bags
        )
    )


@functools.lru_cache(maxsize=8)
def hand_end_message(hand: HandResult, tricks: tuple[Trick, ...], players: int) -> pb.RefereeMessage:
    """The HandEnd message of a hand: built once, sent to every seat (never changed)."""
    return pb.RefereeMessage(
        hand_end=pb.HandEnd(
            hand_number=hand.number,
            result_json=json.dumps(hand_result_to_json(players, hand), separators=(",", ":")),
            tricks=[trick_to_proto(t) for t in tricks],
            scores=[t.score_after for t in hand.teams],
            bags=[t.bags_after for t in hand.teams],
        )
    )


def game_end_message(
    index: int, game_id: str, ending: str, winner: int | None, scores: Sequence[int], bags: Sequence[int]
) -> pb.RefereeMessage:
    """A game ended: how (its ending), the winning side (-1: none) and the final scores."""
    return pb.RefereeMessage(
        game_end=pb.GameEnd(
            game_index=index, game_id=game_id, ending=ending,
            winner=-1 if winner is None else winner, scores=scores, bags=bags,
        )  # fmt: skip
    )


def answer_to_proto(
    request_id: int, kind: Decision, action: Any, think_time_us: int = 0
) -> pb.Answer:
    """An answer message carrying ``action`` in the field for ``kind``.

    Raises :class:`MalformedInputError` for a value that cannot be sent as an
    answer of that kind (a bid that is not a whole number 0 or more, a card
    index outside 0..51, a draw or blind-nil answer that is not a bool).
    Whether the value is legal now is the referee's business: a bid of 14 is
    sent as it is and refused there.
    """
    answer = pb.Answer(request_id=request_id, think_time_us=max(0, int(think_time_us)))
    if kind is Decision.PLAY:
        answer.card = _card_text(action)
    elif kind is Decision.BID:
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < 2**32:
            raise MalformedInputError(f"a bid must be a whole number 0-13, got {action!r}")
        answer.bid = int(action)
    elif kind is Decision.BLIND_NIL:
        answer.blind_nil = _check_bool(kind, action)
    elif kind is Decision.DRAW:
        answer.keep = _check_bool(kind, action)
    else:
        if isinstance(action, (str, bytes)) or not hasattr(action, "__iter__"):
            raise MalformedInputError(f"an exchange must be a list of 0-3 cards, got {action!r}")
        cards = list(action)
        if len(cards) > 13:
            raise MalformedInputError(f"an exchange of {len(cards)} cards is not a hand's worth")
        answer.exchange.SetInParent()  # an empty exchange is still an answer
        answer.exchange.cards.extend(_card_text(c) for c in cards)
    return answer


def _card_text(card: Any) -> str:
    """The text of a card given as a :class:`Card`, an index 0..51 or text (sent as it is)."""
    if isinstance(card, str):
        return card
    if isinstance(card, int) and not isinstance(card, bool) and 0 <= card < len(CARDS):
        return CARD_NAMES[card]
    raise MalformedInputError(f"a card must be a Card like Card.SA, got {card!r}")


def _check_bool(kind: Decision, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise MalformedInputError(f"a {kind.value} answer must be True or False, got {value!r}")


def answer_from_proto(kind: Decision, answer: pb.Answer) -> Any:
    """The engine action an answer carries; :class:`MalformedInputError` if it carries none.

    Legality is not checked here: that is the engine's business.
    """
    field = answer.WhichOneof("action")
    expected = ANSWER_FIELD[kind]
    if field != expected:
        raise MalformedInputError(
            f"a {kind.value} answer must set {expected!r}, got {field or 'no action'!r}"
        )
    if kind is Decision.PLAY:
        return parse_card(answer.card)
    if kind is Decision.BID:
        return int(answer.bid)
    if kind is Decision.BLIND_NIL:
        return bool(answer.blind_nil)
    if kind is Decision.DRAW:
        return bool(answer.keep)
    cards = list(answer.exchange.cards)
    if len(cards) > 13:
        raise MalformedInputError(f"an exchange of {len(cards)} cards is not a hand's worth")
    return tuple(parse_card(c) for c in cards)


def cards_from_text(texts: Sequence[str]) -> tuple[Card, ...]:
    """Parse card texts from a message."""
    return tuple(parse_cards(texts))
