"""Features of each legal card, computed from the seat's own view: what the card-play network reads.

The environments' observation (750 numbers) describes the whole table; a
network over it has to learn from scratch what "this card wins the trick"
means for each of 52 cards.  Card play learns far faster when every legal
card is described by what it would do: would it win the trick now, is it the
cheapest card that wins, is my partner already winning, is any unseen card of
its suit higher, does it break spades.  :func:`card_features` computes those
numbers, one row per legal card, from a :class:`~arena_sdk.envs.SeatKnowledge`
(the same object the observation is built from: the engine's view in
training, the referee's view in the bot), so nothing comes from hidden cards
(``tests/learn`` moves every hidden card and checks the rows do not change).

Each row is the decision's context (:data:`CONTEXT`, the same for every card)
followed by the card's own features (:data:`CARD`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from arena_sdk.envs import SeatKnowledge

#: The decision's context, the same in every row (name per column).
CONTEXT = (
    "first_to_play", "second_to_play", "third_to_play", "fourth_to_play", "last_to_play",
    "tricks_left",
    "we_need", "we_are_over", "we_are_set", "they_need", "they_are_over", "they_are_set",
    "my_nil_alive", "partner_nil_alive", "left_nil_alive", "right_nil_alive",
    "our_bags", "their_bags", "spades_broken",
    "led_spade", "partner_winning", "opponent_winning", "trumped", "nil_bidder_winning",
    "partner_to_play", "opponents_to_play", "later_opponent_void_in_led",
    "later_nil_alive_partner", "later_nil_alive_opponent",
    "my_spades", "unseen_spades",
)  # fmt: skip
#: The card's own features (name per column).
CARD = (
    "spade", "rank", "follows", "trumps", "discards",
    "wins_now", "overtakes_partner", "cheapest_winner", "safe_win",
    "higher_unseen", "lower_unseen", "boss", "unseen_in_suit", "my_length",
    "lowest_of_suit", "highest_of_suit", "lowest_card", "highest_card",
    "lead_into_opponent_void", "lead_into_partner_void", "breaks_spades",
)  # fmt: skip
#: Numbers per row.
FEATURE_COUNT = len(CONTEXT) + len(CARD)

SPADES = 3
ALL_CARDS = (1 << 52) - 1
SUIT_MASK = tuple(0x1FFF << (13 * s) for s in range(4))
#: Per card: the cards of its suit above it.
ABOVE = tuple(SUIT_MASK[c // 13] & ~((2 << c) - 1) for c in range(52))
#: Per card: the cards of its suit below it.
BELOW = tuple(SUIT_MASK[c // 13] & ((1 << c) - 1) for c in range(52))


def beats(card: int, best: int) -> bool:
    """True if ``card`` played now takes the trick from ``best``, the card winning it so far."""
    if card // 13 == best // 13:
        return card > best
    return card // 13 == SPADES


def _contract(k: SeatKnowledge, team: int, left: int) -> list[float]:
    """A team's tricks still needed, tricks over its contract (over 13), and 1 if it can no longer make it."""
    bid = taken = 0
    counted_nil = k.rules.failed_nil_tricks == "contract"
    for s in range(team, k.rules.players, 2):
        bid += k.bids[s] or 0
        if k.bids[s] or counted_nil:
            taken += k.tricks_won[s]
    return [max(0, bid - taken) / 13, max(0, taken - bid) / 13, float(bid - taken > left)]


def _voids(k: SeatKnowledge) -> list[int]:
    """Per seat: a bit per suit it has shown it lacks (failed to follow) this hand."""
    n = k.rules.players
    voids = [0] * n
    for trick in k.tricks:
        led = trick.cards[0] // 13
        for i, card in enumerate(trick.cards):
            if card // 13 != led:
                voids[(trick.leader + i) % n] |= 1 << led
    if k.current_trick:
        led = k.current_trick[0][1] // 13
        for seat, card in k.current_trick:
            if card // 13 != led:
                voids[seat] |= 1 << led
    return voids


class _Trick(NamedTuple):
    """Where the trick in progress stands, for the seat to play."""

    best: int | None
    """The card winning it so far (``None``: I lead)."""
    led: int | None
    partner_winning: bool
    last: bool
    later_opponent_void: bool
    """An opponent still to play has shown it lacks the led suit (it may trump)."""


def _context(k: SeatKnowledge, hand: int, unseen: int, voids: list[int]) -> tuple[list[float], _Trick]:
    """The context columns, and where the trick stands."""
    n = k.rules.players
    me = k.seat
    partner = (me + 2) % n if n == 4 else None
    trick = k.current_trick
    pos = len(trick)
    later = [(me + i) % n for i in range(1, n - pos)]
    left = 13 - len(k.tricks)
    threshold = k.rules.bag_threshold
    alive = [float(b == 0 and t == 0) for b, t in zip(k.bids, k.tricks_won)]  # a nil not yet broken
    winner = best = None
    for seat, card in trick:
        if best is None or beats(card, best):
            winner, best = seat, card
    led = trick[0][1] // 13 if trick else None
    opponents_later = [s for s in later if s % 2 != me % 2]
    partner_winning = winner is not None and winner == partner
    later_void = led is not None and any(voids[s] >> led & 1 for s in opponents_later)
    row = [
        *(float(pos == i) for i in range(4)), float(pos == n - 1),
        left / 13, *_contract(k, me % 2, left), *_contract(k, 1 - me % 2, left),
        alive[me], 0.0 if partner is None else alive[partner], alive[(me + 1) % n], alive[(me + n - 1) % n],
        min(1.0, k.bags[me % 2] / threshold), min(1.0, k.bags[1 - me % 2] / threshold), float(k.spades_broken),
        float(led == SPADES), float(partner_winning), float(winner is not None and winner % 2 != me % 2),
        float(best is not None and led != SPADES and best // 13 == SPADES), 0.0 if winner is None else alive[winner],
        float(partner in later), len(opponents_later) / 2, float(later_void),
        float(partner in later and alive[partner] > 0), float(any(alive[s] for s in opponents_later)),
        (hand & SUIT_MASK[SPADES]).bit_count() / 13, (unseen & SUIT_MASK[SPADES]).bit_count() / 13,
    ]  # fmt: skip
    return row, _Trick(best, led, partner_winning, pos == n - 1, later_void)


def card_features(k: SeatKnowledge) -> tuple[list[int], np.ndarray]:
    """The legal cards of a play decision and their feature rows (float32, one row per card).

    ``k`` must be a play decision of the seat (``k.kind`` is ``Decision.PLAY``).
    """
    legal = [int(c) for c in k.legal]
    hand = 0
    for c in k.hand or ():
        hand |= 1 << c
    played = 0
    for trick in k.tricks:
        for c in trick.cards:
            played |= 1 << int(c)
    for _, c in k.current_trick:
        played |= 1 << c
    for c in k.seen_discards:
        played |= 1 << c
    unseen = ALL_CARDS & ~hand & ~played
    voids = _voids(k)
    context, t = _context(k, hand, unseen, voids)
    best, led = t.best, t.led
    winners = [c for c in legal if best is not None and beats(c, best)]
    cheapest = min(winners, key=lambda c: (c // 13 == SPADES, c)) if winners else None
    low_card = min(legal, key=lambda c: (c // 13 == SPADES, c % 13))
    high_card = max(legal, key=lambda c: (c // 13 == SPADES, c % 13))
    n = k.rules.players
    partner = (k.seat + 2) % n if n == 4 else None
    opponents = [s for s in range(n) if s % 2 != k.seat % 2]
    own: list[tuple[float, ...]] = []
    for c in legal:
        suit = c // 13
        mine = hand & SUIT_MASK[suit]
        wins = c in winners
        higher = (unseen & ABOVE[c]).bit_count()
        leading = led is None
        own.append((
            float(suit == SPADES), (c % 13) / 12,
            float(suit == led), float(led is not None and suit == SPADES != led),
            float(led is not None and suit != led and suit != SPADES),
            float(wins), float(wins and t.partner_winning), float(c == cheapest),
            float(wins and (t.last or (higher == 0 and (suit == SPADES or not t.later_opponent_void)))),
            higher / 13, (unseen & BELOW[c]).bit_count() / 13, float(higher == 0),
            (unseen & SUIT_MASK[suit]).bit_count() / 13, mine.bit_count() / 13,
            float(not mine & BELOW[c]), float(not mine & ABOVE[c]), float(c == low_card), float(c == high_card),
            float(leading and suit != SPADES and any(voids[s] >> suit & 1 for s in opponents)),
            float(leading and partner is not None and suit != SPADES and bool(voids[partner] >> suit & 1)),
            float(suit == SPADES and not k.spades_broken),
        ))  # fmt: skip
    rows = np.empty((len(legal), FEATURE_COUNT), dtype=np.float32)
    rows[:, : len(CONTEXT)] = context
    rows[:, len(CONTEXT) :] = own
    return legal, rows
