"""The linear algebra of the fit: weighted graph Laplacians, their solves and inverses.

The Hessian of the Bradley–Terry log-likelihood is a weighted Laplacian of the game
graph (who played whom): sparse when few pairs met, singular along the all-ones
vector. Newton steps solve with it by conjugate gradients on the sparse matrix
(each iteration one sparse product; a dense Cholesky solve when that does not
converge or the pool is small); the covariance needs its pseudo-inverse, which is
dense: ``H⁺ = (H + 11ᵀ/k)⁻¹ − 11ᵀ/k``, one Cholesky factorisation and inverse.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

#: Pools up to this size solve Newton steps densely (faster than iterating when small).
DENSE_SOLVE_MAX = 400
#: Relative residual of a conjugate-gradient Newton step.
CG_RTOL = 1e-13


def laplacian(k: int, i: Ints, j: Ints, w: Floats) -> scipy.sparse.csr_array:
    """``Σ w_p (e_i − e_j)(e_i − e_j)ᵀ`` over the pairs ``p = (i, j)``, as a sparse matrix."""
    diag = np.bincount(i, weights=w, minlength=k) + np.bincount(j, weights=w, minlength=k)
    rows = np.concatenate([i, j, np.arange(k)])
    cols = np.concatenate([j, i, np.arange(k)])
    data = np.concatenate([-w, -w, diag])
    return scipy.sparse.csr_array(scipy.sparse.coo_array((data, (rows, cols)), shape=(k, k)))


def dense(h: scipy.sparse.csr_array) -> Floats:
    """``h`` as a dense array."""
    return np.asarray(h.toarray(), dtype=np.float64)


def solve_laplacian(h: scipy.sparse.csr_array, g: Floats) -> Floats:
    """The solution ``δ`` of ``H δ = g`` with ``Σ δ = 0`` (``H`` a connected Laplacian, ``Σ g = 0``).

    Equal to ``(H + s·11ᵀ)⁻¹ g`` for any ``s > 0``: the step of a Newton iteration
    that keeps ``Σ θ = 0``. Conjugate gradients (Jacobi-preconditioned) on the sparse
    matrix for large pools; the dense Cholesky solve for small ones or if CG stalls.
    """
    k = h.shape[0]
    if k > DENSE_SOLVE_MAX:
        diag = h.diagonal()
        pre = scipy.sparse.linalg.LinearOperator((k, k), matvec=lambda x: x / diag, dtype=float)
        x, info = scipy.sparse.linalg.cg(
            h, g, rtol=CG_RTOL, atol=0.0, maxiter=max(300, 4 * int(np.sqrt(k))), M=pre
        )
        if info == 0:
            return x - x.mean()
    m = dense(h)
    shift = np.trace(m) / (k * k)
    x = scipy.linalg.solve(m + shift, g, assume_a="pos", check_finite=False)
    return x - x.mean()


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
    # dpotri fills the lower triangle only.
    lower = np.tril(inv)
    return lower + np.tril(inv, -1).T


def pseudo_inverse(h: Floats) -> Floats:
    """``H⁺``, the covariance of the ratings under ``Σ θ = 0`` (connected Laplacian ``H``)."""
    return regularised_inverse(h) - 1.0 / h.shape[0]
