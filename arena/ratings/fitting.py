"""``fit``: results in, Bradley–Terry ratings with error bars, LOS and crosstable out.

``arena.ratings.fit`` calls this module's :func:`fit` (imported on first use: numpy and
scipy load only when something is fitted).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.ratings.bradley_terry import PairTotals, gradient, maximise
from arena.ratings.covariance import cluster_scores, meat, sandwich
from arena.ratings.graph import components_of, strongly_connected
from arena.ratings.intervals import anchor_of, centre, interval_covariance
from arena.ratings.linalg import dense_laplacian, dense_threads, regularised_inverse
from arena.ratings.model import (
    ELO_PER_LOGIT,
    ERROR_CLUSTER,
    ERROR_MODEL,
    MIN_CLUSTERS,
    Z95,
    PlayerRating,
    PlayerRecord,
    Ratings,
    Result,
)
from arena.ratings.superiority import los_matrix
from arena.ratings.tally import Tally, crosstable_of, records_of, tally
from arena.ratings.views import NamedMatrix

Floats = NDArray[np.float64]


def fit(
    results: Iterable[Result],
    *,
    prior_draws: float = 1.0,
    mean: float = 1500.0,
    min_clusters: int = MIN_CLUSTERS,
    tol: float = 1e-10,
    start: Mapping[str, float] | None = None,
) -> Ratings:
    """Fit Bradley–Terry ratings to ``results`` by maximum likelihood.

    - Every game counts the same and their order does not matter (wins 1, draws half a
      win to each side). ``prior_draws`` virtual draws are added to every pairing that
      played, a weak prior that keeps a clean sweep finite; ``prior_draws=0`` is the
      plain maximum likelihood, which exists only if no group of players won every game
      against the rest (``ValueError`` otherwise).
    - Ratings are in Elo (``400/ln 10`` per logit) with the mean of the established
      players (below; all players while fewer than two are) at ``mean``.
    - Error bars are 95% intervals (±1.96 se). Once at least two players appear in at
      least ``min_clusters`` clusters (duplicate pairs, ``Result.cluster``), they are
      the larger of the cluster-robust sandwich (with the CR1 factor and Student's t
      quantile for few clusters) and the model's (Fisher) covariance, in every
      direction; until then the model's alone. ``Ratings.error_method`` says which.
      Ratings and intervals are centred on the players with ``min_clusters`` clusters
      (all of them while fewer than two have): a newcomer's first games do not widen
      the others' intervals (:mod:`arena.ratings.intervals`). Exact at any size.
    - The comparison graph must be connected: if some players never met the others
      (directly or through others) their relative level is unknown and ``ValueError``
      is raised naming the groups; :func:`arena.ratings.components` finds the groups,
      to fit each on its own.
    - ``start``: a warm start, e.g. the Elo of a previous fit
      (``{p.name: p.elo for p in old.players}``; players it lacks start at its mean).
      It saves Newton iterations, never changes the answer. To keep a ladder current
      as games arrive, :class:`arena.ratings.running.RunningFit` keeps the counts between calls.
    """
    check_prior(prior_draws)
    t = tally(results)
    check_fittable(t, prior_draws)
    pairs = pair_totals(t, prior_draws)
    with dense_threads():
        theta, iterations = maximise(pairs, start=start_vector(t.players, start), tol=tol)
        method, note, anchor = error_method(t, min_clusters)
        exact = exact_covariance(t, pairs, theta, method, anchor)
    return assemble(
        t.players, centre(theta, anchor), exact.covariance, method, note, mean, prior_draws, iterations,
        records=records_of(t), crosstable=crosstable_of(t), games=t.total_games,
        clusters=t.clusters,
    )  # fmt: skip


def check_prior(prior_draws: float) -> None:
    """Refuse a negative or non-finite prior."""
    if prior_draws < 0 or not math.isfinite(prior_draws):
        raise ValueError(f"prior_draws must be a finite number >= 0, got {prior_draws!r}")


def check_fittable(t: Tally, prior_draws: float) -> None:
    """Raise ``ValueError`` unless the ratings are identified and finite."""
    if not t.players:
        raise ValueError("no results to fit")
    groups = components_of(t)
    if len(groups) > 1:
        raise disconnected(groups)
    if prior_draws == 0 and not strongly_connected(t):
        raise ValueError(
            "with prior_draws=0 the ratings are infinite: some group of players won every "
            "game against the rest; use prior_draws > 0"
        )


def disconnected(groups: list[list[str]]) -> ValueError:
    """The error for a game graph in several groups, naming them."""
    shown = "; ".join(", ".join(map(repr, g)) for g in groups)
    return ValueError(
        f"the players fall into {len(groups)} groups that never met ({shown}): "
        "their ratings are not comparable; fit each group separately"
    )


def pair_totals(t: Tally, prior_draws: float) -> PairTotals:
    """The fit's data: per pair, games and points with ``prior_draws`` virtual draws added."""
    return PairTotals(t.k, t.pair_i, t.pair_j, t.games + prior_draws, t.points + prior_draws / 2.0)


def start_vector(players: Sequence[str], start: Mapping[str, float] | None) -> Floats | None:
    """Logits from a previous fit's Elo by name (unknown players at its mean), or ``None``."""
    if not start:
        return None
    known = [start[p] for p in players if p in start]
    if not known:
        return None
    centre = sum(known) / len(known)
    return np.array([(start.get(p, centre) - centre) / ELO_PER_LOGIT for p in players])


def clusters_per_player(t: Tally) -> NDArray[np.int64]:
    """In how many distinct clusters each player played."""
    k = max(t.k, 1)
    i, j = t.pair_i[t.row_pair], t.pair_j[t.row_pair]
    # A cluster of one pair (a duplicate pair: nearly all) counts once for each of its two
    # players; only clusters over several pairs need the distinct (cluster, player) pairs.
    multi = np.bincount(t.row_cluster, minlength=t.clusters)[t.row_cluster] > 1
    one = ~multi
    counts = np.bincount(i[one], minlength=t.k) + np.bincount(j[one], minlength=t.k)
    if multi.any():
        cl = t.row_cluster[multi]
        distinct = np.unique(np.concatenate([cl * k + i[multi], cl * k + j[multi]]))
        counts += np.bincount(distinct % k, minlength=t.k)
    return counts


def error_method(t: Tally, min_clusters: int) -> tuple[str, str, NDArray[np.bool_]]:
    """Which covariance to use, why, and the anchor the ratings are centred on."""
    return method_for(clusters_per_player(t), t.clusters, min_clusters)


def method_for(
    per_player: NDArray[np.int64], clusters: int, min_clusters: int
) -> tuple[str, str, NDArray[np.bool_]]:
    """The covariance for a pool whose players are in ``per_player`` clusters each.

    The sandwich is used once two players are *established* (in at least
    ``min_clusters`` clusters), floored at the model's covariance for every player; the
    ratings are centred on the established players (all, while fewer than two are).
    One newcomer never switches the method nor moves the centre.
    """
    need = max(min_clusters, 2)
    anchor = anchor_of(per_player, min_clusters)
    established = int((per_player >= need).sum())
    if established >= 2 and clusters >= 2:
        centred = (
            "the pool" if bool(anchor.all())
            else f"the {established} players with at least {need} clusters"
        )  # fmt: skip
        return ERROR_CLUSTER, (
            f"the larger of the cluster-robust sandwich over {clusters} duplicate-pair clusters "
            f"(CR1 factor, t quantile with {clusters - 1} degrees of freedom) and the model "
            f"(Fisher) variance; centred on {centred}"
        ), anchor
    fewest = int(per_player.min()) if len(per_player) else 0
    return ERROR_MODEL, (
        f"model (Fisher) variance: fewer than two players are in {need} or more clusters "
        f"(the sparsest is in {fewest} cluster(s)), the least a cluster-robust estimate needs"
    ), anchor


@dataclass(frozen=True, eq=False)
class Exact:
    """The exact covariance at a fit, and the pieces an incremental update starts from.

    ``q = (H + 11ᵀ/k)⁻¹``; ``a = Q M Q`` (cluster-robust method only, unscaled);
    ``covariance`` in logits², what the intervals report (:mod:`arena.ratings.intervals`:
    the corrected sandwich floored at the model's ``q − 11ᵀ/k``, centred on the anchor);
    ``weights`` the pairs' Hessian weights at the fit.
    """

    q: Floats
    a: Floats | None
    covariance: Floats
    weights: Floats


def exact_covariance(
    t: Tally, pairs: PairTotals, theta: Floats, method: str, anchor: NDArray[np.bool_]
) -> Exact:
    """The covariance of ``theta`` (logits²) by ``method``, centred on ``anchor``, exactly."""
    _, v = gradient(theta, pairs)
    q = regularised_inverse(dense_laplacian(t.k, pairs.i, pairs.j, v))
    if method == ERROR_CLUSTER:
        a = sandwich(q, meat(cluster_scores(theta, t)))
        return Exact(q, a, interval_covariance(q, a, t.clusters, anchor), v)
    return Exact(q, None, interval_covariance(q, None, t.clusters, anchor), v)


def assemble(
    names: Sequence[str],
    theta: Floats,
    cov: Floats,
    method: str,
    note: str,
    mean: float,
    prior_draws: float,
    iterations: int,
    *,
    records: Mapping[str, PlayerRecord],
    crosstable: Mapping[str, Mapping[str, object]],
    games: int,
    clusters: int,
) -> Ratings:
    """Convert logits to Elo and put the pieces together (``names`` sorted, as ``theta``)."""
    elo = mean + ELO_PER_LOGIT * theta
    cov_elo = (ELO_PER_LOGIT * ELO_PER_LOGIT) * cov
    se = np.sqrt(np.maximum(np.diagonal(cov_elo), 0.0)).tolist()
    elo_list = elo.tolist()
    order = sorted(range(len(names)), key=lambda x: (-elo_list[x], names[x]))
    players = []
    for rank, x in enumerate(order, 1):
        e, s = elo_list[x], se[x]
        players.append(
            PlayerRating(names[x], rank, e, s, e - Z95 * s, e + Z95 * s, records[names[x]])
        )
    return Ratings(
        players=tuple(players),
        covariance=NamedMatrix(names, cov_elo),
        los=NamedMatrix(names, compute=lambda: los_matrix(elo, cov_elo), skip_diagonal=True),
        crosstable=crosstable,  # type: ignore[arg-type]
        error_method=method,
        error_note=note,
        games=games,
        clusters=clusters,
        mean=mean,
        prior_draws=prior_draws,
        iterations=iterations,
        z=Z95,
        elo_per_logit=ELO_PER_LOGIT,
    )
