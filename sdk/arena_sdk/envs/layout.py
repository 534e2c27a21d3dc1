"""The observation and action layouts of the learning environments (docs/learning.md).

Standard library only: the tables here are the contract between an
environment, a trained policy and the bot that plays it, so a policy file can
be checked against them anywhere.

Seats in an observation are *relative*: slot 0 is the observing seat, slot
``k`` the seat ``k`` places after it in play order (four players: 1 the left
opponent, 2 the partner, 3 the right opponent; two players: 1 the opponent,
slots 2 and 3 stay zero).  Teams likewise: "own" is the observing seat's team.
So one network plays every seat, and the same layout serves every preset.
"""

from __future__ import annotations

from typing import NamedTuple

#: Relative seat slots in every per-seat block (two-player games use the first two).
SEAT_SLOTS = 4
#: Bid one-hot width: "no bid yet", then bids 0..13.
BID_SLOTS = 15
#: Numeric features are clipped to this magnitude (the observation space's bounds).
FEATURE_BOUND = 4.0


class Block(NamedTuple):
    """One named run of observation features."""

    name: str
    offset: int
    size: int
    meaning: str


def _blocks(spec: list[tuple[str, int, str]]) -> tuple[Block, ...]:
    out: list[Block] = []
    offset = 0
    for name, size, meaning in spec:
        out.append(Block(name, offset, size, meaning))
        offset += size
    return tuple(out)


#: The observation vector, in order.  Card blocks are 52 wide in the engine's card
#: order (index = suit * 13 + rank; clubs, diamonds, hearts, spades; 2 low, ace high).
BLOCKS: tuple[Block, ...] = _blocks([
    ("hand", 52, "1 for each card in my hand (all 0 while I must decide blind nil unseen)"),
    ("played", 4 * 52, "per relative seat: 1 for each card that seat played this hand (tricks done and the trick in progress)"),
    ("trick", 4 * 52, "per relative seat: 1 for the card that seat played to the trick in progress"),
    ("seen_discards", 52, "two players: 1 for each card I saw go to the discards this hand"),
    ("offered", 52, "two players, draw decision: 1 for the card I am offered"),
    ("marked", 52, "exchange decision: 1 for each card already chosen to return"),
    ("bids", 4 * BID_SLOTS, "per relative seat: one-hot of its bid (slot 0: no bid yet; slot 1 + b: bid b)"),
    ("blind", 4, "per relative seat: 1 if its bid is a blind nil"),
    ("tricks_won", 4, "per relative seat: tricks won this hand / 13"),
    ("voids", 4 * 4, "per relative seat and suit (C, D, H, S): 1 once that seat has failed to follow the suit this hand"),
    ("dealer", 4, "one-hot relative seat of the dealer (two players: the hand's first player)"),
    ("leader", 4, "one-hot relative seat that led the trick in progress (all 0 when no card is on the table)"),
    ("exchanged", 4, "two players: per relative seat, cards it returned in the blind-nil exchange / 3"),
    ("spades_broken", 1, "1 once spades are broken"),
    ("hand_hidden", 1, "1 while my cards are hidden (blind nil to decide)"),
    ("decision", 5, "one-hot decision kind: blind_nil, draw, exchange, bid, play (all 0 when not my turn)"),
    ("scores", 2, "own team's and the other team's score at the start of the hand / target (clipped to +-4)"),
    ("bags", 2, "own team's and the other team's bags / bag_threshold (clipped to 4)"),
    ("hand_number", 1, "hand number / max_hands"),
    ("rules", 18, "the ruleset's options, see RULE_FEATURES"),
])  # fmt: skip

BLOCK = {b.name: b for b in BLOCKS}
#: Length of the observation vector.
OBSERVATION_SIZE = BLOCKS[-1].offset + BLOCKS[-1].size

#: The 18 features of the ``rules`` block, in order, with how each is scaled.
RULE_FEATURES: tuple[str, ...] = (
    "four players (1) or two (0)",
    "target / 500",
    "lose_floor set (1) or none (0)",
    "lose_floor / 500 (0 when none)",
    "nil_value / 100",
    "blind_nil off", "blind_nil any", "blind_nil first-bidder",
    "blind_nil_value / 200",
    "blind_nil_min_deficit / 100",
    "failed_nil_tricks bags", "failed_nil_tricks contract",
    "spade_lead broken", "spade_lead trumped", "spade_lead always",
    "bag_threshold / 10",
    "bag_penalty / 100",
    "max_hands / 200",
)  # fmt: skip
assert len(RULE_FEATURES) == BLOCK["rules"].size

#: Decision kinds in the order of the ``decision`` block.
DECISION_ORDER: tuple[str, ...] = ("blind_nil", "draw", "exchange", "bid", "play")

# ------------------------------------------------------------------ actions

#: Actions 0..51: a card (play it; in an exchange, return it).
CARD_ACTIONS = range(0, 52)
#: Actions 52..65: bid 0..13 (52 is nil).
BID_BASE = 52
BID_ACTIONS = range(BID_BASE, BID_BASE + 14)
#: Blind nil: decline, or bid it.
DECLINE_BLIND_NIL = 66
BID_BLIND_NIL = 67
#: Two-player draw: keep the offered card, or discard it and take the next.
KEEP_OFFERED = 68
TAKE_NEXT = 69
#: Exchange: stop choosing cards and return those chosen (at most three).
FINISH_EXCHANGE = 70
#: Number of actions (the action space is ``Discrete(ACTION_COUNT)``).
ACTION_COUNT = 71
#: The most cards a blind-nil exchange returns: the exchange ends by itself after the third.
MAX_EXCHANGE = 3

ACTIONS: tuple[tuple[str, str], ...] = (
    ("0-51", "a card by index: play it, or in an exchange choose it to return"),
    ("52-65", "bid 0-13 (52 is nil)"),
    ("66", "decline blind nil"),
    ("67", "bid blind nil"),
    ("68", "two-player draw: keep the offered card"),
    ("69", "two-player draw: discard it and take the next card"),
    ("70", "exchange: return the cards chosen so far (none: exchange nothing)"),
)


def action_name(action: int) -> str:
    """A readable name of an action id (``"play SA"``, ``"bid 4"``, ``"finish exchange"``)."""
    from arena_sdk.engine.cards import CARDS

    if 0 <= action < 52:
        return f"card {CARDS[action].name}"
    if action in BID_ACTIONS:
        return f"bid {action - BID_BASE}"
    names = {
        DECLINE_BLIND_NIL: "decline blind nil",
        BID_BLIND_NIL: "bid blind nil",
        KEEP_OFFERED: "keep the offered card",
        TAKE_NEXT: "take the next card",
        FINISH_EXCHANGE: "finish the exchange",
    }
    if action in names:
        return names[action]
    raise ValueError(f"no action {action!r}: actions are 0..{ACTION_COUNT - 1}")
