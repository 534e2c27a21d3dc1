"""Hard: search over sampled deals (perfect-information Monte Carlo).

Play
    Draws worlds consistent with what the seat knows (:mod:`arena_sdk.sampling`,
    voids, spade leads and a bid model), and for each world and each legal
    card plays the hand out with the bid-aware rollout policy
    (:mod:`arena_sdk.bots.rollout`).  In the last tricks (two with four
    players, four with two) each world is searched exactly instead
    (minimax on the hand score).  Medium's card stands unless another
    gains clearly in the same worlds (over 1.5 standard errors, at least six
    worlds); within a world every card's rollout makes the same random
    choices (common random numbers), so the comparison sees the cards, not
    the rollouts' luck.
Bidding
    By simulation: Medium's bid and its neighbours (and nil on a weak, low
    hand) are each tried in the same sampled worlds with the same random
    choices, the other seats bidding by their trick estimate; Medium's bid
    stands unless another is clearly better.
Objective
    The hand's real score difference (contract, nil, bags and the bag
    penalty, through the engine's own scoring) plus a bonus for winning the
    game when the hand ends it (target or floor): so bags near the
    threshold, the target and the floor count as they do.
Time
    A strict per-move budget (``budget_s``, default 0.35 s, never more than
    half the referee's move time); checked between rollouts, each well under
    a millisecond.  The other decisions (blind nil, draw, exchange) are Medium's.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable

from arena_sdk.bots.medium import MediumBot, nil_hand
from arena_sdk.bots.rollout import rollout_policy
from arena_sdk.engine import CARDS, Card, Decision, GameState
from arena_sdk.sampling import DealSampler, InconsistentView, honour_bid_model, quick_tricks
from arena_sdk.view import View

DEFAULT_BUDGET_S = 0.35
#: Worth of winning the game outright when a rollout's hand ends it.
GAME_BONUS = 250
#: How much better (points per world) another bid must be than Medium's.
BID_MARGIN = 4.0
#: A searched card replaces Medium's only with a mean gain above Z standard errors...
Z = 1.5
#: ...measured over at least this many worlds.
MIN_WORLDS = 6


def hand_value(state: GameState, team: int, hand: int) -> float:
    """Points of ``team`` minus the other side's in hand ``hand`` (plus the game bonus)."""
    for result in reversed(state.hand_results):
        if result.number == hand:
            break
    else:
        return 0.0
    value = float(result.teams[team].points - result.teams[1 - team].points)
    if state.result is not None and state.hand_number == hand:
        if state.result.winner == team:
            value += GAME_BONUS
        elif state.result.winner is not None:
            value -= GAME_BONUS
    return value


class HardBot(MediumBot):
    """Perfect-information Monte Carlo over sampled deals; see the module docstring."""

    name = "builtin-hard"
    version = "1"

    def __init__(self, budget_s: float | None = None, *, exact_tricks: int | None = None) -> None:
        super().__init__()
        self.budget_s = DEFAULT_BUDGET_S if budget_s is None else budget_s
        self.exact_tricks = exact_tricks
        self.bid_model = honour_bid_model()
        #: Seconds spent per decision (for tests and benchmarks).
        self.spent: list[float] = []

    # ------------------------------------------------------------ time

    def _deadline(self, view: View) -> float:
        budget = self.budget_s
        if view.move_ms:
            budget = min(budget, view.move_ms / 1000.0 * 0.5)
        return view.received_at + budget

    # ------------------------------------------------------------ play

    def play(self, view: View) -> Card:
        legal = view.legal_cards()
        if len(legal) == 1:
            return legal[0]
        started = time.monotonic()
        try:
            card = self._search_play(view, legal)
        except InconsistentView:
            card = None
        self.spent.append(time.monotonic() - started)
        return card if card is not None else super().play(view)

    def _search_play(self, view: View, legal: list[Card]) -> Card | None:
        deadline = self._deadline(view)
        prior = int(super().play(view))  # Medium's card: kept unless the search clearly beats it
        sampler = DealSampler(view, self.bid_model)
        rng = self.rng
        team = view.team
        hand = view.hand_number
        tricks_left = 13 - len(view.tricks)
        exact = self.exact_tricks if self.exact_tricks is not None else (2 if view.players == 4 else 4)
        cards = [int(c) for c in legal]
        diffs: dict[int, list[float]] = {c: [] for c in cards if c != prior}
        clock = time.monotonic
        while clock() < deadline:
            world = sampler.sample(rng)
            # Common random numbers: every card's rollout in this world makes
            # the same random choices, so the paired differences measure the
            # cards, not the rollouts' luck (their spread is much smaller).
            luck = rng.getstate()
            values: dict[int, float] = {}
            for c in cards:
                if tricks_left <= exact:
                    v = _minimax(world, c, team, hand, clock, deadline)
                else:
                    rng.setstate(luck)
                    v = None if clock() > deadline else _rollout(world, c, team, hand, rng)
                if v is None:
                    break
                values[c] = v
            else:
                for c, d in diffs.items():
                    d.append(values[c] - values[prior])  # paired: same world
        return CARDS[_best(prior, diffs)]

    # ------------------------------------------------------------ bidding

    def bid(self, view: View) -> int:
        base = super().bid(view)
        started = time.monotonic()
        try:
            chosen = self._search_bid(view, base)
        except InconsistentView:
            chosen = base
        self.spent.append(time.monotonic() - started)
        return chosen

    def _search_bid(self, view: View, base: int) -> int:
        deadline = self._deadline(view)
        sampler = DealSampler(view)
        rng = self.rng
        team = view.team
        hand = view.hand_number
        candidates = sorted({b for b in (base - 1, base, base + 1) if 1 <= b <= 13})
        if base == 0 or (view.partner_bid != 0 and _nil_worth_trying(view)):
            candidates = sorted(set(candidates) | {0})
        totals = dict.fromkeys(candidates, 0.0)
        worlds = 0
        while time.monotonic() < deadline:
            world = sampler.sample(rng)
            luck = rng.getstate()  # the same rollout choices for every bid (as in play)
            for b in candidates:
                rng.setstate(luck)
                sim = world.clone()
                sim.apply(b)
                _finish_bidding(sim, hand)
                if sim.hand_number == hand and sim.decision is Decision.PLAY:
                    sim.play_out_hand(rollout_policy(sim, rng))
                totals[b] += hand_value(sim, team, hand)
            worlds += 1
        if worlds < 8:
            return base
        best = max(totals, key=lambda b: totals[b])
        if totals[best] - totals[base] > BID_MARGIN * worlds:
            return best
        return base


def _nil_worth_trying(view: View) -> bool:
    """A hand on which a simulated nil is worth testing.

    Medium's safe-nil rule, or a hand with under one quick trick, no spade
    above the nine and at most three spades.  (Before the rollouts attacked
    a nil, simulated nils on weak hands failed about one time in three.)
    """
    if nil_hand(view.hand):
        return True
    cards = [int(c) for c in view.hand]
    spades = [c % 13 for c in cards if c >= 39]
    return len(spades) <= 3 and all(r <= 7 for r in spades) and quick_tricks(cards, view.players) < 1.0


def _rollout(world: GameState, card: int, team: int, hand: int, rng: random.Random) -> float:
    """Value of ``card`` in one world: the hand played out by the rollout policy."""
    sim = world.clone()
    sim.apply(CARDS[card])
    if sim.hand_number == hand and sim.decision is Decision.PLAY:
        sim.play_out_hand(rollout_policy(sim, rng))
    return hand_value(sim, team, hand)


def _best(prior: int, diffs: dict[int, list[float]]) -> int:
    """The card whose mean gain over ``prior`` is largest and clearly above 0, else ``prior``.

    "Clearly": more than ``Z`` standard errors over at least ``MIN_WORLDS``
    worlds, so a search starved of time falls back on Medium's choice.
    """
    best, best_mean = prior, 0.0
    for c, d in diffs.items():
        if len(d) < MIN_WORLDS:
            continue
        mean = statistics.fmean(d)
        se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else math.inf
        if mean > best_mean and mean > Z * se:
            best, best_mean = c, mean
    return best


def _finish_bidding(state: GameState, hand: int) -> None:
    """The other seats bid their rough trick count (no blind nils)."""
    while state.hand_number == hand and state.decision in (Decision.BID, Decision.BLIND_NIL):
        if state.decision is Decision.BLIND_NIL:
            state.apply(False)
            continue
        seat = state.to_move
        cards = [c for c in range(52) if state.hands[seat] >> c & 1]  # type: ignore[index]
        est = quick_tricks(cards, state.players)
        state.apply(0 if est < 0.8 else max(1, min(13, round(est))))


def _minimax(world: GameState, card: int, team: int, hand: int, clock: Callable[[], float], deadline: float) -> float | None:
    """Exact value of playing ``card`` in this world (both sides playing perfectly)."""
    sim = world.clone()
    sim.apply(CARDS[card])
    return _search(sim, team, hand, clock, deadline)


def _search(state: GameState, team: int, hand: int, clock: Callable[[], float], deadline: float) -> float | None:
    if state.hand_number != hand or state.decision is not Decision.PLAY:
        return hand_value(state, team, hand)
    if clock() > deadline:
        return None
    mask = state.legal_play_mask()
    maximise = state.to_move is not None and state.to_move % 2 == team
    best: float | None = None
    while mask:
        low = mask & -mask
        mask ^= low
        child = state.clone()
        child.play_legal(child.to_move, low.bit_length() - 1)  # type: ignore[arg-type]
        value = _search(child, team, hand, clock, deadline)
        if value is None:
            return None
        if best is None or (value > best if maximise else value < best):
            best = value
    return best
