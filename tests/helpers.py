"""Shared test helpers: decks that deal chosen hands, scripted play."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from arena_sdk.engine import Card, GameState, parse_cards


def deck_dealing(hands: Mapping[int, Sequence[str]], dealer: int) -> list[int]:
    """A four-player deck order that deals ``hands`` (seat -> 13 card texts) from ``dealer``.

    Cards go one at a time clockwise starting left of the dealer, so deck
    position ``i`` goes to seat ``(dealer + 1 + i) % 4``.
    """
    parsed = {seat: parse_cards(cards) for seat, cards in hands.items()}
    assert sorted(len(c) for c in parsed.values()) == [13, 13, 13, 13]
    deck = [int(parsed[(dealer + 1 + i) % 4][i // 4]) for i in range(52)]
    assert sorted(deck) == list(range(52)), "the four hands must hold each card once"
    return deck


def suit_cards(suit: str, ranks: str = "23456789TJQKA") -> list[str]:
    """Card texts of ``suit`` for the given rank letters."""
    return [suit + r for r in ranks]


def play_cards(state: GameState, texts: Iterable[str]) -> None:
    """Apply a sequence of card plays given as text."""
    for card in parse_cards(texts):
        state.apply(card)


def hand_of(state: GameState, seat: int) -> list[Card]:
    """The cards ``seat`` holds now (through its own view)."""
    hand = state.view(seat).hand
    assert hand is not None
    return list(hand)
