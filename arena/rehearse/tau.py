"""Kendall's τ-b: how well an order of teams (the standings) recovers the true strength order.

τ = 1 when the standings put every pair of teams in their true order, −1
when every pair is reversed, about 0 for a random order.  τ-b counts ties
(teams of equal true strength, or equal ratings) as neither agreeing nor
disagreeing and scales for them.  Only teams present in both are compared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def kendall_tau(truth: Mapping[str, float], measured: Mapping[str, float]) -> float | None:
    """τ-b between two scores of the same teams (higher = stronger); None with fewer than 2 shared, or all tied."""
    names = sorted(set(truth) & set(measured))
    concordant = discordant = ties_truth = ties_measured = 0
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            dt = _sign(truth[a] - truth[b])
            dm = _sign(measured[a] - measured[b])
            if dt == 0 and dm == 0:
                continue
            if dt == 0:
                ties_truth += 1
            elif dm == 0:
                ties_measured += 1
            elif dt == dm:
                concordant += 1
            else:
                discordant += 1
    untied_in_truth = concordant + discordant + ties_measured
    untied_in_measured = concordant + discordant + ties_truth
    n1, n2 = untied_in_truth, untied_in_measured
    if n1 == 0 or n2 == 0:
        return None
    return (concordant - discordant) / math.sqrt(n1 * n2)


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


__all__ = ["kendall_tau"]
