"""Conversion between the engine's values and the wire messages of ``arena.v1``.

Both sides use this module: the referee turns engine views into
``DecisionRequest`` messages and ``Answer`` messages into engine actions; the
SDK does the reverse.  The in-process test harness goes through it too, so a
bot tested locally sees exactly what it would see over the wire.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from arena_sdk.engine import CARDS, Card, Decision, MalformedInputError, parse_card, parse_cards
from arena_sdk.engine.cards import CARD_NAMES
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


def view_to_proto(view: EngineView) -> pb.SeatView:
    """The engine's view of one seat as a message: nothing more than the view holds."""
    names = CARD_NAMES
    return pb.SeatView(
        seat=view.seat,
        hand_number=view.hand_number,
        first=view.first,
        hand=[names[c] for c in view.hand] if view.hand is not None else [],
        hand_hidden=view.hand is None,
        bids=[-1 if b is None else b for b in view.bids],
        blind=view.blind,
        tricks_won=view.tricks_won,
        leader=-1 if view.leader is None else view.leader,
        current_trick=[pb.Play(seat=s, card=names[c]) for s, c in view.current_trick],
        tricks=[trick_to_proto(t) for t in view.tricks],
        spades_broken=view.spades_broken,
        scores=view.scores,
        bags=view.bags,
        offered_card=names[view.offered_card] if view.offered_card is not None else "",
        seen_discards=[names[c] for c in view.seen_discards],
        exchanged=view.exchanged,
    )


def request_to_proto(
    request_id: int, view: EngineView, move_ms: int, bank_ms: int
) -> pb.DecisionRequest:
    """A decision request for the seat of ``view`` (which must be to move)."""
    kind = view.decision
    assert kind is not None, "only the seat to move is asked"
    return pb.DecisionRequest(
        request_id=request_id,
        kind=KIND_TO_PROTO[kind],  # type: ignore[arg-type]
        view=view_to_proto(view),
        legal=[action_text(kind, a) for a in view.legal_actions],
        move_ms=move_ms,
        bank_ms=bank_ms,
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
