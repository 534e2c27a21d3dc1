"""Small dense linear algebra on lists of floats (the systems here are players × players)."""

from __future__ import annotations

Matrix = list[list[float]]
Vector = list[float]


def solve(a: Matrix, b: Vector) -> Vector:
    """Solve ``a x = b`` by Gaussian elimination with partial pivoting.

    Raises ``ValueError`` if ``a`` is (numerically) singular. The inputs are not modified.
    """
    n = len(a)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    _eliminate(m, n)
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        row = m[i]
        s = row[n]
        for j in range(i + 1, n):
            s -= row[j] * x[j]
        x[i] = s / row[i]
    return x


def inverse(a: Matrix) -> Matrix:
    """The inverse of ``a`` by Gauss–Jordan elimination with partial pivoting."""
    n = len(a)
    m = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(a)]
    _eliminate(m, n)
    for i in range(n - 1, -1, -1):
        row = m[i]
        piv = row[i]
        for j in range(i, 2 * n):
            row[j] /= piv
        for r in range(i):
            f = m[r][i]
            if f:
                target = m[r]
                for j in range(i, 2 * n):
                    target[j] -= f * row[j]
    return [row[n:] for row in m]


def matmul(a: Matrix, b: Matrix) -> Matrix:
    """The product ``a b``."""
    bt = list(zip(*b, strict=True))
    return [[sum(x * y for x, y in zip(row, col, strict=True)) for col in bt] for row in a]


def _eliminate(m: Matrix, n: int) -> None:
    """Forward elimination in place on the first ``n`` columns of the augmented ``m``."""
    scale = max((abs(v) for row in m for v in row[:n]), default=0.0) or 1.0
    width = len(m[0]) if m else 0
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) <= 1e-14 * scale:
            raise ValueError("singular matrix")
        if pivot != col:
            m[col], m[pivot] = m[pivot], m[col]
        prow = m[col]
        p = prow[col]
        for r in range(col + 1, n):
            row = m[r]
            f = row[col] / p
            if f:
                for j in range(col, width):
                    row[j] -= f * prow[j]
