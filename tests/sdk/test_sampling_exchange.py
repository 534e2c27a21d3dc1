"""The two-player sampler after a blind-nil exchange (issue 23, item 2).

The opponent who bid blind nil and gave back ``k`` cards drew ``k`` at random
from the discards, where my seen discards lay, so it may hold some of them:
at most ``k`` in all, the ones it has already played included; none of the
cards I gave back myself if it exchanged before me; and how many it holds
follows the draw's probabilities (hypergeometric), not a uniform count of the
deals.  Every position here comes from real engine games with fixed seeds.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator

from arena_sdk.engine import CARDS, Decision, GameState, SeatView, resolve_ruleset
from arena_sdk.engine.playout import random_action
from arena_sdk.sampling import DealSampler, _played_by, voids_of
from scipy.stats import chi2

# spade_lead = always: a lead is then any card of the hand, so the opponent's
# uniformly random lead says nothing about its hand beyond the card itself,
# and the only thing the sampler must get right is the draw's chance.
RULES = resolve_ruleset("two-player", {"max_hands": 1, "spade_lead": "always"})


def _random_exchange(state: GameState, rng: random.Random) -> tuple:
    """Give back 1 to 3 random cards of the hand (0 would leave nothing to test)."""
    hand = [c for c in CARDS if state.hands[state.to_move] >> int(c) & 1]
    return tuple(rng.sample(hand, rng.randint(1, 3)))


def _play_to(
    seed: int, me_first: bool, me_blind: bool, opp_plays: int, at: Decision = Decision.PLAY
) -> tuple[GameState, SeatView] | None:
    """Play one engine game to my first decision ``at`` after the opponent played ``opp_plays`` cards.

    The opponent bids blind nil; I do when ``me_blind``.  I am the first
    player when ``me_first`` (then I exchange first, and the opponent, the
    second player, leads).  Returns ``None`` if the game never gets there.
    """
    state = GameState.new(RULES, seed)
    me = state.first if me_first else 1 - state.first
    opp = 1 - me
    rng = random.Random(seed * 7919 + 1)
    while state.decision is not None and state.hand_number == 1:
        seat, kind = state.to_move, state.decision
        if (
            kind is at
            and seat == me
            and len(_played_by(2, state.tricks, state.current_trick())[opp]) >= opp_plays
        ):
            return state, state.view(me)
        if kind is Decision.BLIND_NIL:
            state.apply(seat == opp or me_blind)
        elif kind is Decision.EXCHANGE:
            state.apply(_random_exchange(state, rng))
        else:
            state.apply(random_action(state, rng))
    return None


def _seen_in_opponent(state: GameState, view: SeatView, hidden: list[int] | None = None) -> int:
    """How many of my seen discards the opponent holds or has played this hand."""
    opp = 1 - view.seat
    seen = {int(c) for c in view.seen_discards}
    played = _played_by(2, view.tricks, view.current_trick)[opp]
    if hidden is None:
        hidden = [c for c in range(52) if state.hands[opp] >> c & 1]
    return len(seen & (set(hidden) | set(played)))


def _positions(seeds: range, **how: object) -> Iterator[tuple[GameState, SeatView]]:
    for seed in seeds:
        got = _play_to(seed, **how)  # type: ignore[arg-type]
        if got is not None:
            yield got


def test_the_cap_counts_the_seen_discards_the_opponent_has_played():
    """(a) k exchanged, one of my seen discards already played by it: it holds at most k - 1 more."""
    checked = 0
    for state, view in _positions(range(200), me_first=True, me_blind=False, opp_plays=1):
        opp = 1 - view.seat
        seen = {int(c) for c in view.seen_discards}
        played_seen = seen & set(_played_by(2, view.tricks, view.current_trick)[opp])
        if not played_seen:
            continue
        k = view.exchanged[opp]
        assert _seen_in_opponent(state, view) <= k  # the engine's own deal keeps the bound
        sampler = DealSampler(view)
        rng = random.Random(checked)
        for _ in range(100):
            alloc = sampler.sample_hidden(rng)
            assert _seen_in_opponent(state, view, alloc[opp]) <= k, (k, sorted(played_seen))
        checked += 1
        if checked == 6:
            break
    assert checked == 6


def test_my_returned_cards_cannot_be_in_the_hand_of_an_opponent_who_exchanged_before_me():
    """(b) Both blind, the opponent exchanged first: the cards I gave back came after its draw."""
    checked = 0
    for state, view in _positions(range(100), me_first=False, me_blind=True, opp_plays=0):
        opp = 1 - view.seat
        assert view.exchanged[opp] and view.exchanged[view.seat] and view.seen_discards
        returned = {int(c) for c in view.seen_discards}
        assert not returned & {c for c in range(52) if state.hands[opp] >> c & 1}  # so the engine
        sampler = DealSampler(view)
        rng = random.Random(checked)
        for _ in range(50):
            alloc = sampler.sample_hidden(rng)
            assert not returned & set(alloc[opp]), checked
        checked += 1
        if checked == 8:
            break
    assert checked == 8


def _chi_square(observed: list[int], expected: list[float]) -> tuple[float, int]:
    """Pearson's statistic over the bins, the sparse tail (expected < 5) merged into its neighbour."""
    last = max(i for i, (o, e) in enumerate(zip(observed, expected, strict=True)) if o or e)
    obs, exp = list(observed[: last + 1]), list(expected[: last + 1])
    while len(exp) > 2 and exp[-1] < 5:
        obs[-2] += obs.pop()
        exp[-2] += exp.pop()
    while len(exp) > 2 and exp[0] < 5:
        obs[1] += obs.pop(0)
        exp[1] += exp.pop(0)
    stat = sum((o - e) ** 2 / e for o, e in zip(obs, exp, strict=True))
    return stat, len(exp) - 1


def test_how_many_seen_discards_the_opponent_holds_matches_the_engine():
    """(c) Over real engine games: the true count j vs the sampler's worlds, a chi-square test.

    Both ways the cap arises are mixed in: I did not bid blind nil (13 seen
    discards), or we both did and I exchanged first (my returned cards).  The
    decision is my first card, after the opponent's random lead, so some of
    the positions also need fault (a) fixed.
    """
    worlds = 40
    observed = [0] * 14  # j can only be 0..3; the sampler must not put weight beyond
    expected = [0.0] * 14
    games = 0
    rng = random.Random(2026)
    for seed in range(360):
        got = _play_to(seed, me_first=True, me_blind=seed % 3 == 0, opp_plays=1)
        if got is None:
            continue
        state, view = got
        observed[_seen_in_opponent(state, view)] += 1
        sampler = DealSampler(view)
        opp = 1 - view.seat
        for _ in range(worlds):
            expected[_seen_in_opponent(state, view, sampler.sample_hidden(rng)[opp])] += 1 / worlds
        games += 1
    assert games >= 300
    stat, df = _chi_square(observed, expected)
    # p < 0.001 fails; the sampler's own noise (40 worlds a game) adds about
    # 1/40 to the variance, far too little to matter at this level.
    assert chi2.sf(stat, df) > 0.001, (observed, [round(e, 1) for e in expected], stat)


def _hypergeometric(j: int, s: int, k: int) -> float:
    """Chance that ``k`` cards drawn from the 26 discards hold ``j`` of the ``s`` I saw."""
    return math.comb(s, j) * math.comb(26 - s, k - j) / math.comb(26, k)


def test_before_any_card_is_played_the_count_is_hypergeometric():
    """At my bid nothing else is known: j follows the opponent's draw exactly."""
    checked = 0
    for state, view in _positions(
        range(40), me_first=False, me_blind=False, opp_plays=0, at=Decision.BID
    ):
        k = view.exchanged[1 - view.seat]
        sampler = DealSampler(view)
        rng = random.Random(k)
        n = 3000
        got = [0] * 14
        for _ in range(n):
            got[_seen_in_opponent(state, view, sampler.sample_hidden(rng)[1 - view.seat])] += 1
        for j in range(14):
            p = _hypergeometric(j, 13, k) if j <= k else 0.0
            sd = math.sqrt(max(p * (1 - p), 1e-9) / n)
            assert abs(got[j] / n - p) <= 5 * sd + 1e-9, (k, j, got[j] / n, p)
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_late_in_the_hand_the_weighted_count_matches_brute_force():
    """Voids, plays and the cap together: the dynamic programme against every deal, weighted by hand."""
    view = state = None
    for seed in range(100):
        state = GameState.new(RULES, seed)
        rng = random.Random(seed)
        me = state.first
        while state.decision is not None and state.hand_number == 1:
            if state.decision is Decision.PLAY and state.to_move == me and len(state.tricks) == 11:
                view = state.view(me)
                break
            if state.decision is Decision.BLIND_NIL:
                state.apply(state.to_move != me)
            elif state.decision is Decision.EXCHANGE:
                state.apply(_random_exchange(state, rng))
            else:
                state.apply(random_action(state, rng))
        if view is not None:
            opp = 1 - me
            seen = {int(c) for c in view.seen_discards}
            hidden_seen = seen - set(_played_by(2, view.tricks, view.current_trick)[opp])
            if any(voids_of(view)[opp]) and hidden_seen and view.exchanged[opp] >= 2:
                break
            view = None
    assert view is not None and state is not None
    me, opp = view.seat, 1 - view.seat
    sampler = DealSampler(view)
    seen = {int(c) for c in view.seen_discards}
    k, s = view.exchanged[opp], len(seen)
    played = _played_by(2, view.tricks, view.current_trick)
    mine = {int(c) for c in view.hand} | set(played[me])
    unknown = [c for c in range(52) if c not in mine and c not in played[opp]]
    size = 13 - len(played[opp])
    voids = voids_of(view)[opp]
    total, count = 0.0, 0
    holds = dict.fromkeys(unknown, 0.0)
    for hand in itertools.combinations(unknown, size):
        j = len(seen & (set(hand) | set(played[opp])))
        if j > k or any(c // 13 in voids for c in hand):
            continue
        weight = _hypergeometric(j, s, k) / (math.comb(s, j) * math.comb(39 - s, 13 - j))
        count += 1
        total += weight
        for c in hand:
            holds[c] += weight
    assert sampler.count == count
    rng = random.Random(3)
    n = 4000
    got = dict.fromkeys(unknown, 0)
    for _ in range(n):
        for c in sampler.sample_hidden(rng)[opp]:
            got[c] += 1
    for c in unknown:
        p = holds[c] / total
        sd = math.sqrt(max(p * (1 - p), 1e-9) / n)
        assert abs(got[c] / n - p) <= 5 * sd + 1e-9, (CARDS[c], got[c] / n, p)
