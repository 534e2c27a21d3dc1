"""Likelihood of superiority: how sure we are that one entry is stronger than another."""

from __future__ import annotations

import math
from collections.abc import Mapping


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
