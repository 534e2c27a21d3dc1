"""Fast play-phase simulation for Hard: rollouts and exact endgames on bitmasks.

A sampled world (an engine :class:`~arena_sdk.engine.GameState` at a play
decision) is reduced to what the rest of the hand depends on: each seat's
cards as a bitmask, the trick on the table, who is to play, the tricks won
and whether spades are broken.  The rest of the hand is then played on those
few integers, without the engine's history, trick records or next-hand setup
(about three times cheaper per rollout than ``GameState.play_out_hand``).

The value of a finished hand depends only on the tricks each seat won (the
bids, scores and bags are the same in every world of one decision), so
:class:`Scorer` asks the engine's own scoring once per distinct outcome and
remembers it: the objective is the engine's points (contract, nil, bags,
the bag penalty) with bags at their amortised cost (:func:`hand_value`), plus
a bonus for winning the game when the hand ends it.

:func:`solve` searches the rest of the hand exactly (both sides playing
perfectly with all cards visible: a double-dummy search) with alpha-beta
pruning, equivalent cards tried once and a transposition table of positions
at trick boundaries.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any

from arena_sdk.bots.rollout import make_pick
from arena_sdk.engine import Decision, GameState
from arena_sdk.engine.core import compiled as _compiled

#: The compiled core (rollouts in C, the same cards from the same numbers), or None.
_fast: Any = _compiled

NON_SPADE = (1 << 39) - 1
FIRST_SPADE = 39
#: Per card: the mask of its suit.
SUIT_OF = tuple(0x1FFF << (13 * (c // 13)) for c in range(52))
#: Worth of winning the game outright when the hand ends it (points).
GAME_BONUS = 250


def beats(card: int, top: int) -> bool:
    """``card`` beats the trick's winning card ``top`` (same suit and higher, or a spade on a side suit)."""
    return (card // 13 == top // 13 and card > top) or (card >= FIRST_SPADE and top < FIRST_SPADE)


class Scorer:
    """Value of a finished hand for one team, from the tricks each seat won (memoised).

    Built from any world of the decision: bids, blind nils, scores and bags
    are public, so they are the same in all of them.
    """

    __slots__ = ("_template", "team", "hand", "_memo")

    def __init__(self, world: GameState, team: int) -> None:
        self._template = world
        self.team = team
        self.hand = world.hand_number
        self._memo: dict[tuple[int, ...], float] = {}

    def __call__(self, won: tuple[int, ...]) -> float:
        got = self._memo.get(won)
        if got is None:
            got = self._memo[won] = self._score(won)
        return got

    def _score(self, won: tuple[int, ...]) -> float:
        state = self._template.clone()
        state.tricks_won = list(won)
        state._finish_hand()  # the engine's own scoring and end-of-game check
        return hand_value(state, self.team, self.hand)


def hand_value(state: GameState, team: int, hand: int) -> float:
    """Worth of hand ``hand`` to ``team`` minus its worth to the other side (plus the game bonus).

    A side's worth is its points with every bag charged its share of the
    penalty (``bag_penalty / bag_threshold``, 10 points in most presets),
    not the penalty when the count crosses the threshold: the bags carried
    are a debt either way, so the tenth bag is not worse than the first.
    Valued by the crossing alone, a side sitting on nine bags ducks tricks
    at any risk of being set, and a side on none takes bags for free (the
    round 4 sprt against the 30 × 30 reference: Hard set in 17 of 35 hands
    begun on seven bags or more; ``bench/hands_by_bags.py``).  When the hand ends the game the carried
    bags no longer matter, so its worth is the points as scored.
    """
    for result in reversed(state.hand_results):
        if result.number == hand:
            break
    else:
        return 0.0
    game = state.result if state.hand_number == hand else None  # set when this hand ended the game
    rules = state.rules
    per_bag = rules.bag_penalty / rules.bag_threshold if rules.bag_penalty and game is None else 0.0
    mine, theirs = result.teams[team], result.teams[1 - team]
    value = float(mine.points - theirs.points)
    if per_bag:
        # Debt carried after the hand minus before (a crossing's penalty comes back out of it).
        value -= per_bag * ((mine.bags_after - mine.bags_before) - (theirs.bags_after - theirs.bags_before))
    if game is not None:
        if game.winner == team:
            value += GAME_BONUS
        elif game.winner is not None:
            value -= GAME_BONUS
    return value


class Position:
    """The play-phase part of a world: hands, trick, seat to play, tricks won, spades broken."""

    __slots__ = ("hands", "trick", "seat", "won", "broken", "n", "lead_breaks", "lead_any")

    def __init__(self, hands: list[int], trick: list[int], seat: int, won: list[int], broken: bool,
                 n: int, lead_breaks: bool, lead_any: bool) -> None:  # fmt: skip
        self.hands = hands
        self.trick = trick
        self.seat = seat
        self.won = won
        self.broken = broken
        self.n = n
        self.lead_breaks = lead_breaks
        self.lead_any = lead_any

    @classmethod
    def of(cls, state: GameState) -> Position:
        """The position of a state at a play decision."""
        if state.decision is not Decision.PLAY or state.to_move is None:
            raise ValueError("a Position needs a state at a play decision")
        rule = state.rules.spade_lead
        return cls(list(state.hands), list(state.trick), state.to_move, list(state.tricks_won),
                   state.spades_broken, state.players, rule == "broken", rule == "always")  # fmt: skip

    def copy(self) -> Position:
        """An independent copy."""
        return Position(self.hands[:], self.trick[:], self.seat, self.won[:], self.broken,
                        self.n, self.lead_breaks, self.lead_any)  # fmt: skip

    def legal(self) -> int:
        """Mask of the cards the seat to play may play."""
        hand = self.hands[self.seat]
        if self.trick:
            return hand & SUIT_OF[self.trick[0]] or hand
        if self.broken or self.lead_any or not hand & NON_SPADE:
            return hand
        return hand & NON_SPADE

    def play(self, card: int) -> None:
        """Play ``card`` (assumed legal) for the seat to play; a full trick is collected."""
        seat = self.seat
        self.hands[seat] ^= 1 << card
        trick = self.trick
        if trick:
            if card >= FIRST_SPADE and trick[0] < FIRST_SPADE:
                self.broken = True
        elif card >= FIRST_SPADE and self.lead_breaks:
            self.broken = True
        trick.append(card)
        n = self.n
        if len(trick) < n:
            self.seat = seat + 1 if seat + 1 < n else 0
            return
        top, pos = trick[0], 0
        for i in range(1, n):
            if beats(trick[i], top):
                top, pos = trick[i], i
        winner = (seat - (n - 1 - pos)) % n
        self.won[winner] += 1
        trick.clear()
        self.seat = winner

    def done(self) -> bool:
        """True once every card of the hand is played."""
        return not self.trick and not any(self.hands)


def rollout(pos: Position, bids: list[int], rand: Callable[[], float], noise: float = 0.1,
            pick: Callable[[int, int], int] | None = None) -> tuple[int, ...]:  # fmt: skip
    """Play ``pos`` (mutated) to the end of the hand with the rollout policy; the tricks won.

    ``pick(seat, legal_mask)`` replaces the policy (it must read ``pos.trick``
    and ``pos.won`` live, as :func:`~arena_sdk.bots.rollout.make_pick` does).
    """
    hands, trick, won, n = pos.hands, pos.trick, pos.won, pos.n
    if pick is None:
        pick = make_pick(n, bids, won, trick, rand, noise)
    seat = pos.seat
    broken = pos.broken
    lead_breaks, lead_any = pos.lead_breaks, pos.lead_any
    k = len(trick)
    if k:
        lead_mask = SUIT_OF[trick[0]]
        win_card, win_pos = trick[0], 0
        for i in range(1, k):
            if beats(trick[i], win_card):
                win_card, win_pos = trick[i], i
        win_seat = (seat - k + win_pos) % n
    else:
        lead_mask = win_card = win_seat = 0
    while True:
        hand = hands[seat]
        if not hand:
            break
        if k:
            legal = hand & lead_mask or hand
        elif broken or lead_any or not hand & NON_SPADE:
            legal = hand
        else:
            legal = hand & NON_SPADE
        card = pick(seat, legal)
        hands[seat] = hand ^ (1 << card)
        trick.append(card)
        if not k:
            win_card, win_seat = card, seat
            lead_mask = SUIT_OF[card]
            if card >= FIRST_SPADE and lead_breaks:
                broken = True
        else:
            if (card // 13 == win_card // 13 and card > win_card) or (card >= FIRST_SPADE > win_card):
                win_card, win_seat = card, seat
            if card >= FIRST_SPADE > trick[0]:
                broken = True
        k += 1
        if k < n:
            seat = seat + 1 if seat + 1 < n else 0
            continue
        won[win_seat] += 1
        trick.clear()
        k = 0
        seat = win_seat
    pos.seat, pos.broken = seat, broken
    return tuple(won)


def rollout_cards(start: Position, cards: Sequence[int], bids: list[int], luck: Sequence[float],
                  noise: float = 0.1) -> list[tuple[int, ...]]:  # fmt: skip
    """Per card: a copy of ``start`` with the card played, rolled out replaying ``luck`` (cycled) from its start.

    Hard's work per world (common random numbers: every card's rollout draws
    the same numbers).  In the compiled core when it is there (one call, the
    same tricks); ``start`` is left as it was.
    """
    if _fast is not None:
        return _fast.rollout_cards(start, cards, bids, luck, noise)
    out = []
    for c in cards:
        pos = start.copy()
        pos.play(c)
        out.append(rollout(pos, bids, itertools.cycle(luck).__next__, noise))
    return out


def rollout_luck(pos: Position, bids: list[int], luck: Sequence[float], noise: float = 0.1) -> tuple[int, ...]:
    """``rollout(pos, bids, itertools.cycle(luck).__next__, noise)``, in the compiled core when it is there."""
    if _fast is not None:
        return _fast.rollout(pos, bids, luck, noise)  # type: ignore[no-any-return]
    return rollout(pos, bids, itertools.cycle(luck).__next__, noise)


def draw_luck(rng: random.Random, count: int) -> list[float]:
    """``[rng.random() for _ in range(count)]`` (drawn in the compiled core when it is there: the same numbers)."""
    if _fast is not None:
        return _fast.randoms(rng, count)  # type: ignore[no-any-return]
    return [rng.random() for _ in range(count)]


class Deadline(Exception):
    """The exact search ran out of time (its caller falls back on rollouts)."""


def solve(pos: Position, team: int, score: Scorer, clock: Callable[[], float], deadline: float,
          alpha: float = -1e9, beta: float = 1e9) -> float:  # fmt: skip
    """Exact value of ``pos`` for ``team`` with every card visible (alpha-beta, double dummy).

    ``pos`` is left as it was.  Raises :class:`Deadline` past ``deadline``.
    """
    table: dict[tuple[object, ...], tuple[float, float, float]] = {}
    counter = [0]
    return _ab(pos, team, score, clock, deadline, alpha, beta, table, counter)


def _moves(pos: Position, legal: int) -> list[int]:
    """The legal cards, one of each run of equivalent cards (cheapest first)."""
    remaining = pos.hands[0]
    for h in pos.hands[1:]:
        remaining |= h
    for c in pos.trick:
        remaining |= 1 << c
    out = []
    m = legal
    while m:
        low = m & -m
        m ^= low
        c = low.bit_length() - 1
        below = remaining & SUIT_OF[c] & (low - 1)
        if below and legal >> (below.bit_length() - 1) & 1:
            continue  # the next lower card still out is ours too: the same card in effect
        out.append(c)
    return out


def _ab(pos: Position, team: int, score: Scorer, clock: Callable[[], float], deadline: float,
        alpha: float, beta: float, table: dict[tuple[object, ...], tuple[float, float, float]],
        counter: list[int]) -> float:  # fmt: skip
    if pos.done():
        return score(tuple(pos.won))
    key: tuple[object, ...] | None = None
    if not pos.trick:
        counter[0] += 1
        if counter[0] & 63 == 0 and clock() > deadline:
            raise Deadline
        key = (*pos.hands, pos.seat, *pos.won)
        hit = table.get(key)
        if hit is not None:
            lo, hi, v = hit
            if lo >= beta or hi <= alpha or lo == hi:
                return v if lo == hi else (lo if lo >= beta else hi)
    seat = pos.seat
    hands, won, trick = pos.hands, pos.won, pos.trick
    if len(trick) + sum(h.bit_count() for h in hands) <= pos.n:  # the last trick: every card forced
        final = won[:]
        cards = trick + [hands[(seat + i) % pos.n].bit_length() - 1 for i in range(pos.n - len(trick))]
        top, at = cards[0], 0
        for i in range(1, pos.n):
            if beats(cards[i], top):
                top, at = cards[i], i
        final[(seat - len(trick) + at) % pos.n] += 1
        return score(tuple(final))
    maximise = seat % 2 == team
    moves = _moves(pos, pos.legal())
    a0, b0 = alpha, beta
    best = -1e18 if maximise else 1e18
    for card in moves:
        saved_hands = hands[:]
        saved_won = won[:]
        saved_trick = trick[:]
        saved_seat, saved_broken = pos.seat, pos.broken
        pos.play(card)
        v = _ab(pos, team, score, clock, deadline, alpha, beta, table, counter)
        pos.hands[:] = saved_hands
        pos.won[:] = saved_won
        pos.trick[:] = saved_trick
        pos.seat, pos.broken = saved_seat, saved_broken
        if maximise:
            if v > best:
                best = v
            if best > alpha:
                alpha = best
        else:
            if v < best:
                best = v
            if best < beta:
                beta = best
        if alpha >= beta:
            break
    if key is not None:
        # Bounds: a fail-high value is a lower bound, a fail-low one an upper bound.
        if best <= a0:
            table[key] = (-1e18, best, best)
        elif best >= b0:
            table[key] = (best, 1e18, best)
        else:
            table[key] = (best, best, best)
    return best
