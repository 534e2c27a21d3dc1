"""A table's cards and answers in words: what the page, its messages and the hints say."""

from __future__ import annotations

from arena_sdk.engine import Decision

SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
RANK_NAMES = {"T": "10", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}


def card_words(text: str) -> str:
    """``"SA"`` -> ``"ace of spades"``: how the page and its messages name a card."""
    if len(text) != 2 or text[0] not in SUIT_NAMES:
        return repr(text[:8])
    return f"{RANK_NAMES.get(text[1], text[1])} of {SUIT_NAMES[text[0]]}"


def describe(kind: Decision, text: str) -> str:
    """An answer in words, for the person."""
    if kind is Decision.PLAY:
        return f"the {card_words(text)}"
    if kind is Decision.BID:
        return "a bid of nil" if text == "0" else f"a bid of {text}"
    if kind is Decision.BLIND_NIL:
        return "blind nil" if text == "true" else "no blind nil"
    if kind is Decision.DRAW:
        return "keeping the card" if text == "keep" else "discarding the card"
    cards = [c for c in text.split(",") if c]
    return "returning " + (", ".join(card_words(c) for c in cards) if cards else "no cards")


__all__ = ["RANK_NAMES", "SUIT_NAMES", "card_words", "describe"]
