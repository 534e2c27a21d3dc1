"""Bradley–Terry maximum likelihood by Newton's method on aggregated pair counts.

Model: ``P(i beats j) = σ(θ_i − θ_j)`` with σ the logistic function; a draw counts as
half a win for each side. The log-likelihood is concave; its Hessian is a weighted
graph Laplacian, singular along the all-ones vector (only differences are identified).
We fix the level with ``Σ θ = 0``; each Newton step solves with the Laplacian on the
sum-zero vectors (:func:`arena.ratings.linalg.solve_laplacian`), and step-halving
keeps every step uphill, so the iteration always converges. Everything is vectorised
over the pairs that met: the cost of one iteration is linear in the pairs, plus the
solve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from arena.ratings.linalg import LaplacianPattern, solve_laplacian

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


@dataclass(frozen=True)
class PairTotals:
    """Per pair ``i < j`` that met: games ``n`` and the points ``w`` of ``i`` (prior included)."""

    k: int
    i: Ints
    j: Ints
    n: Floats
    w: Floats


def sigmoid(x: Floats) -> Floats:
    """The logistic function, elementwise, without overflow."""
    return np.asarray(expit(x), dtype=np.float64)


def log_likelihood(theta: Floats, pairs: PairTotals) -> float:
    """``Σ_pairs w·log σ(θ_i−θ_j) + (n−w)·log σ(θ_j−θ_i)``."""
    d = theta[pairs.i] - theta[pairs.j]
    # log σ(d) = min(d, 0) − log(1 + e^(−|d|)), exact in both tails; log σ(−d) = log σ(d) − d,
    # so one logarithm per pair serves both terms.
    log_sigma = np.minimum(d, 0.0) - np.log1p(np.exp(-np.abs(d)))
    # Elementwise products and sums, not ``@``: a BLAS dot product on a busy machine
    # waits for its threads (measured 25 ms for 130,000 pairs, against 1 ms).
    return float(np.sum(pairs.n * log_sigma) - np.sum((pairs.n - pairs.w) * d))


def gradient(theta: Floats, pairs: PairTotals) -> tuple[Floats, Floats]:
    """The gradient of the log-likelihood, and the pairs' Hessian weights ``n σ (1−σ)``."""
    p = sigmoid(theta[pairs.i] - theta[pairs.j])
    r = pairs.w - pairs.n * p
    g = np.bincount(pairs.i, weights=r, minlength=pairs.k) - np.bincount(
        pairs.j, weights=r, minlength=pairs.k
    )
    return g, pairs.n * p * (1.0 - p)


def maximise(
    pairs: PairTotals, *, start: Floats | None = None, tol: float = 1e-10, max_iter: int = 200
) -> tuple[Floats, int]:
    """The maximum-likelihood ``θ`` (summing to 0) and the number of Newton iterations.

    ``pairs`` must link all ``k`` players and admit a finite maximum (a prior, or a
    strongly connected win graph). ``start`` is a warm start (a previous solution;
    it is re-centred). Converged when the largest step is below ``tol``.
    """
    k = pairs.k
    theta = np.zeros(k) if start is None else np.asarray(start, dtype=np.float64) - np.mean(start)
    if k < 2:
        return np.zeros(k), 0
    ll = log_likelihood(theta, pairs)
    pattern = LaplacianPattern(k, pairs.i, pairs.j)  # the same sparsity at every step
    for iteration in range(1, max_iter + 1):
        g, v = gradient(theta, pairs)
        delta = solve_laplacian(pattern.matrix(v), g)
        t = 1.0
        while True:
            cand = theta + t * delta
            cand_ll = log_likelihood(cand, pairs)
            if cand_ll >= ll - 1e-12 * (1.0 + abs(ll)) or t < 1e-8:
                break
            t /= 2.0
        theta = cand - np.mean(cand)
        ll = cand_ll
        if t * float(np.max(np.abs(delta))) < tol:
            return theta, iteration
    raise RuntimeError(f"Bradley–Terry fit did not converge in {max_iter} Newton steps")
