"""Error bars: cluster-robust from duplicate pairs, the model fallback, LOS, crosstables."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest
import scipy.linalg
import scipy.stats
from ratings_synth import duplicate_round_robin, p_win, random_games

from arena.ratings import (
    ELO_PER_LOGIT,
    ERROR_CLUSTER,
    ERROR_MODEL,
    Result,
    crosstable,
    fit,
    normal_cdf,
    player_records,
)
from arena.ratings.linalg import LaplacianPattern, regularised_inverse, solve_laplacian

STRENGTHS = {"a": 1650.0, "b": 1550.0, "c": 1450.0, "d": 1350.0}


def correlated_pairs(
    strengths: dict[str, float], pairs: int, *, seed: int, rho: float
) -> list[Result]:
    """Duplicate pairs whose second game repeats the first's outcome (for the same entry)
    with probability ``rho``, else is drawn afresh: ``rho = 1`` is perfect correlation."""
    rng = random.Random(seed)
    names = sorted(strengths)
    out = []
    for x, a in enumerate(names):
        for b in names[x + 1 :]:
            p = p_win(strengths[a], strengths[b])
            for k in range(pairs):
                first = 1.0 if rng.random() < p else 0.0  # a's score at table 1
                second = first if rng.random() < rho else (1.0 if rng.random() < p else 0.0)
                out.append(Result(a, b, first, f"{a}{b}{k}"))
                out.append(Result(b, a, 1.0 - second, f"{a}{b}{k}"))
    return out


def anti_correlated_pairs(pairs: int) -> list[Result]:
    """Every duplicate pair is split one game each: the deals, not the players, decided."""
    out = []
    for k in range(pairs):
        out.append(Result("x", "y", 1.0, f"c{k}"))
        out.append(Result("y", "x", 1.0, f"c{k}"))
    for k in range(pairs):
        out.append(Result("y", "z", 1.0, f"d{k}"))
        out.append(Result("z", "y", 1.0 if k % 2 else 0.0, f"d{k}"))
    return out


def model_se(results: list[Result]) -> dict[str, float]:
    r = fit(results, min_clusters=10**9)
    assert r.error_method == ERROR_MODEL
    return {p.name: p.se for p in r.players}


def test_perfectly_correlated_pairs_widen_the_bars():
    results = correlated_pairs(STRENGTHS, 60, seed=1, rho=1.0)
    robust = fit(results)
    assert robust.error_method == ERROR_CLUSTER
    naive = model_se(results)
    for p in robust.players:
        # Each pair is really one observation counted twice: about sqrt(2) wider.
        assert p.se > 1.25 * naive[p.name], (p.name, p.se, naive[p.name])


def test_split_pairs_never_narrow_the_bars_below_the_model():
    """Split pairs make the sandwich narrower than the model's: the model's is the floor."""
    results = anti_correlated_pairs(40)
    robust = fit(results)
    naive = model_se(results)
    assert robust.error_method == ERROR_CLUSTER
    for name in ("x", "y", "z"):
        assert math.isclose(robust[name].se, naive[name], rel_tol=1e-9)


def test_cluster_robust_bars_are_calibrated_by_simulation():
    """Across repeated tournaments, the spread of a rating matches its mean robust se."""
    elos, ses, naive = [], [], []
    for seed in range(150):
        results = correlated_pairs(STRENGTHS, 25, seed=seed, rho=0.6)
        r = fit(results, prior_draws=0.5)
        elos.append(r["a"].elo)
        ses.append(r["a"].se)
        naive.append(fit(results, prior_draws=0.5, min_clusters=10**9)["a"].se)
    spread = statistics.stdev(elos)
    print(
        f"\nsd of Elo over repeats {spread:.1f}; mean robust se {statistics.mean(ses):.1f}; "
        f"mean model se {statistics.mean(naive):.1f}"
    )
    assert 0.8 < statistics.mean(ses) / spread < 1.25
    assert statistics.mean(naive) / spread < 0.9


def test_too_few_clusters_fall_back_to_the_model():
    results = [
        Result("p", "q", 1.0, "c1"),
        Result("q", "p", 0.0, "c1"),
        Result("p", "q", 0.0, "c2"),
        Result("q", "p", 0.5, "c2"),
    ]
    r = fit(results)
    assert r.error_method == ERROR_MODEL
    assert "2 cluster" in r.error_note
    assert r.to_dict()["method"]["error_bars"] == ERROR_MODEL
    assert fit(results, min_clusters=2).error_method == ERROR_CLUSTER


def _numpy_hessian_and_scores(
    results: list[Result], prior: float, theta: np.ndarray, idx: dict[str, int]
):
    k = len(idx)
    h = np.zeros((k, k))
    scores: dict[str, np.ndarray] = {}
    pairs = set()
    for r in results:
        i, j = idx[r.a], idx[r.b]
        p = 1 / (1 + np.exp(-(theta[i] - theta[j])))
        e = np.zeros(k)
        e[i], e[j] = 1, -1
        h += p * (1 - p) * np.outer(e, e)
        scores.setdefault(r.cluster, np.zeros(k))
        scores[r.cluster] += (r.score - p) * e
        pairs.add((min(i, j), max(i, j)))
    for i, j in pairs:
        p = 1 / (1 + np.exp(-(theta[i] - theta[j])))
        e = np.zeros(k)
        e[i], e[j] = 1, -1
        h += prior * p * (1 - p) * np.outer(e, e)
    return h, list(scores.values())


@pytest.mark.parametrize("robust", [True, False])
def test_covariance_matches_an_independent_numpy_computation(robust: bool):
    results, _ = random_games(6, 600, seed=11)
    r = fit(results, prior_draws=1.0, min_clusters=10 if robust else 10**9)
    assert r.error_method == (ERROR_CLUSTER if robust else ERROR_MODEL)
    names = sorted(r.names)
    idx = {n: k for k, n in enumerate(names)}
    theta = np.array([(r[n].elo - r.mean) / ELO_PER_LOGIT for n in names])
    h, scores = _numpy_hessian_and_scores(results, 1.0, theta, idx)
    h_plus = np.linalg.pinv(h)
    if robust:
        meat = sum(np.outer(g, g) for g in scores)
        g = len(scores)
        t = float(scipy.stats.t.ppf(0.975, g - 1))
        sandwich = g / (g - 1) * (t / 1.96) ** 2 * h_plus @ meat @ h_plus
        # The Loewner maximum of the model's and the sandwich, by a general eigensolver.
        values, vectors = scipy.linalg.eigh(sandwich - h_plus)
        expected = h_plus + vectors @ np.diag(np.clip(values, 0.0, None)) @ vectors.T
    else:
        expected = h_plus
    expected *= ELO_PER_LOGIT**2
    ours = np.array([[r.covariance[a][b] for b in names] for a in names])
    np.testing.assert_allclose(ours, expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.sum(axis=1), 0.0, atol=1e-6)  # the sum-to-mean constraint


def test_intervals_are_plus_minus_1_96_se():
    r = fit(duplicate_round_robin(STRENGTHS, 20, seed=3))
    for p in r.players:
        assert math.isclose(p.upper - p.elo, 1.96 * p.se) and math.isclose(
            p.elo - p.lower, 1.96 * p.se
        )
        assert math.isclose(p.margin, 1.96 * p.se)
        assert math.isclose(p.se, math.sqrt(r.covariance[p.name][p.name]))


def test_likelihood_of_superiority_uses_the_covariance():
    r = fit(duplicate_round_robin(STRENGTHS, 8, seed=4, draw_rate=0.2))
    for a in r.names:
        assert a not in r.los[a]
        for b in r.names:
            if a == b:
                continue
            var = r.covariance[a][a] + r.covariance[b][b] - 2 * r.covariance[a][b]
            assert math.isclose(r.los[a][b], normal_cdf((r[a].elo - r[b].elo) / math.sqrt(var)))
            assert math.isclose(r.los[a][b] + r.los[b][a], 1.0)
    assert r.los["a"]["d"] > 0.99
    assert math.isclose(normal_cdf(1.96), 0.975, abs_tol=1e-4)


def test_crosstable_and_player_records():
    results = [
        Result("x", "y", 1.0, "1"),
        Result("y", "x", 1.0, "1"),
        Result("x", "y", 0.5, "2"),
        Result("x", "z", 1.0, "3"),
        Result("z", "x", 0.0, "3"),
    ]
    table = crosstable(results)
    xy = table["x"]["y"]
    assert (xy.games, xy.wins, xy.losses, xy.draws, xy.points) == (3, 1, 1, 1, 1.5)
    yx = table["y"]["x"]
    assert (yx.games, yx.wins, yx.losses, yx.draws, yx.points) == (3, 1, 1, 1, 1.5)
    assert (table["z"]["x"].wins, table["z"]["x"].losses) == (0, 2)
    assert "z" not in table["y"]
    recs = player_records(results)
    assert (recs["x"].games, recs["x"].wins, recs["x"].losses, recs["x"].draws) == (5, 3, 1, 1)
    assert math.isclose(recs["x"].score_pct, 70.0)
    assert (recs["z"].games, recs["z"].score_pct) == (2, 0.0)
    r = fit(results)
    assert r.crosstable == table
    assert r["x"].record == recs["x"]
    assert r.to_dict()["crosstable"]["x"]["y"]["draws"] == 1


def test_linear_algebra_against_numpy():
    rng = np.random.default_rng(0)
    for k, density in ((12, 1.0), (600, 0.05)):  # the dense path and conjugate gradients
        i, j = np.triu_indices(k, 1)
        keep = (rng.random(len(i)) < density) | (j == i + 1)  # a path keeps it connected
        i, j = i[keep], j[keep]
        w = rng.uniform(0.1, 3.0, len(i))
        h = LaplacianPattern(k, i, j).matrix(w)
        full = h.toarray()
        g = rng.normal(size=k)
        g -= g.mean()
        expected = np.linalg.pinv(full)
        np.testing.assert_allclose(solve_laplacian(h, g), expected @ g, rtol=1e-8, atol=1e-10)
        # Q = (H + 11ᵀ/k)⁻¹ is H⁺ + 11ᵀ/k: what the covariances are made from.
        np.testing.assert_allclose(regularised_inverse(full) - 1.0 / k, expected, rtol=1e-7, atol=1e-10)
    with pytest.raises(ValueError, match="singular"):
        regularised_inverse(LaplacianPattern(3, np.array([0]), np.array([1])).matrix(np.array([1.0])).toarray())
