"""Benchmark bot: a flat Monte Carlo player, the reference opponent for Hard (issue 27).

Written for this project from the published description of the kind of
player the open-source Cards With Cats app uses (no code taken from it):

- **Play**: for every legal card, ``deals`` sampled deals × ``rollouts``
  rollouts each; the card with the best mean outcome is played.  A deal is
  drawn uniformly from those consistent with what the seat has seen (its own
  cards, the cards played, the voids shown: :class:`arena_sdk.sampling.DealSampler`
  without a bid model).  Every card is tried in the same deals.  A rollout
  plays the card, then the rest of the hand with the simple rule policy
  below (a few random moves, so the rollouts of one deal differ).  The
  outcome is the hand's points for the seat's side minus the other side's,
  from the engine's own scoring.
- **Bids**: by rules (:func:`rule_bid`): aces, guarded kings and queens,
  spade length, ruffing value of short suits; nil on a hand with almost no
  tricks and no high spade.
- Blind nil: never; the two-player draw and exchange: the SDK defaults.

``deals`` × ``rollouts`` is 30 × 30 by default (``FlatMCBot(deals, rollouts)``;
run by hand as ``python bench/bots/flat_mc.py [DEALSxROLLOUTS]`` with
``ARENA_ADDRESS``/``ARENA_TOKEN`` set; ``bench/strength.py`` names it
``flatmc`` or ``flatmc:DxR``).  The cost of a decision is about
cards × deals × rollouts playouts of the rest of the hand.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence

from arena_sdk import Bot, Card, View, run
from arena_sdk.bots.rollout import highest, lowest
from arena_sdk.bots.simulate import Position
from arena_sdk.bots.simulate import rollout as simulate_rollout
from arena_sdk.engine import CARDS, Decision, GameState
from arena_sdk.sampling import DealSampler, InconsistentView

DEFAULT_DEALS = 30
DEFAULT_ROLLOUTS = 30
#: Share of a rollout's choices made uniformly at random (so rollouts of one deal differ).
NOISE = 0.15

_SUIT = 0x1FFF
_NON_SPADE = (1 << 39) - 1


def parse_size(text: str) -> tuple[int, int]:
    """``"30x30"`` -> ``(30, 30)``; ``ValueError`` on anything else."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"expected DEALSxROLLOUTS such as 30x30, got {text!r}")
    deals, rollouts = (int(p) for p in parts)
    if deals < 1 or rollouts < 1:
        raise ValueError(f"deals and rollouts must be at least 1, got {text!r}")
    return deals, rollouts


def rule_bid(hand: Sequence[int], partner_bid: int | None, players: int) -> int:
    """A rule bid from the hand's cards (indices: suit * 13 + rank, rank 12 = ace)."""
    suits: list[list[int]] = [[], [], [], []]
    for c in hand:
        suits[c // 13].append(c % 13)
    spades = suits[3]
    tricks = 0.0
    for s in range(3):
        ranks = suits[s]
        n = len(ranks)
        if 12 in ranks:
            tricks += 1.0 if n <= 6 else 0.5
        if 11 in ranks and n >= 2:
            tricks += 0.75 if n <= 5 else 0.4
        if 10 in ranks and n >= 3:
            tricks += 0.3
        if len(spades) >= 3 and n <= 1:  # a void or singleton to ruff with
            tricks += 0.6 if n == 0 else 0.4
    tricks += sum(1.0 if r >= 11 else 0.6 for r in spades if r >= 10)  # the A, K (and Q) of trumps
    tricks += max(0, len(spades) - 3) * 0.9  # each trump beyond the third is a likely trick
    if players == 2:
        tricks *= 1.15
    top_spade = max(spades, default=-1)
    if tricks < 1.0 and top_spade <= 8 and len(spades) <= 3 and partner_bid != 0:
        return 0
    return max(1, min(13, round(tricks)))


def rule_policy(state: GameState, rng: random.Random) -> Callable[[int, int], int]:
    """A ``pick(seat, legal_mask)`` for ``GameState.play_out_hand``: simple card-play rules.

    Nil bidders play their highest losing card; a side still short of its
    bid wins cheaply (lowest winning card when last to play, the highest
    otherwise) unless the partner is already winning; a side that has made
    its bid plays low; leads are the highest side-suit card while the side
    needs tricks, else the lowest card.  ``NOISE`` of the choices are random.
    Reads ``state.trick`` and ``state.tricks_won`` live (the playout updates them).
    Written on bitmasks (the first version looped over the 52 cards per pick:
    the same choices, tests/bots/test_flat_mc.py compares them).
    """
    n = state.players
    bids = [b or 0 for b in state.bids]
    won = state.tricks_won  # updated in place by play_out_hand
    trick = state.trick
    rand = rng.random
    # Fixed for the hand: each side's contract and the seats whose tricks count towards it.
    bidders = [tuple(s for s in range(team, n, 2) if bids[s]) for team in range(2)]
    contract = [sum(bids[s] for s in seats) for seats in bidders]

    def pick(seat: int, legal: int) -> int:
        if not legal & (legal - 1):
            return legal.bit_length() - 1
        if rand() < NOISE:
            for _ in range(int(rand() * legal.bit_count())):
                legal &= legal - 1
            return (legal & -legal).bit_length() - 1
        team = seat % 2
        need = contract[team] > sum(won[s] for s in bidders[team])
        nil = bids[seat] == 0
        k = len(trick)
        if not k:
            if nil or not need:
                return lowest(legal)
            return highest(legal & _NON_SPADE or legal)
        top, top_pos = trick[0], 0
        for i in range(1, k):
            c = trick[i]
            if (c > top and c // 13 == top // 13) or (c >= 39 and top < 39):
                top, top_pos = c, i
        # The cards that beat ``top``: higher ones of its suit, and any spade over a side suit.
        winners = legal & (_SUIT << (13 * (top // 13))) & -(2 << top)
        if top < 39:
            winners |= legal & ~_NON_SPADE
        losers = legal & ~winners
        if nil:
            return highest(losers) if losers else highest(legal)
        partner_winning = n == 4 and top_pos == k - 2
        if not need or partner_winning or not winners:
            return highest(losers) if not need and losers else lowest(legal)
        if k == n - 1:
            return lowest(winners)
        follow = winners & (_SUIT << (13 * (trick[0] // 13)))
        return highest(follow) if follow else lowest(winners)

    return pick


def outcome(state: GameState, team: int, hand: int) -> float:
    """The hand's points of ``team`` minus the other side's (0 if the hand is not scored)."""
    for result in reversed(state.hand_results):
        if result.number == hand:
            return float(result.teams[team].points - result.teams[1 - team].points)
    return 0.0


class FlatMCBot(Bot):
    """Flat Monte Carlo over sampled deals with rule-based rollouts; see the module docstring."""

    name = "bench-flat-mc"
    version = "1"
    #: Play the rollouts through ``GameState.play_out_hand`` (the first version; the same games, 3-4x the CPU).
    engine_rollouts = False

    def __init__(self, deals: int = DEFAULT_DEALS, rollouts: int = DEFAULT_ROLLOUTS) -> None:
        super().__init__()
        if deals < 1 or rollouts < 1:
            raise ValueError("deals and rollouts must be at least 1")
        self.deals = deals
        self.rollouts = rollouts

    def bid(self, view: View) -> int:
        return rule_bid([int(c) for c in view.hand], view.partner_bid, view.players)

    def play(self, view: View) -> Card:
        legal = view.legal_cards()
        if len(legal) == 1:
            return legal[0]
        try:
            sampler = DealSampler(view)
        except InconsistentView:
            return legal[0]
        rng = self.rng
        team, hand = view.team, view.hand_number
        cards = [int(c) for c in legal]
        totals = dict.fromkeys(cards, 0.0)
        memo: dict[tuple[int, ...], float] = {}
        for _ in range(self.deals):
            world = sampler.sample(rng)
            for c in cards:
                start = world.clone()
                start.apply(CARDS[c])
                if not self.engine_rollouts and start.hand_number == hand and start.decision is Decision.PLAY:
                    totals[c] += self._bitmask_rollouts(start, team, hand, rng, memo)
                    continue
                for _ in range(self.rollouts):
                    sim = start.clone()
                    if sim.hand_number == hand and sim.decision is Decision.PLAY:
                        sim.play_out_hand(rule_policy(sim, rng))
                    totals[c] += outcome(sim, team, hand)
        best = max(cards, key=lambda c: totals[c])
        return CARDS[best]

    def _bitmask_rollouts(self, start: GameState, team: int, hand: int, rng: random.Random,
                          memo: dict[tuple[int, ...], float]) -> float:  # fmt: skip
        """The sum of ``rollouts`` rollouts' outcomes from ``start``, played on bitmasks.

        The same policy with the same random numbers and the same scoring as
        ``GameState.play_out_hand`` (a test plays whole games both ways and
        compares them), without cloning the engine's state per rollout.  The
        outcome depends only on the tricks each seat won (bids, scores and
        bags are public), so each distinct one is scored once per decision.
        """
        first = Position.of(start)
        total = 0.0
        for _ in range(self.rollouts):
            pos = first.copy()
            live = _Live(start.players, start.bids, pos.won, pos.trick)
            won = simulate_rollout(pos, [], rng.random, pick=rule_policy(live, rng))  # type: ignore[arg-type]
            value = memo.get(won)
            if value is None:
                scored = start.clone()
                scored.tricks_won = list(won)
                scored._finish_hand()  # the engine's own scoring
                value = memo[won] = outcome(scored, team, hand)
            total += value
        return total


class _Live:
    """What :func:`rule_policy` reads of a state: its bids and the live trick and tricks won."""

    __slots__ = ("players", "bids", "tricks_won", "trick")

    def __init__(self, players: int, bids: list[int | None], tricks_won: list[int], trick: list[int]) -> None:
        self.players = players
        self.bids = bids
        self.tricks_won = tricks_won
        self.trick = trick


if __name__ == "__main__":
    import _hooks

    _hooks.install()
    args = sys.argv[1:]
    size = (DEFAULT_DEALS, DEFAULT_ROLLOUTS)
    if args and not args[0].startswith("-"):
        size = parse_size(args.pop(0))
    run(FlatMCBot(*size), args)
