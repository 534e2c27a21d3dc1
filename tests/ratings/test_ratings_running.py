"""RunningFit: counts that games join and clusters leave give arena.ratings.fit's numbers.

The platform's one incremental fitter (the ladder's leaderboard keeps one): whatever the
order the games arrive in and however often it is asked, its ratings and intervals are a
full fit's on the same games, a fit after a few new games starts from the last one, and
its 95% intervals cover the truth about 95% of the time.
"""

from __future__ import annotations

import random

import pytest
from ratings_synth import p_win, play, random_games
from test_ratings_oracle import random_pool

from arena.ratings import ERROR_CLUSTER, Result, fit
from arena.ratings.running import RunningFit


def assert_like_fit(running: RunningFit, results, **kwargs) -> None:
    full = fit(results, **kwargs)
    got = running.fit()
    assert got is not None
    assert (got.error_method, got.error_note) == (full.error_method, full.error_note)
    assert (got.games, got.clusters) == (full.games, full.clusters)
    assert set(got.rated) == set(full.names)
    for p in full.players:
        assert got.rated[p.name].elo == pytest.approx(p.elo, abs=1e-8)
        assert got.rated[p.name].se == pytest.approx(p.se, abs=1e-8)
        assert got.rated[p.name].lower == pytest.approx(p.lower, abs=1e-8)


@pytest.mark.parametrize("seed", range(12))
def test_the_same_as_fit_on_random_pools_including_clusters_of_several_pairs(seed: int) -> None:
    results, kwargs = random_pool(seed)
    kwargs.pop("mean")
    running = RunningFit(**kwargs)
    for r in results:
        running.add(r.a, r.b, r.score, r.cluster)
    assert_like_fit(running, results, **kwargs)


@pytest.mark.parametrize("seed", range(4))
def test_removing_clusters_and_entries_is_as_if_they_never_played(seed: int) -> None:
    results, kwargs = random_pool(100 + seed)
    kwargs.pop("mean")
    kwargs["min_clusters"] = 2
    running = RunningFit(**kwargs)
    for r in results:
        running.add(r.a, r.b, r.score, r.cluster)
    clusters = sorted({r.cluster for r in results})
    gone = set(random.Random(seed).sample(clusters, len(clusters) // 5))
    for c in gone:
        assert running.remove_cluster(c) > 0
    assert running.remove_cluster("never-played") == 0
    kept = [r for r in results if r.cluster not in gone]
    victim = kept[0].a
    running.remove_entry(victim)
    kept = [r for r in kept if victim not in (r.a, r.b)]
    try:
        fit(kept, **kwargs)
    except ValueError:
        pytest.skip("the pool fell apart into groups: fit refuses it")
    assert_like_fit(running, kept, **kwargs)
    assert running.clusters_of(victim) == 0


@pytest.mark.parametrize("seed", range(6))
def test_sealed_clusters_give_the_same_fit_and_leave_with_their_games_given_again(seed: int) -> None:
    """Issue 44: complete clusters folded into their pair's sums (no games kept) fit, and leave, as before."""
    results, kwargs = random_pool(200 + seed)
    kwargs.pop("mean")
    kwargs["min_clusters"] = 2
    running = RunningFit(**kwargs)
    for r in results:
        running.add(r.a, r.b, r.score, r.cluster)
    by_cluster: dict[str, list] = {}
    for r in results:
        by_cluster.setdefault(r.cluster, []).append(r)
    sealed = {c for c in by_cluster if running.seal(c)}
    assert sealed and all(len({frozenset((r.a, r.b)) for r in by_cluster[c]}) == 1 for c in sealed)
    assert not any(running.is_open(c) for c in sealed)
    assert running.clusters == len(by_cluster)
    assert_like_fit(running, results, **kwargs)
    rng = random.Random(seed)
    gone = set(rng.sample(sorted(by_cluster), len(by_cluster) // 5))
    for c in gone:
        again = [(r.a, r.b, r.score) for r in by_cluster[c]] if c in sealed else None
        assert running.remove_cluster(c, again) == len(by_cluster[c])
    kept = [r for r in results if r.cluster not in gone]
    victim = kept[0].a
    removed = running.remove_entry(victim)
    assert removed == sum(victim in (r.a, r.b) for r in kept)
    kept = [r for r in kept if victim not in (r.a, r.b)]
    assert running.clusters_of(victim) == 0 and running.games == len(kept)
    try:
        fit(kept, **kwargs)
    except ValueError:
        pytest.skip("the pool fell apart into groups: fit refuses it")
    assert_like_fit(running, kept, **kwargs)


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


def add_all(running: RunningFit, results: list[Result]) -> None:
    for r in results:
        running.add(r.a, r.b, r.score, r.cluster)


def test_the_same_as_fit_however_the_games_arrive_and_whenever_it_is_asked() -> None:
    results, _ = random_games(25, 6_000, seed=1)
    shuffled = results[:]
    random.Random(2).shuffle(shuffled)
    running = RunningFit()
    for start in range(0, len(shuffled), 1_700):  # pairs split across fits, too
        add_all(running, shuffled[start : start + 1_700])
        assert_like_fit(running, shuffled[: start + 1_700])
    assert running.games == 6_000
    add_all(running, results[:10])  # more games in clusters already counted
    assert_like_fit(running, results + results[:10])


@pytest.mark.parametrize("newcomers", [(), ("zz-new",)])
def test_a_fit_after_new_games_is_exact_and_starts_from_the_last(newcomers: tuple[str, ...]) -> None:
    results, strengths = random_games(30, 9_000, seed=3)
    running = RunningFit()
    add_all(running, results)
    cold = running.fit()
    assert cold is not None and cold.error_method == ERROR_CLUSTER
    new = more_games(strengths, 50, seed=4, prefix="n", extra=newcomers)
    add_all(running, new)
    warm = running.fit()
    assert warm is not None and set(newcomers) <= set(warm.rated)
    assert_like_fit(running, results + new)  # exact intervals too, not an approximation
    assert warm.iterations < cold.iterations  # the warm start saves Newton steps
    assert running.fit() is warm  # nothing new: the same answer, not a fit again


def test_too_few_entries_a_separate_group_and_bad_input() -> None:
    running = RunningFit()
    assert running.fit() is None  # nothing counted
    running.add("a", "b", 1.0, "x0")
    running.add("b", "a", 0.5, "x0")
    one_pair = running.fit()
    assert one_pair is not None and set(one_pair.rated) == {"a", "b"}
    # Two newcomers who only met each other: the largest group is rated, they wait for it.
    results, _ = random_games(8, 800, seed=13)
    add_all(running, results)
    ratings = running.fit()
    assert ratings is not None and set(ratings.rated) == {r.a for r in results}
    assert_like_fit(running, results)  # "a" and "b" count for nothing until they meet the pool
    with pytest.raises(ValueError, match="different"):
        running.add("a", "a", 1.0, "x1")
    with pytest.raises(ValueError, match="score"):
        running.add("a", "b", 0.25, "x1")
    with pytest.raises(ValueError, match="prior_draws"):
        RunningFit(prior_draws=-1.0)
    assert running.games == 802  # a refused game counts nothing


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
    """Simulated pools with correlated duplicate pairs: the intervals, before and after
    100 more games, cover the true ratings about 95% of the time."""
    rng = random.Random(14)
    hits = {"first": 0, "after more games": 0}
    total = 0
    for rep in range(150):
        # A spread of 80 Elo: with 150 the prior's pull toward the mean (one virtual draw
        # per pairing, about ten real pairs each here) alone brings coverage down to 93%.
        strengths = {f"p{x:02d}": rng.gauss(1500.0, 80.0) for x in range(16)}
        centre = sum(strengths.values()) / len(strengths)
        truth = {n: s - centre + 1500.0 for n, s in strengths.items()}
        running = RunningFit()
        add_all(running, correlated_games(strengths, 1_200, rng, f"r{rep}-"))
        first = running.fit()
        add_all(running, correlated_games(strengths, 50, rng, f"s{rep}-"))
        later = running.fit()
        assert first is not None and later is not None and later.error_method == ERROR_CLUSTER
        for name, true in truth.items():
            hits["first"] += first.rated[name].lower <= true <= first.rated[name].upper
            hits["after more games"] += later.rated[name].lower <= true <= later.rated[name].upper
            total += 1
    rates = {k: v / total for k, v in hits.items()}
    print(f"\ncoverage of 95% intervals over {total}: {rates}")
    for rate in rates.values():
        assert 0.93 <= rate <= 0.97, rates
