"""Honest intervals: the pair-robust covariance, corrected for few pairs and floored at the model's.

The cluster-robust (pair-robust) sandwich estimates the variance of the ratings from the
spread of the duplicate pairs' scores. With few pairs it is biased low, and it can be
exactly zero: three equal bots whose every pair splits 1–1 have a score of zero in every
pair, so the sandwich says ±0 (issue 32). Two corrections, both standard:

- **Small samples** (Cameron and Miller, *A Practitioner's Guide to Cluster-Robust
  Inference*, 2015): the CR1 factor ``G/(G−1)`` on the sandwich and the quantile of
  Student's t with ``G − 1`` degrees of freedom instead of the normal one (``G`` the number
  of duplicate pairs). The intervals stay ``±1.96·se``: the sandwich is multiplied by
  ``(t/1.96)²`` instead, so that ``1.96·se`` is ``t·se_robust``.
- **Never narrower than the model** (Angrist and Pischke, *Mostly Harmless
  Econometrics*, 2009, §8.2: take the larger of the robust and the conventional standard
  error, as a guard against the robust one's small-sample bias): the covariance is
  ``C = F + (R − F)₊``, ``F`` the model's (Fisher) covariance, ``R`` the corrected sandwich
  and ``X₊`` the positive part of a symmetric matrix (its eigendecomposition with the
  negative eigenvalues set to zero). ``C − F`` and ``C − R`` are positive semi-definite,
  so *every* rating and *every* difference of two ratings has a variance at least the
  model's and at least the sandwich's: the floor holds for the likelihood of superiority
  too, not just for the intervals on the leaderboard.

**The anchor.** Ratings are only defined up to a common shift; they are reported around
the mean of an *anchor* set of entries, and each interval is the uncertainty of the
entry against that mean. The anchor is the entries with at least ``min_clusters``
duplicate pairs (the *established* ones), or every entry while fewer than two are
established. Centring on the whole pool instead lets a newcomer's large variance flow
into everyone's interval through the pool mean (issue 36: one newcomer's first pair took
five established versions from ±37–41 to ±93–97); centred on the established entries, a
newcomer's first games leave the others' intervals as they were. In a tournament where
every entry plays enough pairs the anchor is the whole pool, as before.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import stdtrit

from arena.ratings.model import Z95

Floats = NDArray[np.float64]
Bools = NDArray[np.bool_]


def t_quantile(clusters: int) -> float:
    """The two-sided 95% quantile of Student's t with ``clusters − 1`` degrees of freedom."""
    if clusters < 2:
        return float("inf")
    return float(stdtrit(clusters - 1, 0.975))


def robust_factor(clusters: int) -> float:
    """What multiplies the raw sandwich ``Q M Q``: ``G/(G−1) · (t_{G−1}/1.96)²``."""
    if clusters < 2:
        return 1.0
    return clusters / (clusters - 1) * (t_quantile(clusters) / Z95) ** 2


def anchor_of(clusters_per_entry: NDArray[np.int64], min_clusters: int) -> Bools:
    """The entries the ratings are centred on: the established ones, or all while fewer than two are."""
    established = clusters_per_entry >= max(min_clusters, 2)
    if int(established.sum()) >= 2:
        return established
    return np.ones(len(clusters_per_entry), dtype=bool)


def centre(theta: Floats, anchor: Bools) -> Floats:
    """``θ`` shifted so that the anchor's mean is zero."""
    out: Floats = theta - float(theta[anchor].mean())
    return out


def anchored(cov: Floats, anchor: Bools) -> Floats:
    """The covariance of ``θ − mean(θ[anchor])`` given that of ``θ`` (any centring: ``cov 1 = 0``
    or not, the result is the same for contrasts)."""
    k = cov.shape[0]
    w = anchor / anchor.sum()
    # P = I − 1 wᵀ; P C Pᵀ = C − 1 (wᵀC) − (C w) 1ᵀ + (wᵀ C w) 1 1ᵀ.
    cw = cov @ w
    out: Floats = cov - cw[None, :] - cw[:, None] + float(w @ cw)
    out = (out + out.T) / 2.0
    assert out.shape == (k, k)
    return out


def floored(model: Floats, robust: Floats) -> Floats:
    """``F + (R − F)₊``: at least ``F`` and at least ``R`` in every direction (both symmetric)."""
    values, vectors = np.linalg.eigh(robust - model)
    positive = values > 0.0
    if not positive.any():
        return model.copy()
    v = vectors[:, positive]
    out: Floats = model + (v * values[positive]) @ v.T
    out = (out + out.T) / 2.0
    return out


def interval_covariance(
    q: Floats, sandwich: Floats | None, clusters: int, anchor: Bools
) -> Floats:
    """The covariance the intervals report (logits², centred on ``anchor``).

    ``q = (H + 11ᵀ/k)⁻¹`` (the model's covariance is ``q − 11ᵀ/k``); ``sandwich`` the raw
    ``Q M Q`` (``None``: the model's alone).
    """
    k = q.shape[0]
    model = anchored(q - 1.0 / k, anchor)
    if sandwich is None:
        return model
    robust = anchored(robust_factor(clusters) * sandwich, anchor)
    return floored(model, robust)


__all__ = [
    "anchor_of",
    "anchored",
    "centre",
    "floored",
    "interval_covariance",
    "robust_factor",
    "t_quantile",
]
