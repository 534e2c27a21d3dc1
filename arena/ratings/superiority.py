"""Likelihood of superiority: how sure we are that one entry is stronger than another."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray
from scipy.special import erf

Floats = NDArray[np.float64]

#: Below this variance of a difference (Elo²) the two ratings are taken as certain.
MIN_VARIANCE = 1e-18


def normal_cdf(x: float) -> float:
    """Φ, the standard normal distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def los_matrix(elo: Floats, covariance: Floats) -> Floats:
    """``LOS[a, b] = Φ((r_a − r_b) / sqrt(var_a + var_b − 2 cov_ab))`` for all ``a, b`` at once.

    ``elo`` and ``covariance`` (Elo²) are arrays in the same order; the diagonal of the
    result is meaningless. With a zero variance of the difference the answer is 1, 0
    or 0.5 by the sign of the difference.
    """
    var_diag = np.diagonal(covariance)
    var = var_diag[:, None] + var_diag[None, :] - 2.0 * covariance
    diff = elo[:, None] - elo[None, :]
    certain = ~(var > MIN_VARIANCE)
    z = diff / np.sqrt(np.where(certain, 1.0, var))
    # The same formula as normal_cdf (not ndtr): the same values as the scalar version.
    out = np.asarray(0.5 * (1.0 + erf(z / math.sqrt(2.0))), dtype=np.float64)
    if certain.any():
        out[certain] = np.where(diff[certain] > 0, 1.0, np.where(diff[certain] < 0, 0.0, 0.5))
    return out


def likelihood_of_superiority(
    elo: Mapping[str, float], covariance: Mapping[str, Mapping[str, float]]
) -> dict[str, dict[str, float]]:
    """``LOS[a][b] = Φ((r_a − r_b) / sqrt(var_a + var_b − 2 cov_ab))`` for every ``a ≠ b``.

    Uses the covariance of the two ratings, not just their variances: ratings fitted
    from the same games are correlated. With a zero variance of the difference the
    answer is 1, 0 or 0.5 by the sign of the difference.
    """
    names = sorted(elo)
    e = np.array([elo[a] for a in names], dtype=np.float64)
    c = np.array([[covariance[a][b] for b in names] for a in names], dtype=np.float64)
    m = los_matrix(e, c.reshape(len(names), len(names))).tolist()
    return {
        a: {b: v for b, v in zip(names, row, strict=True) if b != a}
        for a, row in zip(names, m, strict=True)
    }
