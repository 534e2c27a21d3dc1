"""Covariance of the fitted ratings: from the model, or from the duplicate pairs.

Both are in logits² and respect the ``Σ θ = 0`` constraint: the Hessian ``H`` of the
(penalised) negative log-likelihood is a Laplacian with null vector ``1``, and the
covariance of the constrained estimate uses its Moore–Penrose pseudo-inverse
``H⁺ = Q − 11ᵀ/k`` with ``Q = (H + 11ᵀ/k)⁻¹`` (exact for a connected graph).

- Model (Fisher): ``H⁺``. Assumes games are independent Bernoulli trials.
- Cluster-robust (sandwich): ``G/(G−1) · H⁺ (Σ_c g_c g_cᵀ) H⁺`` where ``g_c`` is the
  score (gradient of the data log-likelihood) of cluster ``c`` — the games of one
  duplicate pair — at the fit. A duplicate pair is one observation: luck of the
  deal shared by its games cancels (or adds) here instead of being assumed away.
  ``G/(G−1)`` is the usual small-sample factor; the scores are not re-centred, so
  the prior's pull (``Σ_c g_c ≠ 0``) widens the bars rather than shrinking them.
  Every ``g_c`` sums to zero, so the meat ``M`` has ``M 1 = 0`` and
  ``H⁺ M H⁺ = Q M Q``: no centring is needed.

The meat is sparse (a player's entries are only with the players it shared a
cluster with); ``Q`` is dense, and the sandwich costs two dense ``k × k`` products.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from numpy.typing import NDArray

from arena.ratings.bradley_terry import sigmoid
from arena.ratings.tally import Tally

Floats = NDArray[np.float64]


def cluster_scores(theta: Floats, t: Tally) -> scipy.sparse.csr_array:
    """Each cluster's score vector, as the rows of a sparse ``clusters × k`` matrix."""
    i, j = t.pair_i[t.row_pair], t.pair_j[t.row_pair]
    r = t.row_points - t.row_games * sigmoid(theta[i] - theta[j])
    rows = np.concatenate([t.row_cluster, t.row_cluster])
    cols = np.concatenate([i, j])
    coo = scipy.sparse.coo_array((np.concatenate([r, -r]), (rows, cols)), shape=(t.clusters, t.k))
    return scipy.sparse.csr_array(coo)


def meat(scores: scipy.sparse.csr_array) -> scipy.sparse.csr_array:
    """``Σ_c g_c g_cᵀ`` (sparse, ``k × k``)."""
    return scipy.sparse.csr_array(scores.T @ scores)


def sandwich(q: Floats, m: scipy.sparse.csr_array) -> Floats:
    """``Q M Q`` (symmetric; times ``G/(G−1)`` it is the covariance, :func:`arena.ratings.intervals.robust_factor`)."""
    # Dense products: BLAS does Q·(M·Q) several times faster than a sparse-by-dense
    # product, even with M a quarter full (1,000 players, 300,000 games).
    a = q @ (m.toarray() @ q)
    # Symmetric in exact arithmetic; make it so in floating point (LOS reads both halves).
    a += a.T
    a *= 0.5
    return a
