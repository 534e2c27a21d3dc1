"""Covariance of the fitted ratings: from the model, or from the duplicate pairs.

Both are in logits² and respect the ``Σ θ = 0`` constraint: the Hessian ``H`` of the
(penalised) negative log-likelihood is a Laplacian with null vector ``1``, and the
covariance of the constrained estimate uses its Moore–Penrose pseudo-inverse
``H⁺ = (H + 11ᵀ/k)⁻¹ − 11ᵀ/k`` (exact for a connected graph).

- Model (Fisher): ``H⁺``. Assumes games are independent Bernoulli trials.
- Cluster-robust (sandwich): ``G/(G−1) · H⁺ (Σ_c g_c g_cᵀ) H⁺`` where ``g_c`` is the
  score (gradient of the data log-likelihood) of cluster ``c`` — the games of one
  duplicate pair — at the fit. A duplicate pair is one observation: luck of the
  deal shared by its games cancels (or adds) here instead of being assumed away.
  ``G/(G−1)`` is the usual small-sample factor; the scores are not re-centred, so
  the prior's pull (``Σ_c g_c ≠ 0``) widens the bars rather than shrinking them.
"""

from __future__ import annotations

from arena.ratings.bradley_terry import sigmoid
from arena.ratings.linalg import Matrix, Vector, inverse, matmul
from arena.ratings.tally import Pair, PairCount


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
