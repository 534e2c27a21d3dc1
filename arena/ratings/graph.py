"""Connectivity of the comparison graph (who played whom).

Bradley–Terry ratings are comparable only within a connected group of players: with
no game linking two groups, nothing fixes how far apart their levels are.
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.ratings.model import Result
from arena.ratings.tally import Tally, tally


def components_of(t: Tally) -> list[list[str]]:
    """Groups of players linked by games, each sorted, largest first (then by name)."""
    parent = list(range(len(t.players)))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in t.pairs:
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[str]] = {}
    for k, name in enumerate(t.players):
        groups.setdefault(root(k), []).append(name)
    return sorted(groups.values(), key=lambda g: (-len(g), g))


def components(results: Iterable[Result]) -> list[list[str]]:
    """The connected groups of players in ``results`` (fit each group on its own)."""
    return components_of(tally(results))


def strongly_connected(t: Tally) -> bool:
    """Whether every player both scored against and conceded to a path to every other.

    Without a prior, the maximum-likelihood ratings are finite exactly when this holds
    (Zermelo; Ford 1957): an edge ``i → j`` means ``i`` scored some points against ``j``.
    """
    n = len(t.players)
    out: list[list[int]] = [[] for _ in range(n)]
    back: list[list[int]] = [[] for _ in range(n)]
    for (i, j), c in t.pairs.items():
        if c.points > 0:  # i scored against j
            out[i].append(j)
            back[j].append(i)
        if c.points < c.games:  # j scored against i
            out[j].append(i)
            back[i].append(j)
    return n == 0 or (_reach(out) == n and _reach(back) == n)


def _reach(adjacent: list[list[int]]) -> int:
    """How many nodes are reachable from node 0."""
    seen = {0}
    stack = [0]
    while stack:
        for nxt in adjacent[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return len(seen)
