"""The JSON form of actions, shared by game records and the wire protocol.

=============  =====================  ==========================
kind           engine value           JSON
=============  =====================  ==========================
``play``       ``Card.SA``            ``"SA"``
``bid``        ``4``                  ``4``
``blind_nil``  ``True`` / ``False``   ``true`` / ``false``
``draw``       ``True`` / ``False``   ``"keep"`` / ``"discard"``
``exchange``   ``(Card.H2, Card.C3)`` ``["C3", "H2"]``
=============  =====================  ==========================
"""

from __future__ import annotations

from typing import Any

from arena_sdk.engine.cards import CARDS, parse_card
from arena_sdk.engine.errors import MalformedInputError
from arena_sdk.engine.state import Decision


def parse_decision(text: object) -> Decision:
    """A :class:`Decision` from its name; raises :class:`MalformedInputError`."""
    try:
        return Decision(text)
    except ValueError:
        names = ", ".join(d.value for d in Decision)
        raise MalformedInputError(f"unknown decision kind {text!r}; kinds are {names}") from None


def action_to_json(kind: Decision, action: Any) -> Any:
    """The JSON value of an engine action of kind ``kind``."""
    if kind is Decision.PLAY:
        return CARDS[action].name
    if kind is Decision.BID:
        return int(action)
    if kind is Decision.BLIND_NIL:
        return bool(action)
    if kind is Decision.DRAW:
        return "keep" if action else "discard"
    return [CARDS[c].name for c in sorted(action)]


def action_from_json(kind: Decision, value: Any) -> Any:
    """Parse the JSON value of an action; malformed values raise :class:`MalformedInputError`.

    Whether the action is legal is the state's business (:meth:`GameState.apply`).
    """
    if kind is Decision.PLAY:
        return parse_card(value)
    if kind is Decision.BID:
        if isinstance(value, bool) or not isinstance(value, int):
            raise MalformedInputError(f"a bid must be a whole number, got {value!r}")
        return value
    if kind is Decision.BLIND_NIL:
        if not isinstance(value, bool):
            raise MalformedInputError(f"a blind_nil answer must be true or false, got {value!r}")
        return value
    if kind is Decision.DRAW:
        if value not in ("keep", "discard"):
            raise MalformedInputError(f"a draw answer must be 'keep' or 'discard', got {value!r}")
        return value == "keep"
    if not isinstance(value, list):
        raise MalformedInputError(f"an exchange must be a list of cards, got {value!r}")
    return tuple(parse_card(v) for v in value)
