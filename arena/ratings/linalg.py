"""The linear algebra of the fit: weighted graph Laplacians, their solves and inverses.

The Hessian of the Bradley–Terry log-likelihood is a weighted Laplacian of the game
graph (who played whom): sparse when few pairs met, singular along the all-ones
vector. Newton steps solve with it by conjugate gradients on the sparse matrix
(each iteration one sparse product; a dense Cholesky solve when that does not
converge or the pool is small); the covariance needs its pseudo-inverse, which is
dense: ``H⁺ = (H + 11ᵀ/k)⁻¹ − 11ᵀ/k``, one Cholesky factorisation and inverse.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

#: Pools up to this size solve Newton steps densely (faster than iterating when small).
DENSE_SOLVE_MAX = 400
#: Relative residual of a conjugate-gradient Newton step.
CG_RTOL = 1e-12
#: Environment variable: how many threads the dense factorisations and products may use.
THREADS_ENV = "ARENA_RATINGS_THREADS"


def blas_threads() -> int:
    """BLAS threads for the fit: ``$ARENA_RATINGS_THREADS``, by default 1.

    One, because the arena's machines are busy playing games: measured on this
    project's 2-core machine under load, the 1,000-player inverse took 6.1 s with
    OpenBLAS's two threads (they wait for each other) and 0.24 s with one. On an idle
    machine with many cores, more threads speed up the largest pools (docs/ratings.md).
    """
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return 1
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"{THREADS_ENV} must be a whole number >= 1, got {text!r}") from None
    if n < 1:
        raise ValueError(f"{THREADS_ENV} must be a whole number >= 1, got {text!r}")
    return n


@contextmanager
def dense_threads() -> Iterator[None]:
    """Limit BLAS to :func:`blas_threads` threads inside the block (restored after)."""
    with threadpool_limits(limits=blas_threads(), user_api="blas"):
        yield


class LaplacianPattern:
    """The sparsity of the Laplacian of the pairs ``(i, j)`` (distinct, ``i ≠ j``), built once.

    Newton's method needs a Laplacian with new weights at every step; the structure
    (a CSR matrix) is the same, so only the values are filled in.
    """

    def __init__(self, k: int, i: Ints, j: Ints) -> None:
        self.k, self.i, self.j = k, i, j
        rows = np.concatenate([i, j, np.arange(k)])
        cols = np.concatenate([j, i, np.arange(k)])
        order = np.argsort(rows * k + cols)  # one int64 key: faster than lexsort on two
        self._order = order
        self._indices = cols[order].astype(np.int32 if k < 2**31 else np.int64)
        self._indptr = np.searchsorted(rows[order], np.arange(k + 1)).astype(self._indices.dtype)

    def matrix(self, w: Floats) -> scipy.sparse.csr_array:
        """``Σ w_p (e_i − e_j)(e_i − e_j)ᵀ``."""
        k = self.k
        diag = np.bincount(self.i, weights=w, minlength=k) + np.bincount(
            self.j, weights=w, minlength=k
        )
        data = np.concatenate([-w, -w, diag])[self._order]
        return scipy.sparse.csr_array((data, self._indices, self._indptr), shape=(k, k))


def dense_laplacian(k: int, i: Ints, j: Ints, w: Floats) -> Floats:
    """``Σ w_p (e_i − e_j)(e_i − e_j)ᵀ`` over the distinct pairs ``p = (i, j)``, dense."""
    h = np.zeros((k, k))
    h[i, j] = -w
    h[j, i] = -w
    h[np.arange(k), np.arange(k)] = np.bincount(i, weights=w, minlength=k) + np.bincount(
        j, weights=w, minlength=k
    )
    return h


def dense(h: scipy.sparse.csr_array) -> Floats:
    """``h`` as a dense array."""
    return np.asarray(h.toarray(), dtype=np.float64)


def solve_laplacian(h: scipy.sparse.csr_array, g: Floats) -> Floats:
    """The solution ``δ`` of ``H δ = g`` with ``Σ δ = 0`` (``H`` a connected Laplacian, ``Σ g = 0``).

    Equal to ``(H + s·11ᵀ)⁻¹ g`` for any ``s > 0``: the step of a Newton iteration
    that keeps ``Σ θ = 0``. Conjugate gradients (Jacobi-preconditioned) on the sparse
    ``H + s·11ᵀ`` (positive definite, so CG cannot stall on the null vector) for large
    pools; the dense Cholesky solve for small ones or if CG does not converge.
    """
    k = h.shape[0]
    g = g - g.mean()  # exactly sum-zero: rounding leaves a trace along 1
    shift = float(h.diagonal().sum()) / (k * k)
    if k > DENSE_SOLVE_MAX:
        pre = 1.0 / (h.diagonal() + shift)
        op = scipy.sparse.linalg.LinearOperator(
            (k, k), matvec=lambda x: h @ x + shift * x.sum(), dtype=np.float64
        )
        jacobi = scipy.sparse.linalg.LinearOperator(
            (k, k), matvec=lambda x: pre * x, dtype=np.float64
        )
        x, info = scipy.sparse.linalg.cg(
            op, g, rtol=CG_RTOL, atol=0.0, maxiter=max(300, 4 * int(np.sqrt(k))), M=jacobi
        )
        if info == 0:
            return np.asarray(x - x.mean(), dtype=np.float64)
    x = scipy.linalg.solve(dense(h) + shift, g, assume_a="pos", check_finite=False)
    return np.asarray(x - x.mean(), dtype=np.float64)


def regularised_inverse(h: Floats) -> Floats:
    """``Q = (H + 11ᵀ/k)⁻¹`` for a connected Laplacian ``H`` (dense; ``H⁺ = Q − 11ᵀ/k``).

    ``Q 1 = 1``, and for any ``M`` with ``M 1 = 0`` (a sandwich's meat),
    ``H⁺ M H⁺ = Q M Q``. Raises ``ValueError`` if ``H + 11ᵀ/k`` is not positive definite
    (a disconnected graph).
    """
    k = h.shape[0]
    a = h + 1.0 / k
    c, info = scipy.linalg.lapack.dpotrf(a, lower=True, clean=True, overwrite_a=True)
    if info != 0:
        raise ValueError("singular matrix: the game graph is not connected")
    inv, info = scipy.linalg.lapack.dpotri(c, lower=True, overwrite_c=True)
    if info != 0:
        raise ValueError("singular matrix: the game graph is not connected")
    # dpotri fills the lower triangle only (the upper one is zero: clean=True above);
    # mirror it in place, one temporary (memory: 72 MB per k × k matrix at 3,000 players).
    inv += np.tril(inv, -1).T
    return inv

