"""Ratings kept current as games arrive: exact refits, and cheap updates between them.

A ladder plays games all the time and its matchmaker wants the ratings and their
intervals after every few. :class:`Ladder` keeps the games' counts between calls:

- :meth:`Ladder.refit`: the full fit (the same as :func:`arena.ratings.fit` on all the
  games, exact intervals), warm-started from the last solution.
- :meth:`Ladder.update`: what a matchmaker needs, cheaply. The ratings are the exact
  maximum-likelihood ratings of all games so far (Newton's method from the last
  solution: a couple of iterations, each linear in the pairs that met). The intervals
  are the last full fit's, corrected for the new games by low-rank updates
  (:mod:`arena.ratings.woodbury`): exact for the pairs and clusters that played since,
  approximate for the rest (their weights stay those of the last full fit's ratings).
  When too many terms have changed or the ratings have moved too far, the update
  recomputes the intervals exactly and starts a new baseline. The snapshot says which.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse
from numpy.typing import NDArray

from arena.ratings.bradley_terry import maximise, sigmoid
from arena.ratings.fitting import (
    ELO_PER_LOGIT,
    MIN_CLUSTERS,
    Z95,
    Exact,
    assemble,
    check_prior,
    clusters_per_player,
    disconnected,
    exact_covariance,
    method_for,
    pair_totals,
)
from arena.ratings.graph import groups_of, scored_graph_strongly_connected
from arena.ratings.intervals import anchored, centre, robust_factor
from arena.ratings.linalg import dense_threads
from arena.ratings.model import ERROR_CLUSTER, PlayerRating, Ratings, Result
from arena.ratings.superiority import normal_cdf
from arena.ratings.tally import (
    Tally,
    columns,
    crosstable_of,
    records_of,
    sorted_codes,
    tally_arrays,
)
from arena.ratings.woodbury import Baseline, Changes, Floored, update

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

#: Keys of pairs and (cluster, pair) rows in the lookup dicts: ``high * KEY + low``.
KEY = 1 << 32
#: Interval note of an exact snapshot.
EXACT = "exact"
#: Interval note of a snapshot whose intervals were updated from the last full fit.
UPDATED = "updated"


@dataclass(frozen=True, eq=False)
class Snapshot:
    """What a matchmaker needs after an :meth:`Ladder.update`: ratings and 95% intervals.

    ``players`` is best first, like :attr:`arena.ratings.Ratings.players` (with each
    entry's record). The ratings are exact (the maximum-likelihood fit of every game so
    far); ``intervals`` is :data:`EXACT` or :data:`UPDATED` (corrected from the last full
    fit by low-rank updates, see :mod:`arena.ratings.ladder`), and ``interval_note``
    says how, with how many games since the last full fit.
    """

    players: tuple[PlayerRating, ...]
    error_method: str
    error_note: str
    intervals: str
    interval_note: str
    games: int
    clusters: int
    games_since_refit: int
    iterations: int
    mean: float
    _index: dict[str, int] = field(repr=False)
    _elo: Floats = field(repr=False)
    _cov: Floored | Exact = field(repr=False)
    _names: tuple[str, ...] = field(repr=False)

    def __getitem__(self, name: str) -> PlayerRating:
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[PlayerRating]:
        return iter(self.players)

    @property
    def names(self) -> list[str]:
        """Entry names, best first."""
        return [p.name for p in self.players]

    @property
    def exact(self) -> bool:
        """Whether the intervals are exact (a full computation) rather than updated."""
        return self.intervals == EXACT

    def covariance(self, a: str, b: str) -> float:
        """The covariance of two ratings, Elo²."""
        x, y = self._index[a], self._index[b]
        if isinstance(self._cov, Exact):
            value = float(self._cov.covariance[x, y])
        else:
            value = self._cov.entry(x, y)
        return ELO_PER_LOGIT * ELO_PER_LOGIT * value

    def los(self, a: str, b: str) -> float:
        """The likelihood that ``a`` is stronger than ``b``."""
        if a == b:
            raise ValueError("LOS compares two different entries")
        x, y = self._index[a], self._index[b]
        var = self.covariance(a, a) + self.covariance(b, b) - 2.0 * self.covariance(a, b)
        diff = float(self._elo[x] - self._elo[y])
        if var > 1e-18:
            return normal_cdf(diff / math.sqrt(var))
        return 1.0 if diff > 0 else 0.0 if diff < 0 else 0.5

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the leaderboard, with the interval's provenance)."""
        return {
            "method": {
                "error_bars": self.error_method,
                "error_note": self.error_note,
                "intervals": self.intervals,
                "interval_note": self.interval_note,
                "iterations": self.iterations,
                "mean": self.mean,
                "z": Z95,
            },
            "games": self.games,
            "clusters": self.clusters,
            "games_since_refit": self.games_since_refit,
            "players": [p.to_dict() for p in self.players],
        }


@dataclass(eq=False)
class _Base:
    """The last full fit: ratings, counts and matrices the updates start from."""

    theta: Floats
    k: int
    pairs: int
    rows: int
    pair_games: Floats
    row_games: Floats
    row_points: Floats
    weights: Floats
    matrices: Baseline
    games: int
    excess: Floats | None = None  # what the floor added to the sandwich (intervals.floored)
    model_excess: Floats | None = None  # and to the model's covariance


class Ladder:
    """Bradley–Terry ratings of a growing pool, kept current as games arrive.

    ``prior_draws``, ``mean``, ``min_clusters`` and ``tol`` mean what they mean for
    :func:`arena.ratings.fit`. ``max_terms``: the most changed pairs and clusters an
    update corrects for before it recomputes exactly (default ``max(256, k/2)``: beyond
    that the corrections cost about as much as the exact computation);
    ``max_shift``: the most a rating may have moved (Elo) since the last full fit
    before the same. Not thread-safe: one caller at a time.
    """

    def __init__(
        self,
        *,
        prior_draws: float = 1.0,
        mean: float = 1500.0,
        min_clusters: int = MIN_CLUSTERS,
        tol: float = 1e-10,
        max_terms: int | None = None,
        max_shift: float = 5.0,
    ) -> None:
        check_prior(prior_draws)
        if max_terms is not None and max_terms < 0:
            raise ValueError(f"max_terms must be >= 0, got {max_terms!r}")
        if not max_shift >= 0:
            raise ValueError(f"max_shift must be >= 0 (Elo), got {max_shift!r}")
        self.prior_draws, self.mean, self.min_clusters, self.tol = (
            prior_draws,
            mean,
            min_clusters,
            tol,
        )
        self.max_terms, self.max_shift = max_terms, max_shift
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        self._cluster_ids: list[str] = []
        self._cluster_index: dict[str, int] = {}
        # Every game, in internal indices (the counts are rebuilt from them at a refit).
        self._ga = np.zeros(0, dtype=np.int64)
        self._gb = np.zeros(0, dtype=np.int64)
        self._gs = np.zeros(0)
        self._gc = np.zeros(0, dtype=np.int64)
        self._counted = 0  # games already in self._t
        self._t: Tally | None = None
        self._pair_row: dict[int, int] = {}
        self._cluster_row: dict[int, int] = {}
        self._theta = np.zeros(0)
        self._base: _Base | None = None
        self._exact: Exact | None = None

    @property
    def games(self) -> int:
        """Games added so far."""
        return len(self._gs)

    @property
    def players(self) -> list[str]:
        """Entry names, sorted."""
        return sorted(self._names)

    def add(self, results: Iterable[Result]) -> int:
        """Count new games (any order; a duplicate pair may arrive in two calls). Returns how many."""
        a, b, s, c = columns(results)
        for name in (*a, *b):
            if name not in self._index:
                self._index[name] = len(self._names)
                self._names.append(name)
        for cid in c:
            if cid not in self._cluster_index:
                self._cluster_index[cid] = len(self._cluster_ids)
                self._cluster_ids.append(cid)
        get, cget = self._index.__getitem__, self._cluster_index.__getitem__
        self._ga = np.concatenate([self._ga, np.array(list(map(get, a)), dtype=np.int64)])
        self._gb = np.concatenate([self._gb, np.array(list(map(get, b)), dtype=np.int64)])
        self._gs = np.concatenate([self._gs, np.asarray(s, dtype=np.float64)])
        self._gc = np.concatenate([self._gc, np.array(list(map(cget, c)), dtype=np.int64)])
        return len(a)

    # -- full refit ----------------------------------------------------------------------

    def refit(self) -> Ratings:
        """The full fit of every game so far (exact intervals), warm-started; the new baseline."""
        if not self.games:
            raise ValueError("no results to fit")
        # Renumber players and clusters in sorted order, as fit() does: the same counts
        # in the same order, so the same ratings.
        players, rank = sorted_codes(self._names, few=True)
        clusters, crank = sorted_codes(self._cluster_ids)
        self._names, self._index = players, {p: x for x, p in enumerate(players)}
        self._cluster_ids, self._cluster_index = clusters, {c: x for x, c in enumerate(clusters)}
        self._ga, self._gb, self._gc = rank[self._ga], rank[self._gb], crank[self._gc]
        theta_old = np.zeros(len(players))
        if len(self._theta):
            known = rank[: len(self._theta)]
            theta_old[known] = self._theta
        t = tally_arrays(players, self._ga, self._gb, self._gs, self._gc, len(clusters))
        self._set_tally(t)
        self._check(t)
        pairs = pair_totals(t, self.prior_draws)
        with dense_threads():
            theta, iterations = maximise(pairs, start=theta_old, tol=self.tol)
            method, note, anchor = method_for(clusters_per_player(t), t.clusters, self.min_clusters)
            exact = exact_covariance(t, pairs, theta, method, anchor)
        self._theta = theta
        self._set_base(t, theta, exact, anchor)
        self._exact = exact
        return assemble(
            t.players, centre(theta, anchor), exact.covariance, method, note, self.mean, self.prior_draws, iterations,
            records=records_of(t), crosstable=crosstable_of(t), games=t.total_games,
            clusters=t.clusters,
        )  # fmt: skip

    def _set_tally(self, t: Tally) -> None:
        self._t = t
        self._counted = t.total_games
        self._pair_row = dict(
            zip((t.pair_j * KEY + t.pair_i).tolist(), range(len(t.pair_i)), strict=True)
        )
        self._cluster_row = dict(
            zip((t.row_cluster * KEY + t.row_pair).tolist(), range(len(t.row_pair)), strict=True)
        )

    def _set_base(self, t: Tally, theta: Floats, exact: Exact, anchor: NDArray[np.bool_]) -> None:
        excess = model_excess = None
        if exact.a is not None:
            excess = exact.covariance - anchored(robust_factor(t.clusters) * exact.a, anchor)
            model_excess = exact.covariance - anchored(exact.q - 1.0 / t.k, anchor)
        self._base = _Base(
            theta=theta.copy(), k=t.k, pairs=len(t.pair_i), rows=len(t.row_pair),
            pair_games=t.games.copy(), row_games=t.row_games.copy(), row_points=t.row_points.copy(),
            weights=exact.weights.copy(), matrices=Baseline(exact.q, exact.a), games=t.total_games,
            excess=excess, model_excess=model_excess,
        )  # fmt: skip

    def _check(self, t: Tally) -> None:
        groups = groups_of(t.players, t.pair_i, t.pair_j)
        if len(groups) > 1:
            raise disconnected(groups)
        if self.prior_draws == 0 and not scored_graph_strongly_connected(
            t.k, t.pair_i, t.pair_j, t.games, t.points
        ):
            raise ValueError(
                "with prior_draws=0 the ratings are infinite: some group of players won every "
                "game against the rest; use prior_draws > 0"
            )

    # -- cheap update ----------------------------------------------------------------------

    def update(self) -> Snapshot:
        """Ratings (exact, warm-started) and intervals (updated, or exact when due) for a matchmaker."""
        if not self.games:
            raise ValueError("no results to fit")
        if self._t is None or self._base is None:
            self.refit()
            return self._snapshot_exact(iterations=0)
        t = self._merge()
        self._check(t)
        pairs = pair_totals(t, self.prior_draws)
        start = np.concatenate([self._theta, np.zeros(t.k - len(self._theta))])
        with dense_threads():
            theta, iterations = maximise(pairs, start=start, tol=self.tol)
            self._theta = theta
            method, note, anchor = method_for(clusters_per_player(t), t.clusters, self.min_clusters)
            base = self._base
            robust = method == ERROR_CLUSTER
            changes = self._changes(t, theta, pairs_n=pairs.n)
            terms = len(changes.pair_i) + changes.scores.shape[1] + (t.k - base.k)
            shift = ELO_PER_LOGIT * float(np.max(np.abs(theta[: base.k] - base.theta), initial=0.0))
            limit = self.max_terms if self.max_terms is not None else max(256, t.k // 2)
            if (robust and base.matrices.a is None) or terms > limit or shift > self.max_shift:
                why = (
                    f"{terms} changed terms (limit {limit})" if terms > limit
                    else f"ratings moved up to {shift:.1f} Elo (limit {self.max_shift:g})" if shift > self.max_shift
                    else "the error method changed to cluster-robust"
                )  # fmt: skip
                exact = exact_covariance(t, pairs, theta, method, anchor)
                self._set_base(t, theta, exact, anchor)
                self._exact = exact
                return self._snapshot(t, theta, exact, method, note, EXACT,
                                      f"exact: recomputed in full ({why})", iterations, anchor)  # fmt: skip
            model = update(base.matrices, changes, robust=False, clusters=t.clusters)
            cov = (
                Floored(update(base.matrices, changes, robust=True, clusters=t.clusters), model, anchor,
                        t.clusters, base.excess, base.model_excess)
                if robust else Floored(None, model, anchor, t.clusters)
            )  # fmt: skip
        since = t.total_games - base.games
        text = (
            f"updated from the last full fit for {since} new games ({terms} changed pairs, clusters "
            f"and players; low-rank corrections); pairs that did not play keep the last full fit's "
            f"weights (ratings moved up to {shift:.2f} Elo since): refit for exact intervals"
        )
        return self._snapshot(t, theta, cov, method, note, UPDATED, text, iterations, anchor)

    def _snapshot_exact(self, iterations: int) -> Snapshot:
        assert self._t is not None and self._base is not None
        t = self._t
        method, note, anchor = method_for(clusters_per_player(t), t.clusters, self.min_clusters)
        assert self._exact is not None
        return self._snapshot(
            t, self._theta, self._exact, method, note, EXACT, "exact: a full fit", iterations, anchor
        )

    def _snapshot(
        self, t: Tally, theta: Floats, cov: Floored | Exact, method: str, note: str,
        intervals: str, text: str, iterations: int, anchor: NDArray[np.bool_],
    ) -> Snapshot:  # fmt: skip
        diag = np.diagonal(cov.covariance) if isinstance(cov, Exact) else cov.diagonal
        elo = self.mean + ELO_PER_LOGIT * centre(theta, anchor)
        se = (ELO_PER_LOGIT * np.sqrt(np.maximum(diag, 0.0))).tolist()
        records = records_of(t)
        elo_list = elo.tolist()
        order = sorted(range(t.k), key=lambda x: (-elo_list[x], t.players[x]))
        players = tuple(
            PlayerRating(t.players[x], rank, elo_list[x], se[x], elo_list[x] - Z95 * se[x],
                         elo_list[x] + Z95 * se[x], records[t.players[x]])
            for rank, x in enumerate(order, 1)
        )  # fmt: skip
        base = self._base
        assert base is not None
        return Snapshot(
            players=players, error_method=method, error_note=note, intervals=intervals,
            interval_note=text, games=t.total_games, clusters=t.clusters,
            games_since_refit=t.total_games - base.games, iterations=iterations, mean=self.mean,
            _index=dict(self._index), _elo=elo, _cov=cov, _names=tuple(t.players),
        )  # fmt: skip

    def _merge(self) -> Tally:
        """Add the games not yet counted to the counts (pairs and rows appended, never moved)."""
        t = self._t
        assert t is not None
        start = self._counted
        if start == self.games and t.k == len(self._names):
            return t
        batch = tally_arrays(
            self._names, self._ga[start:], self._gb[start:], self._gs[start:], self._gc[start:],
            len(self._cluster_ids),
        )  # fmt: skip
        # Pairs: add to those that exist, append the new ones.
        keys = (batch.pair_j * KEY + batch.pair_i).tolist()
        where = np.array([self._pair_row.get(x, -1) for x in keys], dtype=np.int64)
        fresh = np.flatnonzero(where < 0)
        where[fresh] = len(t.pair_i) + np.arange(len(fresh))
        for x, row in zip(fresh.tolist(), where[fresh].tolist(), strict=True):
            self._pair_row[keys[x]] = row
        is_old = where < len(t.pair_i)
        games, points, wins, draws = t.games.copy(), t.points.copy(), t.wins.copy(), t.draws.copy()
        for mine, theirs in (
            (games, batch.games), (points, batch.points), (wins, batch.wins), (draws, batch.draws)
        ):  # fmt: skip
            mine[where[is_old]] += theirs[is_old]  # distinct pairs: no index twice
        t.games = np.concatenate([games, batch.games[fresh]])
        t.points = np.concatenate([points, batch.points[fresh]])
        t.wins = np.concatenate([wins, batch.wins[fresh]])
        t.draws = np.concatenate([draws, batch.draws[fresh]])
        t.pair_i = np.concatenate([t.pair_i, batch.pair_i[fresh]])
        t.pair_j = np.concatenate([t.pair_j, batch.pair_j[fresh]])
        # Rows (cluster, pair): the same.
        row_pair = where[batch.row_pair]
        rkeys = (batch.row_cluster * KEY + row_pair).tolist()
        rwhere = np.array([self._cluster_row.get(x, -1) for x in rkeys], dtype=np.int64)
        rfresh = np.flatnonzero(rwhere < 0)
        rwhere[rfresh] = len(t.row_pair) + np.arange(len(rfresh))
        for x, row in zip(rfresh.tolist(), rwhere[rfresh].tolist(), strict=True):
            self._cluster_row[rkeys[x]] = row
        rolds = np.flatnonzero(rwhere < len(t.row_pair))
        row_games, row_points = t.row_games.copy(), t.row_points.copy()
        row_games[rwhere[rolds]] += batch.row_games[rolds]  # distinct rows
        row_points[rwhere[rolds]] += batch.row_points[rolds]
        t.row_games = np.concatenate([row_games, batch.row_games[rfresh]])
        t.row_points = np.concatenate([row_points, batch.row_points[rfresh]])
        t.row_cluster = np.concatenate([t.row_cluster, batch.row_cluster[rfresh]])
        t.row_pair = np.concatenate([t.row_pair, row_pair[rfresh]])
        t.players = list(self._names)
        t.index = dict(self._index)
        t.clusters = len(self._cluster_ids)
        t.total_games = self.games
        self._counted = self.games
        return t

    def _changes(self, t: Tally, theta: Floats, *, pairs_n: Floats) -> Changes:
        """The pairs and clusters whose terms differ from the baseline's, at ``theta``."""
        base = self._base
        assert base is not None
        # Pairs that played since: new weight at theta minus the baseline's.
        played = np.ones(len(t.pair_i), dtype=bool)
        played[: base.pairs] = t.games[: base.pairs] != base.pair_games
        idx = np.flatnonzero(played)
        i, j = t.pair_i[idx], t.pair_j[idx]
        p = sigmoid(theta[i] - theta[j])
        delta = pairs_n[idx] * p * (1.0 - p)
        known = idx < base.pairs
        delta[known] -= base.weights[idx[known]]
        # Clusters that played since: their new score vectors in, their old ones out.
        changed_rows = np.ones(len(t.row_pair), dtype=bool)
        changed_rows[: base.rows] = (t.row_games[: base.rows] != base.row_games) | (
            t.row_points[: base.rows] != base.row_points
        )
        touched = np.unique(t.row_cluster[changed_rows])
        rows = np.flatnonzero(np.isin(t.row_cluster, touched))
        col = np.searchsorted(touched, t.row_cluster[rows])
        ri, rj = t.pair_i[t.row_pair[rows]], t.pair_j[t.row_pair[rows]]
        r_new = t.row_points[rows] - t.row_games[rows] * sigmoid(theta[ri] - theta[rj])
        was = rows < base.rows
        orows = rows[was]
        oi, oj = ri[was], rj[was]
        r_old = base.row_points[orows] - base.row_games[orows] * sigmoid(
            base.theta[oi] - base.theta[oj]
        )
        s = len(touched)
        entries = (
            np.concatenate([ri, rj, oi, oj]),
            np.concatenate([col, col, s + col[was], s + col[was]]),
            np.concatenate([r_new, -r_new, r_old, -r_old]),
        )
        scores = scipy.sparse.csc_array(
            scipy.sparse.coo_array((entries[2], (entries[0], entries[1])), shape=(t.k, 2 * s))
        )
        signs = np.concatenate([np.ones(s), -np.ones(s)])
        return Changes(t.k, i, j, delta, scores, signs)
