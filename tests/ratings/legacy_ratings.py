"""The pure-Python ratings fit as it was before numpy (issue 28): the test oracle.

This is the former ``arena.ratings`` fit (Gaussian elimination and dense inverses on
lists, cubic in the players), kept verbatim here, outside the package, so that the
numpy/scipy implementation can be checked against it (``tests/ratings/test_ratings_oracle.py``)
and timed beside it (``bench/ratings.py``). Only the value types come from the package.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from arena.ratings.model import (
    ERROR_CLUSTER,
    ERROR_MODEL,
    PairRecord,
    PlayerRating,
    PlayerRecord,
    Ratings,
    Result,
)

# ---- formerly arena/ratings/linalg.py ----------------------------------------
Matrix = list[list[float]]
Vector = list[float]


def solve(a: Matrix, b: Vector) -> Vector:
    """Solve ``a x = b`` by Gaussian elimination with partial pivoting.

    Raises ``ValueError`` if ``a`` is (numerically) singular. The inputs are not modified.
    """
    n = len(a)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    _eliminate(m, n)
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        row = m[i]
        s = row[n]
        for j in range(i + 1, n):
            s -= row[j] * x[j]
        x[i] = s / row[i]
    return x


def inverse(a: Matrix) -> Matrix:
    """The inverse of ``a`` by Gauss–Jordan elimination with partial pivoting."""
    n = len(a)
    m = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(a)]
    _eliminate(m, n)
    for i in range(n - 1, -1, -1):
        row = m[i]
        piv = row[i]
        for j in range(i, 2 * n):
            row[j] /= piv
        for r in range(i):
            f = m[r][i]
            if f:
                target = m[r]
                for j in range(i, 2 * n):
                    target[j] -= f * row[j]
    return [row[n:] for row in m]


def matmul(a: Matrix, b: Matrix) -> Matrix:
    """The product ``a b``."""
    bt = list(zip(*b, strict=True))
    return [[sum(x * y for x, y in zip(row, col, strict=True)) for col in bt] for row in a]


def _eliminate(m: Matrix, n: int) -> None:
    """Forward elimination in place on the first ``n`` columns of the augmented ``m``."""
    scale = max((abs(v) for row in m for v in row[:n]), default=0.0) or 1.0
    width = len(m[0]) if m else 0
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) <= 1e-14 * scale:
            raise ValueError("singular matrix")
        if pivot != col:
            m[col], m[pivot] = m[pivot], m[col]
        prow = m[col]
        p = prow[col]
        for r in range(col + 1, n):
            row = m[r]
            f = row[col] / p
            if f:
                for j in range(col, width):
                    row[j] -= f * prow[j]


# ---- formerly arena/ratings/bradley_terry.py ----------------------------------------
PairTotals = list[tuple[int, int, float, float]]  # (i, j, games, points_i), i < j


def sigmoid(x: float) -> float:
    """The logistic function, without overflow."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def log_sigmoid(x: float) -> float:
    """``log σ(x)``, without overflow or loss of precision in the tails."""
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def log_likelihood(theta: Vector, pairs: PairTotals) -> float:
    """``Σ_pairs w·log σ(θ_i−θ_j) + (n−w)·log σ(θ_j−θ_i)``."""
    total = 0.0
    for i, j, n, w in pairs:
        d = theta[i] - theta[j]
        if w:
            total += w * log_sigmoid(d)
        if n - w:
            total += (n - w) * log_sigmoid(-d)
    return total


def gradient_hessian(theta: Vector, pairs: PairTotals) -> tuple[Vector, Matrix]:
    """The gradient of the log-likelihood and the Hessian of its negative."""
    k = len(theta)
    g = [0.0] * k
    h = [[0.0] * k for _ in range(k)]
    for i, j, n, w in pairs:
        p = sigmoid(theta[i] - theta[j])
        r = w - n * p
        g[i] += r
        g[j] -= r
        v = n * p * (1.0 - p)
        h[i][i] += v
        h[j][j] += v
        h[i][j] -= v
        h[j][i] -= v
    return g, h


def maximise(
    k: int, pairs: PairTotals, *, tol: float = 1e-10, max_iter: int = 200
) -> tuple[Vector, int]:
    """The maximum-likelihood ``θ`` (summing to 0) and the number of Newton iterations.

    ``pairs`` must link all ``k`` players and admit a finite maximum (a prior, or a
    strongly connected win graph). Converged when the largest step is below ``tol``.
    """
    theta = [0.0] * k
    if k < 2:
        return theta, 0
    ll = log_likelihood(theta, pairs)
    for iteration in range(1, max_iter + 1):
        g, h = gradient_hessian(theta, pairs)
        shift = sum(h[i][i] for i in range(k)) / (k * k)
        delta = solve([[v + shift for v in row] for row in h], g)
        t = 1.0
        while True:
            cand = [x + t * d for x, d in zip(theta, delta, strict=True)]
            cand_ll = log_likelihood(cand, pairs)
            if cand_ll >= ll - 1e-12 * (1.0 + abs(ll)) or t < 1e-8:
                break
            t /= 2.0
        centre = math.fsum(cand) / k
        theta = [x - centre for x in cand]
        ll = cand_ll
        if t * max(abs(d) for d in delta) < tol:
            return theta, iteration
    raise RuntimeError(f"Bradley–Terry fit did not converge in {max_iter} Newton steps")


# ---- formerly arena/ratings/tally.py ----------------------------------------
Pair = tuple[int, int]  # (i, j) with i < j, indices into Tally.players


@dataclass
class PairCount:
    """Games between ``i < j`` and the points ``i`` scored, with the W/L/D split."""

    games: int = 0
    points: float = 0.0  # for the lower index
    wins: int = 0  # by the lower index
    draws: int = 0


@dataclass
class Tally:
    """All results, counted per pair of players and per cluster."""

    players: list[str]  # sorted by name
    index: dict[str, int]
    pairs: dict[Pair, PairCount] = field(default_factory=dict)
    clusters: dict[str, dict[Pair, PairCount]] = field(default_factory=dict)
    games: int = 0

    def sorted_pairs(self) -> list[tuple[int, int, int, float]]:
        """``(i, j, games, points_i)`` for every pair that played, in a fixed order."""
        return [(i, j, c.games, c.points) for (i, j), c in sorted(self.pairs.items())]


def tally(results: Iterable[Result]) -> Tally:
    """Count ``results`` per pair and per cluster."""
    results = list(results)
    players = sorted({r.a for r in results} | {r.b for r in results})
    t = Tally(players=players, index={p: k for k, p in enumerate(players)})
    for r in results:
        i, j, s = t.index[r.a], t.index[r.b], r.score
        if i > j:
            i, j, s = j, i, 1.0 - s
        for counts in (t.pairs, t.clusters.setdefault(r.cluster, {})):
            c = counts.setdefault((i, j), PairCount())
            c.games += 1
            c.points += s
            c.wins += s == 1.0
            c.draws += s == 0.5
        t.games += 1
    return t


def crosstable_of(t: Tally) -> dict[str, dict[str, PairRecord]]:
    """``table[a][b]``: how ``a`` did against ``b``, for every pair that played."""
    table: dict[str, dict[str, PairRecord]] = {p: {} for p in t.players}
    for (i, j), c in sorted(t.pairs.items()):
        a, b = t.players[i], t.players[j]
        losses = c.games - c.wins - c.draws
        table[a][b] = PairRecord(a, b, c.games, c.wins, losses, c.draws, c.points)
        table[b][a] = PairRecord(b, a, c.games, losses, c.wins, c.draws, c.games - c.points)
    return table


def records_of(t: Tally) -> dict[str, PlayerRecord]:
    """Each player's totals over all its games."""
    sums = {p: [0, 0, 0, 0, 0.0] for p in t.players}  # games, wins, losses, draws, points
    for row in crosstable_of(t).values():
        for rec in row.values():
            s = sums[rec.a]
            s[0] += rec.games
            s[1] += rec.wins
            s[2] += rec.losses
            s[3] += rec.draws
            s[4] += rec.points
    return {
        p: PlayerRecord(p, int(g), int(w), int(lo), int(d), float(pts))
        for p, (g, w, lo, d, pts) in sums.items()
    }


def crosstable(results: Iterable[Result]) -> dict[str, dict[str, PairRecord]]:
    """Per pair of players: games, wins, losses, draws and points (``table[a][b]``, a's side)."""
    return crosstable_of(tally(results))


def player_records(results: Iterable[Result]) -> dict[str, PlayerRecord]:
    """Per player: games, wins, losses, draws, points and score %."""
    return records_of(tally(results))


# ---- formerly arena/ratings/covariance.py ----------------------------------------
def constrained_inverse(h: Matrix) -> Matrix:
    """``H⁺`` for a connected graph Laplacian ``H`` (covariance under ``Σ θ = 0``)."""
    k = len(h)
    c = 1.0 / k
    inv = inverse([[v + c for v in row] for row in h])
    return [[v - c for v in row] for row in inv]


def cluster_scores(
    theta: Vector, clusters: dict[str, dict[Pair, PairCount]]
) -> list[dict[int, float]]:
    """Each cluster's score vector (sparse: player index → value), clusters sorted by id."""
    scores: list[dict[int, float]] = []
    for cid in sorted(clusters):
        g: dict[int, float] = {}
        for (i, j), c in sorted(clusters[cid].items()):
            r = c.points - c.games * sigmoid(theta[i] - theta[j])
            g[i] = g.get(i, 0.0) + r
            g[j] = g.get(j, 0.0) - r
        scores.append(g)
    return scores


def sandwich(h_plus: Matrix, scores: list[dict[int, float]]) -> Matrix:
    """``G/(G−1) · H⁺ (Σ_c g_c g_cᵀ) H⁺``."""
    k = len(h_plus)
    meat = [[0.0] * k for _ in range(k)]
    for g in scores:
        items = sorted(g.items())
        for i, gi in items:
            row = meat[i]
            for j, gj in items:
                row[j] += gi * gj
    n = len(scores)
    factor = n / (n - 1) if n > 1 else 1.0
    v = matmul(matmul(h_plus, meat), h_plus)
    return [[factor * x for x in row] for row in v]


# ---- formerly arena/ratings/graph.py ----------------------------------------
def components_of(t: Tally) -> list[list[str]]:
    """Groups of players linked by games, each sorted, largest first (then by name)."""
    parent = list(range(len(t.players)))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in t.pairs:
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[str]] = {}
    for k, name in enumerate(t.players):
        groups.setdefault(root(k), []).append(name)
    return sorted(groups.values(), key=lambda g: (-len(g), g))


def components(results: Iterable[Result]) -> list[list[str]]:
    """The connected groups of players in ``results`` (fit each group on its own)."""
    return components_of(tally(results))


def strongly_connected(t: Tally) -> bool:
    """Whether every player both scored against and conceded to a path to every other.

    Without a prior, the maximum-likelihood ratings are finite exactly when this holds
    (Zermelo; Ford 1957): an edge ``i → j`` means ``i`` scored some points against ``j``.
    """
    n = len(t.players)
    out: list[list[int]] = [[] for _ in range(n)]
    back: list[list[int]] = [[] for _ in range(n)]
    for (i, j), c in t.pairs.items():
        if c.points > 0:  # i scored against j
            out[i].append(j)
            back[j].append(i)
        if c.points < c.games:  # j scored against i
            out[j].append(i)
            back[i].append(j)
    return n == 0 or (_reach(out) == n and _reach(back) == n)


def _reach(adjacent: list[list[int]]) -> int:
    """How many nodes are reachable from node 0."""
    seen = {0}
    stack = [0]
    while stack:
        for nxt in adjacent[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return len(seen)


# ---- formerly arena/ratings/superiority.py ----------------------------------------
def normal_cdf(x: float) -> float:
    """Φ, the standard normal distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def likelihood_of_superiority(
    elo: Mapping[str, float], covariance: Mapping[str, Mapping[str, float]]
) -> dict[str, dict[str, float]]:
    """``LOS[a][b] = Φ((r_a − r_b) / sqrt(var_a + var_b − 2 cov_ab))`` for every ``a ≠ b``.

    Uses the covariance of the two ratings, not just their variances: ratings fitted
    from the same games are correlated. With a zero variance of the difference the
    answer is 1, 0 or 0.5 by the sign of the difference.
    """
    names = sorted(elo)
    los: dict[str, dict[str, float]] = {}
    for a in names:
        row: dict[str, float] = {}
        for b in names:
            if a == b:
                continue
            diff = elo[a] - elo[b]
            var = covariance[a][a] + covariance[b][b] - 2.0 * covariance[a][b]
            if var > 1e-18:
                row[b] = normal_cdf(diff / math.sqrt(var))
            else:
                row[b] = 1.0 if diff > 0 else 0.0 if diff < 0 else 0.5
        los[a] = row
    return los


# ---- formerly arena/ratings/fit.py ----------------------------------------
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
