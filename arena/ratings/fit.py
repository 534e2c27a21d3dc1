"""``fit``: results in, Bradley–Terry ratings with error bars, LOS and crosstable out."""

from __future__ import annotations

import math
from collections.abc import Iterable

from arena.ratings.bradley_terry import PairTotals, gradient_hessian, maximise
from arena.ratings.covariance import cluster_scores, constrained_inverse, sandwich
from arena.ratings.graph import components_of, strongly_connected
from arena.ratings.model import ERROR_CLUSTER, ERROR_MODEL, PlayerRating, Ratings, Result
from arena.ratings.superiority import likelihood_of_superiority
from arena.ratings.tally import Tally, crosstable_of, records_of, tally

#: Elo points per logit: ``P(a beats b) = 1 / (1 + 10^(−(r_a − r_b)/400))``.
ELO_PER_LOGIT = 400.0 / math.log(10.0)
#: Two-sided 95% normal quantile.
Z95 = 1.96
#: Default: the cluster-robust error bars need every player in at least this many clusters.
MIN_CLUSTERS = 10


def fit(
    results: Iterable[Result],
    *,
    prior_draws: float = 1.0,
    mean: float = 1500.0,
    min_clusters: int = MIN_CLUSTERS,
    tol: float = 1e-10,
) -> Ratings:
    """Fit Bradley–Terry ratings to ``results`` by maximum likelihood.

    - Every game counts the same and their order does not matter (wins 1, draws half a
      win to each side). ``prior_draws`` virtual draws are added to every pairing that
      played, a weak prior that keeps a clean sweep finite; ``prior_draws=0`` is the
      plain maximum likelihood, which exists only if no group of players won every game
      against the rest (``ValueError`` otherwise).
    - Ratings are in Elo (``400/ln 10`` per logit) with pool mean ``mean``.
    - Error bars are 95% intervals (±1.96 se). They come from the duplicate pairs
      (``Result.cluster``) by a cluster-robust sandwich when every player appears in at
      least ``min_clusters`` clusters, otherwise from the model (Fisher information);
      ``Ratings.error_method`` says which.
    - The comparison graph must be connected: if some players never met the others
      (directly or through others) their relative level is unknown and ``ValueError``
      is raised naming the groups; :func:`arena.ratings.components` finds the groups,
      to fit each on its own.
    """
    if prior_draws < 0 or not math.isfinite(prior_draws):
        raise ValueError(f"prior_draws must be a finite number >= 0, got {prior_draws!r}")
    t = tally(results)
    _check_fittable(t, prior_draws)
    k = len(t.players)
    pairs: PairTotals = [
        (i, j, n + prior_draws, w + prior_draws / 2.0) for i, j, n, w in t.sorted_pairs()
    ]
    theta, iterations = maximise(k, pairs, tol=tol)

    _, h = gradient_hessian(theta, pairs)
    h_plus = constrained_inverse(h)
    method, note = _error_method(t, min_clusters)
    cov = sandwich(h_plus, cluster_scores(theta, t.clusters)) if method == ERROR_CLUSTER else h_plus
    return _assemble(t, theta, cov, method, note, mean, prior_draws, iterations)


def _check_fittable(t: Tally, prior_draws: float) -> None:
    """Raise ``ValueError`` unless the ratings are identified and finite."""
    if not t.players:
        raise ValueError("no results to fit")
    groups = components_of(t)
    if len(groups) > 1:
        shown = "; ".join(", ".join(map(repr, g)) for g in groups)
        raise ValueError(
            f"the players fall into {len(groups)} groups that never met ({shown}): "
            "their ratings are not comparable; fit each group separately"
        )
    if prior_draws == 0 and not strongly_connected(t):
        raise ValueError(
            "with prior_draws=0 the ratings are infinite: some group of players won every "
            "game against the rest; use prior_draws > 0"
        )


def _error_method(t: Tally, min_clusters: int) -> tuple[str, str]:
    """Which covariance to use, and why."""
    seen: dict[int, set[str]] = {k: set() for k in range(len(t.players))}
    for cid, pairs in t.clusters.items():
        for i, j in pairs:
            seen[i].add(cid)
            seen[j].add(cid)
    fewest = min(len(s) for s in seen.values())
    if fewest >= max(min_clusters, 2):
        return ERROR_CLUSTER, (
            f"cluster-robust sandwich over {len(t.clusters)} duplicate-pair clusters "
            f"(every player in at least {fewest})"
        )
    return ERROR_MODEL, (
        f"model (Fisher) variance: some player is in only {fewest} cluster(s), "
        f"fewer than the {max(min_clusters, 2)} a cluster-robust estimate needs"
    )


def _assemble(
    t: Tally,
    theta: list[float],
    cov: list[list[float]],
    method: str,
    note: str,
    mean: float,
    prior_draws: float,
    iterations: int,
) -> Ratings:
    """Convert logits to Elo and put the pieces together."""
    names = t.players
    s2 = ELO_PER_LOGIT * ELO_PER_LOGIT
    elo = {p: mean + ELO_PER_LOGIT * theta[k] for k, p in enumerate(names)}
    cov_elo = {a: {b: s2 * cov[i][j] for j, b in enumerate(names)} for i, a in enumerate(names)}
    records = records_of(t)
    order = sorted(names, key=lambda p: (-elo[p], p))
    players = []
    for rank, p in enumerate(order, 1):
        se = math.sqrt(max(cov_elo[p][p], 0.0))
        players.append(
            PlayerRating(p, rank, elo[p], se, elo[p] - Z95 * se, elo[p] + Z95 * se, records[p])
        )
    return Ratings(
        players=tuple(players),
        covariance=cov_elo,
        los=likelihood_of_superiority(elo, cov_elo),
        crosstable=crosstable_of(t),
        error_method=method,
        error_note=note,
        games=t.games,
        clusters=len(t.clusters),
        mean=mean,
        prior_draws=prior_draws,
        iterations=iterations,
        z=Z95,
        elo_per_logit=ELO_PER_LOGIT,
    )
