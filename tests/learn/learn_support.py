"""Shared pieces of the learning-environment tests: rulesets to cover, random walks, scrambles."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import numpy as np

from arena_sdk.engine import Decision, GameState, Ruleset, resolve_ruleset
from arena_sdk.engine.cards import indices_of
from arena_sdk.envs import layout
from arena_sdk.envs.table import Table

#: Every preset, and option sets that change what an observation or a mask holds.
RULESETS: dict[str, Ruleset] = {
    "pagat": resolve_ruleset("pagat"),
    "wikipedia": resolve_ruleset("wikipedia"),
    "cards4": resolve_ruleset("cards4"),
    "two-player": resolve_ruleset("two-player"),
    "pagat+contract+always": resolve_ruleset(
        "pagat", {"failed_nil_tricks": "contract", "spade_lead": "always", "target": 300}
    ),
    "wikipedia+deficit": resolve_ruleset("wikipedia", {"blind_nil_min_deficit": 100, "lose_floor": -300}),
    "cards4+no-penalty": resolve_ruleset("cards4", {"bag_penalty": 0, "bag_threshold": 5}),
    "two-player+no-blind": resolve_ruleset("two-player", {"blind_nil": "off", "nil_value": 50}),
}


def short(rules: Ruleset, hands: int = 3) -> Ruleset:
    """The same rules with a game cut at ``hands`` hands (tests that walk many games)."""
    return Ruleset.from_dict({**rules.to_dict(), "max_hands": hands})


def random_action(mask: np.ndarray, rng: random.Random, *, blind_rate: float = 0.3) -> int:
    """A legal action id; blind nil is bid often enough to reach its hidden-hand states."""
    legal = [int(a) for a in np.flatnonzero(mask)]
    if layout.BID_BLIND_NIL in legal:
        return layout.BID_BLIND_NIL if rng.random() < blind_rate else layout.DECLINE_BLIND_NIL
    if layout.FINISH_EXCHANGE in legal and len(legal) > 1 and rng.random() < 0.7:
        legal.remove(layout.FINISH_EXCHANGE)  # return a card or two, not always none
    if any(layout.BID_BASE <= a < layout.BID_BASE + 14 for a in legal):  # realistic bids, some nils
        return layout.BID_BASE + (0 if rng.random() < 0.15 else rng.randint(1, 5))
    return rng.choice(legal)


def walk(rules: Ruleset, seed: int, rng: random.Random) -> Iterator[Table]:
    """Random legal play of one game through a :class:`Table`, yielding it before every action."""
    table = Table(rules, illegal="raise")
    table.reset(seed)
    while not table.over:
        yield table
        seat = table.to_move
        assert seat is not None
        table.step(random_action(table.observe(seat)["action_mask"], rng))


def hidden_from(state: GameState, seat: int) -> list[tuple[str, int, int]]:
    """Where the cards ``seat`` cannot see are: ``(place, index, card)``.

    Places: ``hand`` (index = a seat, its cards), ``stock`` (index = a stock
    position), ``discard`` (index = a position in the discards).
    """
    places: list[tuple[str, int, int]] = []
    own_visible = state.hand_is_visible(seat)
    for s, mask in enumerate(state.hands):
        if s != seat or not own_visible:
            places += [("hand", s, c) for c in indices_of(mask)]
    if state.players == 2:
        offered = state.stock_pos if state.decision is Decision.DRAW and state.to_move == seat else -1
        for pos in range(state.stock_pos, len(state.stock)):
            if pos != offered:
                places.append(("stock", pos, state.stock[pos]))
        seen = state.seen_discards[seat]
        for pos, card in enumerate(state.discards):
            if not seen >> card & 1:
                places.append(("discard", pos, card))
    return places


def scramble(state: GameState, seat: int, rng: random.Random) -> tuple[GameState, int]:
    """A copy of ``state`` with every card ``seat`` cannot see dealt anew among the same places.

    Returns the copy and how many hidden cards moved.
    """
    places = hidden_from(state, seat)
    cards = [c for _, _, c in places]
    shuffled = cards[:]
    rng.shuffle(shuffled)
    other = state.clone()
    hands = [0] * state.players
    for s, mask in enumerate(state.hands):
        if s == seat and state.hand_is_visible(seat):
            hands[s] = mask
    other.stock = list(state.stock)  # a clone shares the stock: give the copy its own
    for (place, index, _), card in zip(places, shuffled, strict=True):
        if place == "hand":
            hands[index] |= 1 << card
        elif place == "stock":
            other.stock[index] = card
        else:
            other.discards[index] = card
    other.hands = hands
    moved = sum(a != b for a, b in zip(cards, shuffled, strict=True))
    return other, moved


#: What a seat is shown, as named arrays: an observation and mask, or features of one's own.
Observe = Callable[[Table, int], dict[str, np.ndarray]]


def observe_in(state: GameState, table: Table, seat: int, observe: Observe) -> dict[str, np.ndarray]:
    """``observe`` on ``state``, with the table's exchange choice in progress kept."""
    saved = table.state
    table.state = state
    try:
        return observe(table, seat)
    finally:
        table.state = saved


def blind_spots(rules_name: str, observe: Observe, games: int = 3) -> tuple[int, int, list[str]]:
    """Deal every card each seat cannot see anew, at every decision of random games, and compare
    what ``observe`` shows the seat before and after.

    Returns (seats checked, hidden cards moved, differences found).  A seat
    ``observe`` shows nothing (an empty dict) is not counted as checked.
    """
    rules = short(RULESETS[rules_name])
    rng = random.Random(rules_name)
    checked = moved_total = 0
    differences: list[str] = []
    for game in range(games):
        for table in walk(rules, seed=f"hidden-{rules_name}-{game}", rng=rng):
            state = table.state
            assert state is not None
            for seat in range(rules.players):
                before = observe_in(state, table, seat, observe)
                other, moved = scramble(state, seat, rng)
                after = observe_in(other, table, seat, observe)
                if not before and not after:
                    continue
                checked += 1
                moved_total += moved
                for key in sorted(before.keys() | after.keys()):
                    if key not in before or key not in after or not np.array_equal(before[key], after[key]):
                        differences.append(
                            f"game {game} hand {state.hand_number} seat {seat} {state.decision}: {key} changed"
                        )
    return checked, moved_total, differences
