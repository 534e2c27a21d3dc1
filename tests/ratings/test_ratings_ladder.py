"""The ladder's incremental path: refits equal fit(), updates give exact ratings and close intervals."""

from __future__ import annotations

import random

import numpy as np
import pytest
from ratings_synth import p_win, play, random_games
from test_ratings_oracle import assert_same

from arena.ratings import ELO_PER_LOGIT, ERROR_CLUSTER, ERROR_MODEL, Ladder, Result, fit
from arena.ratings.bradley_terry import sigmoid
from arena.ratings.ladder import EXACT, UPDATED
from arena.ratings.linalg import dense_laplacian


def more_games(
    strengths: dict[str, float], pairs: int, *, seed: int, prefix: str, extra: tuple[str, ...] = ()
) -> list[Result]:
    """``pairs`` duplicate pairs between random pairings (``extra`` names join the pool)."""
    rng = random.Random(seed)
    names = sorted(strengths) + list(extra)
    level = {**strengths, **{n: 1500.0 for n in extra}}
    out = []
    for k in range(pairs):
        a, b = rng.sample(names, 2)
        if extra and k < 2 * len(extra) * 6:  # the newcomers play first, against anyone
            a = extra[k % len(extra)]
            b = rng.choice([n for n in names if n != a])
        p = p_win(level[a], level[b])
        out.append(Result(a, b, play(rng, p, 0.1), f"{prefix}{k}"))
        out.append(Result(b, a, play(rng, 1.0 - p, 0.1), f"{prefix}{k}"))
    return out


def test_refit_is_the_same_as_fit_however_the_games_arrive() -> None:
    results, _ = random_games(25, 6_000, seed=1)
    shuffled = results[:]
    random.Random(2).shuffle(shuffled)
    ladder = Ladder()
    for start in range(0, len(shuffled), 1_700):  # pairs split across calls, too
        ladder.add(shuffled[start : start + 1_700])
    assert ladder.games == 6_000 and ladder.players == sorted(
        {r.a for r in results} | {r.b for r in results}
    )
    assert_same(ladder.refit(), fit(results))
    ladder.add(results[:10])
    assert_same(ladder.refit(), fit(results + results[:10]))


def test_update_gives_the_exact_ratings_warm_started() -> None:
    results, strengths = random_games(30, 9_000, seed=3)
    ladder = Ladder()
    ladder.add(results)
    cold = ladder.refit()
    new = more_games(strengths, 50, seed=4, prefix="n")
    ladder.add(new)
    snap = ladder.update()
    full = fit(results + new)
    assert snap.names == full.names
    for p in full.players:
        assert abs(snap[p.name].elo - p.elo) < 1e-6
        assert snap[p.name].record == p.record
    assert snap.games == full.games and snap.games_since_refit == 100
    assert snap.iterations < cold.iterations  # the warm start saves Newton steps
    assert snap.intervals == UPDATED and not snap.exact
    assert (
        "100 new games" in snap.interval_note and "refit for exact intervals" in snap.interval_note
    )
    assert snap.to_dict()["method"]["intervals"] == UPDATED


def _direct_covariance(ladder: Ladder, theta: np.ndarray) -> np.ndarray:
    """What the update approximates, computed densely from its definition (no Woodbury):
    the pairs and clusters that played since the baseline at ``theta``, the rest at the
    baseline's ratings; the cluster-robust sandwich (logits²)."""
    t, base = ladder._t, ladder._base
    assert t is not None and base is not None
    k = t.k
    played = np.ones(len(t.pair_i), dtype=bool)
    played[: base.pairs] = t.games[: base.pairs] != base.pair_games
    p = sigmoid(theta[t.pair_i] - theta[t.pair_j])
    w = (t.games + ladder.prior_draws) * p * (1 - p)
    w[: base.pairs] = np.where(played[: base.pairs], w[: base.pairs], base.weights)
    q = np.linalg.inv(dense_laplacian(k, t.pair_i, t.pair_j, w) + 1.0 / k)
    changed = np.ones(len(t.row_pair), dtype=bool)
    changed[: base.rows] = (t.row_games[: base.rows] != base.row_games) | (
        t.row_points[: base.rows] != base.row_points
    )
    touched = np.isin(t.row_cluster, np.unique(t.row_cluster[changed]))
    i, j = t.pair_i[t.row_pair], t.pair_j[t.row_pair]
    old_theta = np.concatenate([base.theta, np.zeros(k - base.k)])
    at = np.where(touched[:, None], theta[np.stack([i, j], 1)], old_theta[np.stack([i, j], 1)])
    r = t.row_points - t.row_games * sigmoid(at[:, 0] - at[:, 1])
    scores = np.zeros((t.clusters, k))
    np.add.at(scores, (t.row_cluster, i), r)
    np.add.at(scores, (t.row_cluster, j), -r)
    g = t.clusters
    return g / (g - 1) * q @ scores.T @ scores @ q


@pytest.mark.parametrize("newcomers", [(), ("zz-new",)])
def test_updated_intervals_are_the_low_rank_algebra_exactly(newcomers: tuple[str, ...]) -> None:
    results, strengths = random_games(20, 4_000, seed=5)
    ladder = Ladder(max_terms=10**6, max_shift=1e9, min_clusters=2)
    ladder.add(results)
    ladder.refit()
    ladder.add(more_games(strengths, 120, seed=6, prefix="u", extra=newcomers))
    snap = ladder.update()
    assert snap.intervals == UPDATED and snap.error_method == ERROR_CLUSTER
    expected = _direct_covariance(ladder, ladder._theta)
    names = ladder._t.players  # type: ignore[union-attr]
    raw = snap._cov.robust  # type: ignore[union-attr]  # the sandwich, before centring and floor
    for x, _ in enumerate(names):
        assert raw.diagonal[x] == pytest.approx(expected[x, x], rel=1e-9)
        for y, _ in enumerate(names):
            assert raw.entry(x, y) == pytest.approx(expected[x, y], rel=1e-7, abs=1e-9)
    # What the snapshot reports: centred on the anchor, t-scaled, plus the full fit's floor
    # excess, each variance floored at the (updated) model's.
    cov = snap._cov  # type: ignore[assignment]
    k = len(names)
    w = cov.anchor / cov.anchor.sum()
    centring = np.eye(k) - np.outer(np.ones(k), w)
    excess = np.zeros((k, k))
    e0 = cov.excess
    excess[: e0.shape[0], : e0.shape[0]] = e0
    robust = centring @ (cov._t2 * expected + excess) @ centring.T
    model = np.array([[cov.model.entry(x, y) for y in range(k)] for x in range(k)])
    model = centring @ model @ centring.T
    for x, a in enumerate(names):
        variance = max(robust[x, x], model[x, x]) * ELO_PER_LOGIT**2
        assert snap[a].se == pytest.approx(np.sqrt(variance), rel=1e-8)


def test_model_intervals_update_too() -> None:
    results, strengths = random_games(15, 3_000, seed=7)
    ladder = Ladder(min_clusters=10**9, max_terms=10**6, max_shift=1e9)
    ladder.add(results)
    ladder.refit()
    new = more_games(strengths, 40, seed=8, prefix="m", extra=("zz-new",))
    ladder.add(new)
    snap = ladder.update()
    assert snap.error_method == ERROR_MODEL and snap.intervals == UPDATED
    t, base = ladder._t, ladder._base
    assert t is not None and base is not None
    played = np.ones(len(t.pair_i), dtype=bool)
    played[: base.pairs] = t.games[: base.pairs] != base.pair_games
    p = sigmoid(ladder._theta[t.pair_i] - ladder._theta[t.pair_j])
    w = (t.games + 1.0) * p * (1 - p)
    w[: base.pairs] = np.where(played[: base.pairs], w[: base.pairs], base.weights)
    expected = np.linalg.pinv(dense_laplacian(t.k, t.pair_i, t.pair_j, w)) * ELO_PER_LOGIT**2
    for x, a in enumerate(t.players):
        assert snap[a].se == pytest.approx(np.sqrt(expected[x, x]), rel=1e-8)
        assert snap.covariance(a, t.players[0]) == pytest.approx(expected[x, 0], rel=1e-6, abs=1e-6)


def test_updated_intervals_stay_close_to_a_full_refit() -> None:
    results, strengths = random_games(60, 18_000, seed=9)
    ladder = Ladder(max_terms=10**6)
    ladder.add(results)
    ladder.refit()
    new = more_games(strengths, 50, seed=10, prefix="c")
    ladder.add(new)
    snap = ladder.update()
    full = fit(results + new)
    assert snap.intervals == UPDATED and snap.error_method == full.error_method == ERROR_CLUSTER
    worst = max(abs(snap[p.name].se - p.se) / p.se for p in full.players)
    print(f"\nupdated intervals after 100 new games on 18,000: worst se error {100 * worst:.3f}%")
    # 1.1% here (0.3-0.7% before the floor: the update floors each variance on its own,
    # the full fit every direction, docs/ratings.md).
    assert worst < 0.015
    a, b = full.names[0], full.names[1]
    assert snap.los(a, b) == pytest.approx(full.los[a][b], abs=1e-3)


def test_too_many_changes_or_a_big_shift_recompute_exactly() -> None:
    results, strengths = random_games(20, 2_000, seed=11)
    ladder = Ladder(max_terms=10)
    ladder.add(results)
    ladder.refit()
    new = more_games(strengths, 30, seed=12, prefix="e")
    ladder.add(new)
    snap = ladder.update()
    assert snap.intervals == EXACT and "changed terms" in snap.interval_note
    full = fit(results + new)
    for p in full.players:
        assert snap[p.name].se == pytest.approx(p.se, rel=1e-9)
    again = ladder.update()  # nothing new since the exact recompute: the same numbers
    assert again.intervals == UPDATED and again.games_since_refit == 0
    for p in full.players:
        assert again[p.name].se == pytest.approx(p.se, rel=1e-9)
    shifted = Ladder(max_shift=0.0, max_terms=10**6)
    shifted.add(results)
    shifted.refit()
    shifted.add(new)
    assert "moved" in shifted.update().interval_note


def test_first_update_is_a_full_fit_and_bad_input_is_refused() -> None:
    ladder = Ladder()
    with pytest.raises(ValueError, match="no results"):
        ladder.update()
    results, _ = random_games(8, 800, seed=13)
    ladder.add(results)
    snap = ladder.update()
    assert snap.exact and snap.games_since_refit == 0
    full = fit(results)
    for p in full.players:
        assert snap[p.name].elo == pytest.approx(p.elo, abs=1e-9)
        assert snap[p.name].se == pytest.approx(p.se, rel=1e-12)
    # Two newcomers who only met each other: not comparable with the pool.
    ladder.add([Result("new-a", "new-b", 1.0, "x1"), Result("new-b", "new-a", 0.0, "x1")])
    with pytest.raises(ValueError, match="never met.*'new-a', 'new-b'"):
        ladder.update()
    with pytest.raises(ValueError, match="max_terms"):
        Ladder(max_terms=-1)
    with pytest.raises(ValueError, match="prior_draws"):
        Ladder(prior_draws=-1.0)
    with pytest.raises(ValueError, match="different"):
        snap.los("bot01", "bot01")


def correlated_games(
    strengths: dict[str, float], pairs: int, rng: random.Random, prefix: str
) -> list[Result]:
    """Duplicate pairs between random pairings whose two games are correlated (the same deal)."""
    names = sorted(strengths)
    out = []
    for k in range(pairs):
        a, b = rng.sample(names, 2)
        p = p_win(strengths[a], strengths[b])
        first = 1.0 if rng.random() < p else 0.0
        second = first if rng.random() < 0.5 else (1.0 if rng.random() < p else 0.0)
        out.append(Result(a, b, first, f"{prefix}{k}"))
        out.append(Result(b, a, 1.0 - second, f"{prefix}{k}"))
    return out


def test_95_percent_intervals_cover_the_truth_93_to_97_percent_of_the_time() -> None:
    """Simulated pools with correlated duplicate pairs: the full fit's intervals and the
    updated ones (after 100 more games) both cover the true ratings about 95% of the time."""
    rng = random.Random(14)
    hits = {"fit": 0, "update": 0}
    total = 0
    for rep in range(150):
        # A spread of 80 Elo: with 150 the prior's pull toward the mean (one virtual draw
        # per pairing, about ten real pairs each here) alone brings coverage down to 93%.
        strengths = {f"p{x:02d}": rng.gauss(1500.0, 80.0) for x in range(16)}
        centre = sum(strengths.values()) / len(strengths)
        truth = {n: s - centre + 1500.0 for n, s in strengths.items()}
        ladder = Ladder(max_terms=10**6, max_shift=1e9)  # always the updated intervals
        ladder.add(correlated_games(strengths, 1_200, rng, f"r{rep}-"))
        refit = ladder.refit()
        ladder.add(correlated_games(strengths, 50, rng, f"s{rep}-"))
        snap = ladder.update()
        assert snap.intervals == UPDATED and snap.error_method == ERROR_CLUSTER
        for name, true in truth.items():
            hits["fit"] += refit[name].lower <= true <= refit[name].upper
            hits["update"] += snap[name].lower <= true <= snap[name].upper
            total += 1
    rates = {k: v / total for k, v in hits.items()}
    print(f"\ncoverage of 95% intervals over {total}: {rates}")
    for rate in rates.values():
        assert 0.93 <= rate <= 0.97, rates
