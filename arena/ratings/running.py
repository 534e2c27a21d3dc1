"""Counts kept as games come and go, and a fit whose cost does not grow with the games.

A ladder stores games for weeks and wants its leaderboard after every pair.
:func:`arena.ratings.fit` counts every game again each time (linear in the games);
:class:`RunningFit` keeps what the fit needs between calls, per pair of entries that met:

- the games and points (and wins and draws), which are all the ratings need;
- for the cluster-robust sandwich, the sums that give every cluster's score at any
  ratings: a cluster's score vector is ``g_c = Σ_p r_cp e_p`` over the pairs ``p`` that
  played in it, with ``r_cp = s_cp − n_cp π_p`` (points minus games times the expected
  score ``π_p``), so ``Σ_c r_cp r_cq = Sss − π_q Ssn − π_p Sns + π_p π_q Snn`` with
  ``Sss = Σ_c s_cp s_cq``, ``Ssn = Σ_c s_cp n_cq``, ... kept per ``(p, q)`` (``p = q``
  for a duplicate pair, whose two games are between the same two entries);
- how many clusters each entry played in (the method and the anchor,
  :mod:`arena.ratings.intervals`).

Adding a game or removing a cluster changes a handful of sums; :meth:`RunningFit.fit`
costs Newton's method over the pairs that met (warm-started from the last fit) and the
``k × k`` covariance: nothing in it is proportional to the number of games. Its
ratings and intervals are :func:`arena.ratings.fit`'s on the same games (to rounding).

**Memory.** A cluster's own games are kept while it may still change; once its owner
knows it is complete (a ladder's duplicate pair with both tables in), :meth:`RunningFit.seal`
folds it into its pair's sums and forgets it: a cluster of one pair of entries needs
nothing of its own beyond them. What is kept is then per pair of entries that met (and
per cluster still open), not per game. A sealed cluster is removed with its games given
again (:meth:`RunningFit.remove_cluster`); an entry's games are removed from the sums alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

import numpy as np
from numpy.typing import NDArray

from arena.ratings.bradley_terry import PairTotals, gradient, maximise, sigmoid
from arena.ratings.fitting import check_prior, method_for
from arena.ratings.graph import groups_of
from arena.ratings.intervals import centre, interval_covariance
from arena.ratings.linalg import dense_laplacian, dense_threads, regularised_inverse
from arena.ratings.model import ELO_PER_LOGIT, ERROR_CLUSTER, MIN_CLUSTERS, Z95

Floats = NDArray[np.float64]
Pair = tuple[str, str]  # (low, high) by name


@dataclasses.dataclass(frozen=True)
class Rated:
    """One entry's rating in a :class:`RunningFit` (Elo, its standard error and 95% interval)."""

    name: str
    elo: float
    se: float

    @property
    def lower(self) -> float:
        return self.elo - Z95 * self.se

    @property
    def upper(self) -> float:
        return self.elo + Z95 * self.se


@dataclasses.dataclass(frozen=True)
class RunningRatings:
    """What :meth:`RunningFit.fit` returns: the rated entries (the largest connected group)."""

    rated: Mapping[str, Rated]
    error_method: str
    error_note: str
    games: int
    clusters: int
    iterations: int


@dataclasses.dataclass
class _PairCounts:
    games: float = 0.0
    points: float = 0.0  # of the pair's low name
    wins: float = 0.0
    draws: float = 0.0
    clusters: int = 0
    sealed: int = 0  # of its clusters, those folded in and forgotten (each of this pair alone)


def _pair(a: str, b: str, score: float) -> tuple[Pair, float]:
    """The pair's key (names in order) and ``score`` from its low name's side."""
    return ((a, b), score) if a < b else ((b, a), 1.0 - score)


class RunningFit:
    """Bradley–Terry counts that games join and clusters leave; :meth:`fit` any time.

    ``prior_draws``, ``mean``, ``min_clusters`` and ``tol`` are :func:`arena.ratings.fit`'s.
    Not thread-safe: one caller at a time.
    """

    def __init__(
        self,
        *,
        prior_draws: float = 1.0,
        mean: float = 1500.0,
        min_clusters: int = MIN_CLUSTERS,
        tol: float = 1e-10,
    ) -> None:
        check_prior(prior_draws)
        self.prior_draws, self.mean, self.min_clusters, self.tol = prior_draws, mean, min_clusters, tol
        self._pairs: dict[Pair, _PairCounts] = {}
        # Per cluster, per pair: [games, points of the low name]; and its games, to remove them.
        self._clusters: dict[str, dict[Pair, list[float]]] = {}
        self._cluster_games: dict[str, list[tuple[str, str, float]]] = {}
        # Per (pair p, pair q), p <= q: [Sss, Ssn, Sns, Snn] over the clusters.
        self._cross: dict[tuple[Pair, Pair], list[float]] = {}
        self._entry_clusters: dict[str, int] = {}
        self._entry_games: dict[str, int] = {}
        self._sealed = 0  # clusters folded in (no detail kept)
        self._games = 0
        self._theta: dict[str, float] = {}
        self._cached: RunningRatings | None = None

    # -- counting ---------------------------------------------------------------------------

    @property
    def games(self) -> int:
        """Games counted now."""
        return self._games

    @property
    def clusters(self) -> int:
        """Clusters with a game counted now."""
        return len(self._clusters) + self._sealed

    def is_open(self, cluster: str) -> bool:
        """Whether ``cluster`` has games counted and its detail kept (not sealed)."""
        return cluster in self._clusters

    def clusters_of(self, name: str) -> int:
        """In how many clusters ``name`` played (0 if none)."""
        return self._entry_clusters.get(name, 0)

    def pairs_played(self) -> dict[frozenset[str], int]:
        """``{frozenset({a, b}): clusters they met in}`` for every pair that met."""
        return {frozenset(p): c.clusters for p, c in self._pairs.items() if c.clusters}

    def add(self, a: str, b: str, score: float, cluster: str) -> None:
        """Count one game: ``score`` from ``a``'s side (1, 0.5 or 0) in ``cluster``."""
        if a == b:
            raise ValueError(f"a game needs two different entries, got {a!r} twice")
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"score must be 0, 0.5 or 1 (for a), got {score!r}")
        rows = self._clusters.get(cluster)
        if rows is None:
            rows = self._clusters[cluster] = {}
            self._cluster_games[cluster] = []
        self._cross_update(rows, -1.0)
        key, s = _pair(a, b, score)
        for name in key:
            if not any(name in p for p in rows):
                self._entry_clusters[name] = self._entry_clusters.get(name, 0) + 1
            self._entry_games[name] = self._entry_games.get(name, 0) + 1
        row = rows.get(key)
        counts = self._pairs.setdefault(key, _PairCounts())
        if row is None:
            row = rows[key] = [0.0, 0.0]
            counts.clusters += 1
        row[0] += 1.0
        row[1] += s
        counts.games += 1.0
        counts.points += s
        counts.wins += s == 1.0
        counts.draws += s == 0.5
        self._cross_update(rows, +1.0)
        self._cluster_games[cluster].append((a, b, score))
        self._games += 1
        self._cached = None

    def seal(self, cluster: str) -> bool:
        """Fold ``cluster`` into its pair's sums and forget its games: no game of it will be added again.

        Only a cluster of one pair of entries is folded (True); one of several
        pairs stays open (False), as does one never played.
        """
        rows = self._clusters.get(cluster)
        if rows is None or len(rows) != 1:
            return False
        (key,) = rows
        del self._clusters[cluster]
        del self._cluster_games[cluster]
        self._pairs[key].sealed += 1
        self._sealed += 1
        return True

    def remove_cluster(self, cluster: str, games: Iterable[tuple[str, str, float]] | None = None) -> int:
        """Remove every game of ``cluster``; returns how many (0 if it had none).

        A sealed cluster's games are no longer kept: its owner gives them
        again (``games``: ``(a, b, score)`` as they were added); without them
        a cluster that is not open counts as never played.
        """
        if cluster not in self._clusters:
            return 0 if games is None else self._remove_sealed(list(games))
        rows = self._clusters.pop(cluster)
        games = self._cluster_games.pop(cluster)
        self._cross_update(rows, -1.0)
        for name in {n for p in rows for n in p}:
            self._entry_clusters[name] -= 1
        self._uncount(games)
        for key in rows:
            counts = self._pairs[key]
            counts.clusters -= 1
            if counts.games == 0:
                del self._pairs[key]
        self._games -= len(games)
        self._cached = None
        return len(games)

    def _remove_sealed(self, games: list[tuple[str, str, float]]) -> int:
        """Remove a sealed cluster whose games are ``games`` (one pair's, as :meth:`seal` requires)."""
        if not games:
            return 0
        rows: dict[Pair, list[float]] = {}
        for a, b, score in games:
            key, s = _pair(a, b, score)
            row = rows.setdefault(key, [0.0, 0.0])
            row[0] += 1.0
            row[1] += s
        if len(rows) != 1 or next(iter(rows)) not in self._pairs:
            raise ValueError(f"not the games of a sealed cluster: {games!r}")
        (key,) = rows
        self._cross_update(rows, -1.0)
        for name in key:
            self._entry_clusters[name] -= 1
        self._uncount(games)
        counts = self._pairs[key]
        counts.clusters -= 1
        counts.sealed -= 1
        self._sealed -= 1
        if counts.games == 0:
            del self._pairs[key]
        self._games -= len(games)
        self._cached = None
        return len(games)

    def _uncount(self, games: Iterable[tuple[str, str, float]]) -> None:
        for a, b, score in games:
            key, s = _pair(a, b, score)
            counts = self._pairs[key]
            counts.games -= 1.0
            counts.points -= s
            counts.wins -= s == 1.0
            counts.draws -= s == 0.5
            for name in key:
                self._entry_games[name] -= 1

    def remove_entry(self, name: str) -> int:
        """Remove every game ``name`` played (the rest of its clusters stay); returns how many."""
        removed = 0
        for cluster in [c for c, rows in self._clusters.items() if any(name in p for p in rows)]:
            games = self._cluster_games[cluster]
            self.remove_cluster(cluster)
            for a, b, score in games:
                if name in (a, b):
                    removed += 1
                else:
                    self.add(a, b, score, cluster)
        # What is left of its pairs is their sealed clusters (each of that pair alone): drop them whole.
        for key in [p for p in self._pairs if name in p]:
            counts = self._pairs.pop(key)
            for entry in key:
                self._entry_clusters[entry] -= counts.sealed
                self._entry_games[entry] -= int(counts.games)
            for pq in [pq for pq in self._cross if key in pq]:
                del self._cross[pq]
            self._sealed -= counts.sealed
            self._games -= int(counts.games)
            removed += int(counts.games)
        self._cached = None
        return removed

    def _cross_update(self, rows: Mapping[Pair, list[float]], sign: float) -> None:
        """Add (``sign`` 1) or remove (−1) one cluster's terms of the sums ``S``."""
        keys = sorted(rows)
        for x, p in enumerate(keys):
            np_, sp = rows[p]
            for q in keys[x:]:
                nq, sq = rows[q]
                acc = self._cross.setdefault((p, q), [0.0, 0.0, 0.0, 0.0])
                acc[0] += sign * sp * sq
                acc[1] += sign * sp * nq
                acc[2] += sign * np_ * sq
                acc[3] += sign * np_ * nq
                if sign < 0 and acc[3] <= 0.5:  # no cluster left with both: drop the rounding
                    del self._cross[(p, q)]

    # -- the fit ----------------------------------------------------------------------------

    def fit(self) -> RunningRatings | None:
        """Ratings of the largest connected group of entries (``None`` below two entries)."""
        if self._cached is not None:
            return self._cached
        names = sorted(n for n, g in self._entry_games.items() if g > 0)
        if len(names) < 2:
            return None
        index = {n: x for x, n in enumerate(names)}
        keys = sorted(self._pairs)
        pi = np.array([index[a] for a, _ in keys], dtype=np.int64)
        pj = np.array([index[b] for _, b in keys], dtype=np.int64)
        groups = groups_of(names, pi, pj)
        group = groups[0]
        if len(group) < 2:
            return None
        if len(group) < len(names):
            inside = set(group)
            keys = [p for p in keys if p[0] in inside]
            names = group
            index = {n: x for x, n in enumerate(names)}
            clusters = sum(1 for rows in self._clusters.values() if next(iter(rows))[0] in inside)
            clusters += sum(self._pairs[p].sealed for p in keys)
        else:
            clusters = self.clusters
        k = len(names)
        pair_index = {p: x for x, p in enumerate(keys)}
        pi = np.array([index[a] for a, _ in keys], dtype=np.int64)
        pj = np.array([index[b] for _, b in keys], dtype=np.int64)
        games = np.array([self._pairs[p].games for p in keys])
        points = np.array([self._pairs[p].points for p in keys])
        totals = PairTotals(k, pi, pj, games + self.prior_draws, points + self.prior_draws / 2.0)
        known = [self._theta[n] for n in names if n in self._theta]
        start = None
        if known:
            centre_ = sum(known) / len(known)
            start = np.array([self._theta.get(n, centre_) for n in names])
        per_entry = np.array([self._entry_clusters[n] for n in names], dtype=np.int64)
        with dense_threads():
            theta, iterations = maximise(totals, start=start, tol=self.tol)
            method, note, anchor = method_for(per_entry, clusters, self.min_clusters)
            _, v = gradient(theta, totals)
            q = regularised_inverse(dense_laplacian(k, pi, pj, v))
            sandwich = None
            if method == ERROR_CLUSTER:
                meat = self._meat(k, keys, pair_index, pi, pj, sigmoid(theta[pi] - theta[pj]))
                sandwich = q @ (meat @ q)
                sandwich = (sandwich + sandwich.T) / 2.0
            cov = interval_covariance(q, sandwich, clusters, anchor)
        self._theta = dict(zip(names, theta.tolist(), strict=True))
        elo = (self.mean + ELO_PER_LOGIT * centre(theta, anchor)).tolist()
        se = (ELO_PER_LOGIT * np.sqrt(np.maximum(np.diagonal(cov), 0.0))).tolist()
        rated = {n: Rated(n, elo[x], se[x]) for x, n in enumerate(names)}
        self._cached = RunningRatings(
            rated, method, note, int(games.sum()), clusters, iterations
        )
        return self._cached

    def _meat(
        self, k: int, keys: list[Pair], pair_index: Mapping[Pair, int],
        pi: NDArray[np.int64], pj: NDArray[np.int64], expected: Floats,
    ) -> Floats:  # fmt: skip
        """``Σ_c g_c g_cᵀ`` at the expected scores ``expected`` (per pair), from the sums ``S``."""
        p_idx, q_idx, sums = [], [], []
        for (p, q), acc in self._cross.items():
            x, y = pair_index.get(p), pair_index.get(q)
            if x is None or y is None:
                continue
            p_idx.append(x)
            q_idx.append(y)
            sums.append(acc)
        meat = np.zeros((k, k))
        if not sums:
            return meat
        px, qx = np.array(p_idx), np.array(q_idx)
        s = np.array(sums)
        ep, eq = expected[px], expected[qx]
        coef = s[:, 0] - eq * s[:, 1] - ep * s[:, 2] + ep * eq * s[:, 3]
        off = px != qx
        # coef · (e_p e_qᵀ + e_q e_pᵀ) for p ≠ q, coef · e_p e_pᵀ for p = q.
        for a_idx, b_idx, c in (
            (px, qx, coef), (qx[off], px[off], coef[off]),
        ):  # fmt: skip
            ai, aj, bi, bj = pi[a_idx], pj[a_idx], pi[b_idx], pj[b_idx]
            np.add.at(meat, (ai, bi), c)
            np.add.at(meat, (ai, bj), -c)
            np.add.at(meat, (aj, bi), -c)
            np.add.at(meat, (aj, bj), c)
        return meat

    def extend(self, games: Iterable[tuple[str, str, float, str]]) -> None:
        """:meth:`add` each ``(a, b, score, cluster)``."""
        for a, b, score, cluster in games:
            self.add(a, b, score, cluster)


__all__ = ["Rated", "RunningFit", "RunningRatings"]
