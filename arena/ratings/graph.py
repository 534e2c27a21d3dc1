"""Connectivity of the comparison graph (who played whom).

Bradley–Terry ratings are comparable only within a connected group of players: with
no game linking two groups, nothing fixes how far apart their levels are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse
from numpy.typing import NDArray
from scipy.sparse.csgraph import connected_components

from arena.ratings.model import Result
from arena.ratings.tally import Tally, tally

Ints = NDArray[np.int64]


def groups_of(players: Sequence[str], i: Ints, j: Ints) -> list[list[str]]:
    """Groups of ``players`` linked by the pairs ``(i, j)``, each sorted, largest first
    (then by name)."""
    k = len(players)
    graph = scipy.sparse.coo_array((np.ones(len(i)), (i, j)), shape=(k, k))
    _, label = connected_components(graph, directed=False)
    groups: dict[int, list[str]] = {}
    for name, g in zip(players, label.tolist(), strict=True):
        groups.setdefault(g, []).append(name)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))


def components_of(t: Tally) -> list[list[str]]:
    """Groups of players linked by games, each sorted, largest first (then by name)."""
    return groups_of(t.players, t.pair_i, t.pair_j)


def components(results: Iterable[Result]) -> list[list[str]]:
    """The connected groups of players in ``results`` (fit each group on its own)."""
    return components_of(tally(results))


def strongly_connected(t: Tally) -> bool:
    """Whether every player both scored against and conceded to a path to every other.

    Without a prior, the maximum-likelihood ratings are finite exactly when this holds
    (Zermelo; Ford 1957): an edge ``i → j`` means ``i`` scored some points against ``j``.
    """
    return scored_graph_strongly_connected(t.k, t.pair_i, t.pair_j, t.games, t.points)


def scored_graph_strongly_connected(
    k: int, i: Ints, j: Ints, games: NDArray[np.float64], points: NDArray[np.float64]
) -> bool:
    """:func:`strongly_connected` on per-pair arrays (``points`` of the lower index ``i``)."""
    if k <= 1:
        return True
    up = points > 0  # i scored against j
    down = points < games  # j scored against i
    rows = np.concatenate([i[up], j[down]])
    cols = np.concatenate([j[up], i[down]])
    graph = scipy.sparse.coo_array((np.ones(len(rows)), (rows, cols)), shape=(k, k))
    n, _ = connected_components(graph, directed=True, connection="strong")
    return bool(n == 1)
