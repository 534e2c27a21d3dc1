"""Cards, suits and hands as bitmasks.

A card has one index form (0..51, ``suit * 13 + rank``) and one text form
(``"SA"``, ``"HT"``, ``"C2"``: suit letter then rank letter).  Suits are ordered
clubs, diamonds, hearts, spades, so spades (the trump suit) hold the highest
indices and a larger index within a suit is a higher card.  That canonical
order is the order of legal actions everywhere in the engine.

A hand is an ``int`` with bit ``i`` set for card ``i``; the helpers here turn
masks into card lists and back.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from arena_sdk.engine.errors import MalformedInputError

SUIT_LETTERS = "CDHS"
RANK_LETTERS = "23456789TJQKA"
NUM_CARDS = 52
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3

#: Bitmask of each suit's 13 cards, indexed by suit.
SUIT_MASKS: tuple[int, ...] = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))
SPADE_MASK = SUIT_MASKS[SPADES]
NON_SPADE_MASK = SUIT_MASKS[CLUBS] | SUIT_MASKS[DIAMONDS] | SUIT_MASKS[HEARTS]
FULL_DECK_MASK = (1 << NUM_CARDS) - 1


class Suit(enum.IntEnum):
    """A suit; the value is its position in the canonical order."""

    C = CLUBS
    D = DIAMONDS
    H = HEARTS
    S = SPADES

    def __str__(self) -> str:
        return self.name


class Card(enum.IntEnum):
    """One of the 52 cards; the value is its index, the name its text form."""

    # fmt: off
    C2 = 0; C3 = 1; C4 = 2; C5 = 3; C6 = 4; C7 = 5; C8 = 6; C9 = 7; CT = 8; CJ = 9; CQ = 10; CK = 11; CA = 12  # noqa: E702,E501
    D2 = 13; D3 = 14; D4 = 15; D5 = 16; D6 = 17; D7 = 18; D8 = 19; D9 = 20; DT = 21; DJ = 22; DQ = 23; DK = 24; DA = 25  # noqa: E702,E501
    H2 = 26; H3 = 27; H4 = 28; H5 = 29; H6 = 30; H7 = 31; H8 = 32; H9 = 33; HT = 34; HJ = 35; HQ = 36; HK = 37; HA = 38  # noqa: E702,E501
    S2 = 39; S3 = 40; S4 = 41; S5 = 42; S6 = 43; S7 = 44; S8 = 45; S9 = 46; ST = 47; SJ = 48; SQ = 49; SK = 50; SA = 51  # noqa: E702,E501
    # fmt: on

    @property
    def suit(self) -> Suit:
        """The card's suit."""
        return SUITS[self // 13]

    @property
    def rank(self) -> int:
        """Rank within the suit: 0 for the two up to 12 for the ace."""
        return self % 13

    @property
    def mask(self) -> int:
        """The one-bit mask of this card."""
        return 1 << self

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)


SUITS: tuple[Suit, ...] = tuple(Suit)
#: Cards by index: ``CARDS[i]`` is much cheaper than ``Card(i)``.
CARDS: tuple[Card, ...] = tuple(Card)
#: Text forms by index (``Card.name`` is a slow descriptor; this is a tuple lookup).
CARD_NAMES: tuple[str, ...] = tuple(c.name for c in CARDS)
_BY_TEXT: dict[str, Card] = {c.name: c for c in CARDS}


def parse_card(text: str) -> Card:
    """Parse the text form (``"SA"``, ``"h10"`` is not accepted: use ``"HT"``).

    Lower case is accepted.  Raises :class:`MalformedInputError` naming the text.
    """
    if not isinstance(text, str):
        raise MalformedInputError(f"a card must be text like 'SA', got {text!r}")
    card = _BY_TEXT.get(text.strip().upper())
    if card is None:
        raise MalformedInputError(
            f"malformed card {text!r}: expected a suit letter (C, D, H, S) "
            f"then a rank (2-9, T, J, Q, K, A), like 'SA' or 'HT'"
        )
    return card


def parse_cards(texts: Iterable[str]) -> list[Card]:
    """Parse several cards; see :func:`parse_card`."""
    by_text = _BY_TEXT
    out = []
    for t in texts:
        card = by_text.get(t)  # the canonical form, as on the wire: no normalising needed
        out.append(card if card is not None else parse_card(t))
    return out


def card_text(index: int) -> str:
    """Text form of a card index."""
    return CARD_NAMES[index]


def mask_of(cards: Iterable[int]) -> int:
    """The bitmask holding ``cards``."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def cards_of(mask: int) -> list[Card]:
    """The cards in ``mask``, in canonical (ascending) order."""
    out: list[Card] = []
    append = out.append
    while mask:
        low = mask & -mask
        append(CARDS[low.bit_length() - 1])
        mask ^= low
    return out


def indices_of(mask: int) -> list[int]:
    """Like :func:`cards_of` but plain ints (for hot loops)."""
    out: list[int] = []
    append = out.append
    while mask:
        low = mask & -mask
        append(low.bit_length() - 1)
        mask ^= low
    return out
