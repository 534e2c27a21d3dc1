"""A fast rollout policy on bitmasks, for :meth:`GameState.play_out_hand`.

Each seat plays by a few cheap rules that know the bids: a nil bidder ducks;
its partner covers it (wins over it, leads high); its opponents try to set it
(play low while it is still to play, stay under it once it is winning, lead
low); a side that still needs tricks wins them cheaply (highest when others
follow, lowest winner when last) and lets a partner's winning card stand; a
side whose contract is safe ducks; leads are high from a side suit when the
side needs tricks, else low.  Without the nil rules a simulated nil looked
safer than it is (the opponents never went after it), and a bid search
trusted nils that then failed.  ``noise`` of the decisions are uniformly random,
so rollouts explore.  Chosen by experiment over uniform random rollouts
(see docs/builtin-bots.md): it ranks moves much better at the same cost.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from arena_sdk.engine import GameState

_LOW = tuple((m & -m).bit_length() - 1 if m else -1 for m in range(1 << 13))
_HIGH = tuple(m.bit_length() - 1 for m in range(1 << 13))
SUIT = 0x1FFF
NON_SPADE = (1 << 39) - 1


def lowest(mask: int) -> int:
    """The lowest card in the mask, side suits before spades (ties: the lowest suit)."""
    pool = mask & NON_SPADE or mask
    r = _LOW[(pool | pool >> 13 | pool >> 26 | pool >> 39) & SUIT]  # the lowest rank held in any suit
    bit = 1 << r
    while not pool & bit:
        bit <<= 13
        r += 13
    return r


def highest(mask: int) -> int:
    """The highest card of the highest rank (ties: the highest suit, so spades win)."""
    r = _HIGH[(mask | mask >> 13 | mask >> 26 | mask >> 39) & SUIT] + 39  # the highest rank held in any suit
    bit = 1 << r
    while not mask & bit:
        bit >>= 13
        r -= 13
    return r


def rollout_policy(state: GameState, rng: random.Random, noise: float = 0.1) -> Callable[[int, int], int]:
    """A ``pick(seat, legal_mask)`` for ``state.play_out_hand`` (reads the live trick)."""
    bids = [b if b is not None else 0 for b in state.bids]
    return make_pick(state.players, bids, state.tricks_won, state.trick, rng.random, noise)


def make_pick(
    n: int, bids: list[int], tricks_won: list[int], trick: list[int], rand: Callable[[], float], noise: float = 0.1
) -> Callable[[int, int], int]:
    """The policy as a ``pick(seat, legal_mask)`` over live lists.

    ``tricks_won`` and ``trick`` are read at every pick, so the caller's
    playout must update those very lists (as ``GameState.play_out_hand`` and
    :mod:`arena_sdk.bots.simulate` do).  ``rand`` is the only source of
    randomness (one call decides a random move, one more picks it), so a
    caller can replay the same choices by replaying the same numbers.
    """
    contract = [0, 0]
    for s in range(n):
        contract[s % 2] += bids[s]
    # Fixed for the hand: each seat's partner, its opponents in the order they
    # play after it, and whether anybody bid nil (most hands: nobody, and the
    # nil rules then cost nothing per card).
    partners = [(s + 2) % 4 if n == 4 else -1 for s in range(n)]
    opponents = [tuple((s + d) % n for d in range(1, n, 2)) for s in range(n)]
    any_nil = 0 in bids
    four = n == 4

    def pick(seat: int, legal: int) -> int:
        if not legal & (legal - 1):
            return legal.bit_length() - 1
        if rand() < noise:
            for _ in range(int(rand() * legal.bit_count())):
                legal &= legal - 1
            return (legal & -legal).bit_length() - 1
        team = seat % 2
        nil = bids[seat] == 0 and tricks_won[seat] == 0
        won = tricks_won[team] + tricks_won[team + 2] if four else tricks_won[team]
        need = contract[team] - won > 0
        k = len(trick)
        partner = partners[seat]
        partner_nil = any_nil and partner >= 0 and bids[partner] == 0 and tricks_won[partner] == 0
        # An opponent's live nil: the seat after this one (or, with two players, the other).
        target = -1
        if any_nil and not nil and not partner_nil:
            for o in opponents[seat]:
                if bids[o] == 0 and tricks_won[o] == 0:
                    target = o
                    break
        if not k:
            if nil or target >= 0 or (not need and not partner_nil):
                return lowest(legal)
            return highest(legal & NON_SPADE or legal)
        top = trick[0]
        top_pos = 0
        for i in range(1, k):
            c = trick[i]
            if (c > top and c // 13 == top // 13) or (c >= 39 and top < 39):
                top, top_pos = c, i
        top_seat = (seat - k + top_pos) % n
        # The cards that beat ``top``: higher ones of its suit, and any spade over a side suit.
        winners = legal & (SUIT << (13 * (top // 13))) & -(2 << top)
        if top < 39:
            winners |= legal & ~NON_SPADE
        losers = legal & ~winners
        if nil:
            if losers:
                return highest(losers)
            return lowest(legal) if k < n - 1 else highest(legal)
        if partner_nil:
            played = (partner - seat) % n > n - 1 - k  # the partner's card is on the table
            if not played or top_seat == partner:
                if winners:
                    follow = winners & (SUIT << (13 * (trick[0] // 13)))
                    return highest(follow or winners) if not played else lowest(winners)
                return lowest(legal)
        if target >= 0:
            played = (target - seat) % n > n - 1 - k
            if played and top_seat == target:
                if losers:
                    return highest(losers)  # stay under the nil and shed a high card
            elif not played:
                return lowest(legal)  # leave the nil as little room under as we can
        if not need:
            if losers:
                return highest(losers)
            return lowest(legal) if k < n - 1 else highest(legal)
        if n == 4 and top_seat == partner and not partner_nil:
            return lowest(legal)
        if winners:
            if k == n - 1:
                return lowest(winners)
            follow = winners & (SUIT << (13 * (trick[0] // 13)))
            return highest(follow) if follow else lowest(winners)
        return lowest(legal)

    return pick
