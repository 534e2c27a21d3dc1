"""Bradley–Terry maximum likelihood by Newton's method on aggregated pair counts.

Model: ``P(i beats j) = σ(θ_i − θ_j)`` with σ the logistic function; a draw counts as
half a win for each side. The log-likelihood is concave; its Hessian is a weighted
graph Laplacian, singular along the all-ones vector (only differences are identified).
We fix the level with ``Σ θ = 0`` and solve each Newton step with ``H + s·11ᵀ``, which
is regular on a connected graph and gives a step with ``Σ δ = 0`` (the gradient sums
to zero). Step-halving keeps every step uphill, so the iteration always converges.
"""

from __future__ import annotations

import math

from arena.ratings.linalg import Matrix, Vector, solve

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
