"""Cheap interval updates between full refits: low-rank corrections of a fit's covariance.

A full fit factors the ``k × k`` matrix ``H̃₀ = H₀ + 11ᵀ/k₀`` (``Q₀ = H̃₀⁻¹``) and forms the
sandwich ``A₀ = Q₀ M₀ Q₀``: cubic in the players. After a few new games only a few
terms change: the Hessian weights of the pairs that played (``ΔH = Σ_p d_p e_p e_pᵀ``,
``e_p = e_i − e_j``), the score vectors of the clusters that played (``ΔM = Σ_c ±g g ᵀ``),
and, with new players, the size of the pool. Writing the new matrix as the old one
(padded with an identity block for the new players) plus ``W C Wᵀ``, the
Sherman–Morrison–Woodbury identity gives

    Q₁ = B⁻¹ − Z K Zᵀ,   Z = B⁻¹W,   K = (I + C WᵀZ)⁻¹ C,

and the sandwich ``A₁ = Q₁ M₁ Q₁`` follows from ``A₀`` and products with ``Z`` (one
``k × m`` matrix for ``m`` changed terms): ``O(k² m)`` work instead of ``O(k³)``.

It is exact for the terms it updates. What it leaves alone — the weights and scores of
the pairs and clusters that did not play, evaluated at the last full fit's ratings
rather than at the new ones — is the approximation, small while the ratings move little
(:class:`arena.ratings.ladder.Ladder` bounds both the number of terms and the shift).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import NDArray

from arena.ratings.intervals import Z95, t_quantile

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class Baseline:
    """What a full fit leaves for the updates: ``Q₀`` (``k₀ × k₀``) and, for the
    cluster-robust method, the unscaled sandwich ``A₀ = Q₀ M₀ Q₀``."""

    q: Floats
    a: Floats | None

    @property
    def k(self) -> int:
        return int(self.q.shape[0])


@dataclass(frozen=True, eq=False)
class Changes:
    """The changed terms, in the new pool's ``k₁`` coordinates.

    ``pair_i``, ``pair_j``, ``pair_delta``: pairs whose Hessian weight changed, by how
    much. ``scores`` (``k₁ × s``, sparse) and ``signs`` (``±1``): cluster score vectors to
    add (the new scores) and remove (the old ones) from the meat.
    """

    k: int
    pair_i: Ints
    pair_j: Ints
    pair_delta: Floats
    scores: scipy.sparse.csc_array
    signs: Floats


@dataclass(frozen=True, eq=False)
class Updated:
    """The updated covariance, in factored form: diagonal now, any entry on demand (logits²).

    ``cov[a, b] = base[a, b] + Σ_t left_t[a] · right_t[b]`` (the sum over the low-rank terms).
    """

    diagonal: Floats
    _base: Floats  # A₀ or Q₀, padded
    _base_k: int
    _offset: float  # −1/k₁ for the model covariance (Q₁ − 11ᵀ/k₁), else 0
    _scale: float
    _left: Floats  # k₁ × r
    _right: Floats  # k₁ × r

    def entry(self, a: int, b: int) -> float:
        """``cov[a, b]``."""
        if a < self._base_k and b < self._base_k:
            base = float(self._base[a, b])
        elif a == b and self._offset != 0.0:
            base = 1.0  # the model: B⁻¹'s identity block for an entry new since the full fit
        else:
            base = 0.0  # the sandwich: A₀ padded with zeros
        value = base + float(self._left[a] @ self._right[b]) + self._offset
        return self._scale * value

    def times(self, w: Floats) -> Floats:
        """``cov @ w`` (``O(k·r)``: the base product plus the low-rank terms)."""
        k0 = self._base_k
        out = np.zeros(len(w))
        out[:k0] = self._base @ w[:k0]
        if self._offset != 0.0:
            out[k0:] = w[k0:]  # the model's identity block for entries new since the full fit
            out += self._offset * float(w.sum())
        out += self._left @ (self._right.T @ w)
        result: Floats = self._scale * out
        return result


@dataclass(frozen=True, eq=False)
class Floored:
    """An updated covariance as the intervals report it (:mod:`arena.ratings.intervals`).

    Centred on the anchor's mean: the sandwich ``robust`` (``None``: the model's alone)
    scaled by the t quantile, plus ``excess``, what the last full fit's floor added to
    its sandwich (``(F − R)₊``, positive semi-definite, ``k₀ × k₀``), and each rating's
    variance floored at the model's. With nothing new since the full fit this is the
    full fit's covariance exactly; after new games the floor is applied again to each
    rating's variance (the full fit applies it to every direction, differences too).
    """

    robust: Updated | None
    model: Updated
    anchor: NDArray[np.bool_]
    clusters: int
    excess: Floats | None = None
    model_excess: Floats | None = None

    @property
    def _t2(self) -> float:
        return (t_quantile(self.clusters) / Z95) ** 2 if self.robust is not None else 1.0

    def _weights(self) -> Floats:
        w: Floats = self.anchor / self.anchor.sum()
        return w

    @staticmethod
    def _times(e: Floats | None, w: Floats) -> Floats:
        out = np.zeros(len(w))
        if e is not None:
            k0 = e.shape[0]
            out[:k0] = e @ w[:k0]
        return out

    @staticmethod
    def _diag(e: Floats | None, k: int) -> Floats:
        out = np.zeros(k)
        if e is not None:
            out[: e.shape[0]] = np.diagonal(e)
        return out

    @cached_property
    def _centring(self) -> tuple[Floats, float, Floats, float]:
        """``C w`` and ``wᵀ C w`` for the model and for the robust part (with their excesses)."""
        w = self._weights()
        mw = self.model.times(w)
        if self.robust is None:
            return mw, float(w @ mw), mw, float(w @ mw)
        mw = mw + self._times(self.model_excess, w)
        rw = self._t2 * self.robust.times(w) + self._times(self.excess, w)
        return mw, float(w @ mw), rw, float(w @ rw)

    @cached_property
    def diagonal(self) -> Floats:
        """Each rating's variance (logits²)."""
        mw, mm, rw, rr = self._centring
        k = len(mw)
        model = self.model.diagonal - 2.0 * mw + mm
        if self.robust is None:
            return model
        model = model + self._diag(self.model_excess, k)
        robust = self._t2 * self.robust.diagonal + self._diag(self.excess, k) - 2.0 * rw + rr
        out: Floats = np.maximum(model, robust)
        return out

    def entry(self, a: int, b: int) -> float:
        """``cov[a, b]``: the variance on the diagonal, the robust part (or the model) off it."""
        if a == b:
            return float(self.diagonal[a])
        mw, mm, rw, rr = self._centring
        if self.robust is None:
            return self.model.entry(a, b) - float(mw[a]) - float(mw[b]) + mm
        value = self._t2 * self.robust.entry(a, b)
        if self.excess is not None and a < self.excess.shape[0] and b < self.excess.shape[0]:
            value += float(self.excess[a, b])
        return value - float(rw[a]) - float(rw[b]) + rr


def _pad(x: Floats, rows: int) -> Floats:
    if x.shape[0] == rows:
        return x
    out = np.zeros((rows, *x.shape[1:]))
    out[: x.shape[0]] = x
    return out


def _apply_base(base: Floats, k1: int, x: scipy.sparse.csr_array) -> Floats:
    """``blockdiag(base, I) @ x`` for a sparse ``k₁ × m`` ``x`` (dense result).

    ``x``'s columns have a few entries each (a pair, a cluster): ``base @ x`` picks and
    combines columns of ``base``, ``O(k · nnz)`` rather than a dense ``O(k² m)`` product.
    """
    k0 = base.shape[0]
    out = np.empty((k1, x.shape[1]))
    out[:k0] = np.asarray((x[:k0].T @ base).T)  # base is symmetric
    out[k0:] = x[k0:].toarray()
    return out


def _apply_padded(base: Floats, k1: int, x: scipy.sparse.csr_array) -> Floats:
    """``blockdiag(base, 0) @ x``."""
    k0 = base.shape[0]
    out = np.zeros((k1, x.shape[1]))
    out[:k0] = np.asarray((x[:k0].T @ base).T)
    return out


def update(baseline: Baseline, changes: Changes, *, robust: bool, clusters: int) -> Updated:
    """The covariance after ``changes``: the sandwich (``robust``) or the model's ``H⁺``."""
    k0, k1 = baseline.k, changes.k
    new = k1 - k0
    # W's columns: the changed pairs, one per new player (its identity entry removed),
    # and two for the change of 11ᵀ/k. C: their weights.
    m_pairs = len(changes.pair_i)
    cols = m_pairs + new + (2 if new else 0)
    span = np.arange(m_pairs)
    rows = [changes.pair_i, changes.pair_j]
    cols_of = [span, span]
    vals = [np.ones(m_pairs), -np.ones(m_pairs)]
    c = np.zeros((cols, cols))
    c[span, span] = changes.pair_delta
    if new:
        extra = np.arange(m_pairs, m_pairs + new)
        u1, u2 = m_pairs + new, m_pairs + new + 1
        rows += [np.arange(k0, k1), np.arange(k0), np.arange(k0, k1)]
        cols_of += [extra, np.full(k0, u1), np.full(new, u2)]
        vals += [np.ones(new), np.ones(k0), np.ones(new)]
        c[extra, extra] = -1.0
        c[u1, u1] = 1.0 / k1 - 1.0 / k0
        c[u1, u2] = c[u2, u1] = c[u2, u2] = 1.0 / k1
    w = scipy.sparse.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols_of))), shape=(k1, cols)
    )
    z = _apply_base(baseline.q, k1, w)
    s = np.asarray(w.T @ z)
    kmat = scipy.linalg.solve(np.eye(cols) + c @ s, c) if cols else np.zeros((0, 0))
    kmat = (kmat + kmat.T) / 2.0
    zk = z @ kmat
    q_diag = np.concatenate([np.diagonal(baseline.q), np.ones(new)])
    if not robust:
        diag = q_diag - np.einsum("ij,ij->i", zk, z) - 1.0 / k1
        return Updated(diag, baseline.q, k0, -1.0 / k1, 1.0, -zk, z)
    assert baseline.a is not None
    a_diag = np.concatenate([np.diagonal(baseline.a), np.zeros(new)])
    y = _apply_padded(baseline.a, k1, w)  # A₀' W
    n = np.asarray(w.T @ y)
    v = scipy.sparse.csr_array(changes.scores)
    t = _apply_base(baseline.q, k1, v) - zk @ np.asarray(v.T @ z).T
    te = t * changes.signs
    zknk = zk @ n @ kmat
    # A₁ = A₀' − Z K Yᵀ − Y K Zᵀ + Z K N K Zᵀ + T E Tᵀ
    diag = (
        a_diag
        - 2.0 * np.einsum("ij,ij->i", zk, y)
        + np.einsum("ij,ij->i", zknk, z)
        + np.einsum("ij,ij->i", te, t)
    )
    left = np.hstack([-zk, -y @ kmat, zknk, te])
    right = np.hstack([y, z, z, t])
    factor = clusters / (clusters - 1) if clusters > 1 else 1.0
    return Updated(factor * diag, baseline.a, k0, 0.0, factor, left, right)
