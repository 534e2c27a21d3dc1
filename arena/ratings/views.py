"""Read-only ``name → name → value`` views over numpy arrays.

A fit of 3,000 entries has 9 million covariances and as many likelihoods of
superiority; as nested dicts of Python floats they would take about 1.3 GB and
seconds to build, and the crosstable's records would cost a second more. These
views give the same reading (``m[a][b]``, ``in``, iteration in name order,
``len``, ``get``, ``==`` with plain dicts) over one array each, and build a value
only when it is read. ``to_dict()`` gives plain dicts for JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arena.ratings.model import PairRecord

Floats = NDArray[np.float64]


class NamedMatrix(Mapping[str, Mapping[str, float]]):
    """``m[a][b]`` for a square matrix indexed by ``names`` (sorted).

    ``matrix`` may be given, or ``compute`` builds it on first use (the likelihood of
    superiority is only computed if someone reads it). With ``skip_diagonal`` the
    row of ``a`` has no entry for ``a`` itself.
    """

    def __init__(
        self,
        names: Sequence[str],
        matrix: Floats | None = None,
        *,
        compute: Callable[[], Floats] | None = None,
        skip_diagonal: bool = False,
    ) -> None:
        if (matrix is None) == (compute is None):
            raise ValueError("give either matrix or compute")
        self._names = tuple(names)
        self._index = {n: k for k, n in enumerate(self._names)}
        self._matrix = matrix
        self._compute = compute
        self._skip = skip_diagonal

    @property
    def names(self) -> tuple[str, ...]:
        """The row (and column) names, in order."""
        return self._names

    @property
    def matrix(self) -> Floats:
        """The values as a ``len(names)²`` array (read-only; the diagonal is meaningless
        when ``skip_diagonal``)."""
        if self._matrix is None:
            assert self._compute is not None
            m = self._compute()
            m.flags.writeable = False
            self._matrix, self._compute = m, None
        return self._matrix

    def __getitem__(self, name: str) -> NamedRow:
        return NamedRow(self, self._index[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NamedMatrix):
            return (
                self._names == other._names
                and self._skip == other._skip
                and bool(np.array_equal(self._masked(), other._masked()))
            )
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like the dicts it stands for

    def _masked(self) -> Floats:
        m = self.matrix
        if self._skip:
            m = m.copy()
            np.fill_diagonal(m, 0.0)
        return m

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Plain nested dicts (JSON-ready)."""
        out: dict[str, dict[str, float]] = {}
        rows = self.matrix.tolist()
        for k, (a, row) in enumerate(zip(self._names, rows, strict=True)):
            d = dict(zip(self._names, row, strict=True))
            if self._skip:
                del d[self._names[k]]
            out[a] = d
        return out

    def __repr__(self) -> str:
        return f"NamedMatrix({len(self._names)} × {len(self._names)})"


class NamedRow(Mapping[str, float]):
    """One row of a :class:`NamedMatrix`."""

    def __init__(self, parent: NamedMatrix, row: int) -> None:
        self._parent = parent
        self._row = row

    def __getitem__(self, name: str) -> float:
        p = self._parent
        col = p._index[name]
        if p._skip and col == self._row:
            raise KeyError(name)
        return float(p.matrix[self._row, col])

    def __iter__(self) -> Iterator[str]:
        p = self._parent
        own = p._names[self._row] if p._skip else None
        return (n for n in p._names if n != own)

    def __len__(self) -> int:
        return len(self._parent._names) - (1 if self._parent._skip else 0)

    def __contains__(self, name: object) -> bool:
        p = self._parent
        col = p._index.get(name) if isinstance(name, str) else None
        return col is not None and not (p._skip and col == self._row)

    def __repr__(self) -> str:
        return f"NamedRow({self._parent._names[self._row]!r}: {dict(self)!r})"


class Crosstable(Mapping[str, Mapping[str, PairRecord]]):
    """``table[a][b]``: a's :class:`PairRecord` against ``b``, for every pair that played.

    Built from the per-pair counts (``pair_i < pair_j``, from the lower index's side);
    a record is made when it is read. Every player has a row, empty if it met no one.
    """

    def __init__(
        self,
        players: Sequence[str],
        pair_i: NDArray[np.int64],
        pair_j: NDArray[np.int64],
        games: Floats,
        wins: Floats,
        draws: Floats,
        points: Floats,
    ) -> None:
        self._players = tuple(players)
        self._index = {n: k for k, n in enumerate(self._players)}
        k = len(self._players)
        # Each pair twice, once from each side; grouped by the row player, opponents ascending.
        me = np.concatenate([pair_i, pair_j])
        them = np.concatenate([pair_j, pair_i])
        pair = np.concatenate([np.arange(len(pair_i)), np.arange(len(pair_i))])
        order = np.argsort(me * max(k, 1) + them, kind="stable")
        self._them = them[order]
        self._pair = pair[order]
        self._low = (me < them)[order]  # the row player is the pair's lower index
        self._start = np.searchsorted(me[order], np.arange(k + 1))
        self._counts = (games, wins, draws, points)

    def __getitem__(self, name: str) -> CrosstableRow:
        return CrosstableRow(self, self._index[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._players)

    def __len__(self) -> int:
        return len(self._players)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Crosstable):
            return self._players == other._players and all(
                np.array_equal(x, y) for x, y in zip(self._arrays(), other._arrays(), strict=True)
            )
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def _arrays(self) -> tuple[Any, ...]:
        return (self._them, self._low, self._start, *(c[self._pair] for c in self._counts))

    def record(self, row: int, slot: int) -> PairRecord:
        """The record of entry ``slot`` of the sorted (player, opponent) list."""
        games, wins, draws, points = (float(c[self._pair[slot]]) for c in self._counts)
        losses = games - wins - draws
        a, b = self._players[row], self._players[self._them[slot]]
        if self._low[slot]:
            return PairRecord(a, b, int(games), int(wins), int(losses), int(draws), points)
        return PairRecord(a, b, int(games), int(losses), int(wins), int(draws), games - points)

    def to_dict(self) -> dict[str, dict[str, dict[str, Any]]]:
        """JSON-ready nested dicts (``PairRecord.to_dict`` for each cell)."""
        return {a: {b: rec.to_dict() for b, rec in row.items()} for a, row in self.items()}

    def __repr__(self) -> str:
        return f"Crosstable({len(self._players)} players, {len(self._them) // 2} pairs)"


class CrosstableRow(Mapping[str, PairRecord]):
    """One player's row of a :class:`Crosstable` (only opponents it met)."""

    def __init__(self, parent: Crosstable, row: int) -> None:
        self._parent = parent
        self._row = row

    def _slot(self, name: object) -> int | None:
        p = self._parent
        col = p._index.get(name) if isinstance(name, str) else None
        if col is None:
            return None
        lo, hi = int(p._start[self._row]), int(p._start[self._row + 1])
        slot = lo + int(np.searchsorted(p._them[lo:hi], col))
        return slot if slot < hi and p._them[slot] == col else None

    def __getitem__(self, name: str) -> PairRecord:
        slot = self._slot(name)
        if slot is None:
            raise KeyError(name)
        return self._parent.record(self._row, slot)

    def __contains__(self, name: object) -> bool:
        return self._slot(name) is not None

    def __iter__(self) -> Iterator[str]:
        p = self._parent
        lo, hi = int(p._start[self._row]), int(p._start[self._row + 1])
        return (p._players[x] for x in p._them[lo:hi].tolist())

    def __len__(self) -> int:
        p = self._parent
        return int(p._start[self._row + 1] - p._start[self._row])

    def __repr__(self) -> str:
        return f"CrosstableRow({self._parent._players[self._row]!r}: {len(self)} opponents)"
