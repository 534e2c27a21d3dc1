"""Honest intervals (issues 32 and 36): never below the model's, and a newcomer does not widen the others'."""

from __future__ import annotations

import random

import numpy as np
from ratings_synth import p_win
from test_ratings_errors import correlated_pairs

from arena.ratings import ERROR_CLUSTER, Result, fit

FIVE = {"v1": 1580.0, "v2": 1540.0, "v3": 1500.0, "v4": 1460.0, "v5": 1420.0}


def split_pairs(names: list[str], pairs_per_pairing: int) -> list[Result]:
    """Every duplicate pair split 1-1 (what equal bots do): each side wins its deal's good seat."""
    out = []
    for x, a in enumerate(names):
        for b in names[x + 1 :]:
            for k in range(pairs_per_pairing):
                cluster = f"{a}-{b}-{k}"
                out += [Result(a, b, 1.0, cluster), Result(b, a, 1.0, cluster)]
    return out


def test_all_split_pairs_give_the_model_interval_not_zero() -> None:
    """Issue 32: three versions, 10 duplicate pairs each, every pair split 1-1: the sandwich
    is exactly 0 (today's ±0); the interval is the model's, and no order is 'certain'."""
    results = split_pairs(["a", "b", "c"], 5)
    r = fit(results)
    model = fit(results, min_clusters=10**9)
    assert r.error_method == ERROR_CLUSTER and r.clusters == 15
    for p in r.players:
        assert p.record.games == 20 and p.margin > 50.0
        assert p.margin >= model[p.name].margin - 1e-9
    assert 0.4 < r.los["a"]["b"] < 0.6


def duplicate_pairs(strengths: dict[str, float], pairings: list[tuple[str, str]], seed: int) -> list[Result]:
    """Duplicate pairs whose two games are negatively correlated (the same deal, seats swapped)."""
    rng = random.Random(seed)
    out = []
    for n, (a, b) in enumerate(pairings):
        p = p_win(strengths[a], strengths[b])
        first = 1.0 if rng.random() < p else 0.0
        # The second table's seats are swapped: a's luck of the first deal is b's now.
        second = (1.0 - first) if rng.random() < 0.3 else (1.0 if rng.random() < p else 0.0)
        out += [Result(a, b, first, f"L{n:05d}"), Result(b, a, 1.0 - second, f"L{n:05d}")]
    return out


def test_a_newcomer_does_not_widen_the_established_intervals() -> None:
    """Issue 36: five versions at about ±40, then one newcomer plays its first pair: today
    the pool switched to the model's intervals and centred them on a mean that includes the
    newcomer, and every established interval more than doubled."""
    names = sorted(FIVE)
    pairings = [(a, b) for _ in range(25) for x, a in enumerate(names) for b in names[x + 1 :]]
    results = duplicate_pairs(FIVE, pairings, seed=3)
    before = fit(results)
    strengths = {**FIVE, "new": 1500.0}
    after = fit(results + duplicate_pairs(strengths, [("new", "v3")], seed=4)[:2])
    assert before.error_method == after.error_method == ERROR_CLUSTER
    for name in names:
        assert before[name].margin < 50.0
        assert after[name].margin <= 1.05 * before[name].margin, (name, before[name], after[name])
        # Ratings are centred on the established versions: the newcomer does not move them.
        assert abs(after[name].elo - before[name].elo) < 5.0
    assert after["new"].margin > 3 * before["v3"].margin
    assert "centred on the 5 players" in after.error_note


def test_the_floor_holds_for_every_rating_and_every_difference() -> None:
    """``C − F`` and ``C − R`` positive semi-definite: also the likelihood of superiority is floored."""
    for rho in (0.0, 0.6, 1.0):
        results = correlated_pairs({"a": 1600.0, "b": 1500.0, "c": 1450.0, "d": 1300.0}, 12, seed=5, rho=rho)
        r = fit(results)
        f = fit(results, min_clusters=10**9)
        names = r.names
        c = np.array([[r.covariance[a][b] for b in names] for a in names])
        model = np.array([[f.covariance[a][b] for b in names] for a in names])
        assert np.linalg.eigvalsh(c - model).min() > -1e-6
        for a in names:
            for b in names:
                if a != b:
                    assert abs(r.los[a][b] - 0.5) <= abs(f.los[a][b] - 0.5) + 1e-9
