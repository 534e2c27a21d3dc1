"""RunningFit: counts that games join and clusters leave give arena.ratings.fit's numbers."""

from __future__ import annotations

import random

import pytest
from test_ratings_oracle import random_pool

from arena.ratings import fit
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
