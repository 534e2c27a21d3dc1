"""Aggregating games into counts: the fit works on pairs and clusters, not on games.

Everything is held in numpy arrays, one entry per pair of players that met (``i < j``,
indices into ``Tally.players``) and one per (cluster, pair) that met in the cluster.
Scores are 0, 0.5 or 1, so every sum here is exact in floating point and the tallies
(hence the fit) do not depend on the order of the games.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.ratings.model import PlayerRecord, Result
from arena.ratings.views import Crosstable

Ints = NDArray[np.int64]
Floats = NDArray[np.float64]


@dataclass
class Tally:
    """All results, counted per pair of players and per (cluster, pair).

    Pair arrays (``pair_*``) have one entry per pair that played, ``pair_i < pair_j``,
    sorted by ``(i, j)``; ``points`` and ``wins`` are the lower index's. Row arrays
    (``row_*``) have one entry per (cluster, pair) that played, ``row_pair`` indexing
    the pair arrays and ``row_cluster`` the clusters (``0 … clusters − 1``, sorted by id).
    """

    players: list[str]  # sorted by name
    index: dict[str, int]
    pair_i: Ints
    pair_j: Ints
    games: Floats
    points: Floats
    wins: Floats
    draws: Floats
    row_cluster: Ints
    row_pair: Ints
    row_games: Floats
    row_points: Floats
    clusters: int
    total_games: int

    @property
    def k(self) -> int:
        """The number of players."""
        return len(self.players)


def columns(results: Iterable[Result]) -> tuple[list[str], list[str], list[float], list[str]]:
    """The four fields of ``results`` as four lists (one pass over the games)."""
    rows = [(r.a, r.b, r.score, r.cluster) for r in results]
    if not rows:
        return [], [], [], []
    a, b, s, c = zip(*rows, strict=True)
    return list(a), list(b), list(s), list(c)


def tally(results: Iterable[Result]) -> Tally:
    """Count ``results`` per pair and per (cluster, pair)."""
    a, b, s, c = columns(results)
    players = sorted(set(a) | set(b))
    index = {p: k for k, p in enumerate(players)}
    cluster_ids = sorted(set(c))
    cluster_index = {cid: k for k, cid in enumerate(cluster_ids)}
    ia = np.fromiter((index[x] for x in a), np.int64, len(a))
    ib = np.fromiter((index[x] for x in b), np.int64, len(b))
    cl = np.fromiter((cluster_index[x] for x in c), np.int64, len(c))
    return tally_arrays(players, ia, ib, np.asarray(s, dtype=np.float64), cl, len(cluster_ids))


def tally_arrays(
    players: Sequence[str], ia: Ints, ib: Ints, score: Floats, cluster: Ints, clusters: int
) -> Tally:
    """Count games given as index arrays (``score`` from ``ia``'s side)."""
    k = len(players)
    swap = ia > ib
    lo = np.where(swap, ib, ia)
    hi = np.where(swap, ia, ib)
    s = np.where(swap, 1.0 - score, score)
    # One row per (cluster, i, j): sort by the three and cut where any changes.
    order = np.lexsort((hi, lo, cluster))
    cl_s, lo_s, hi_s, s_s = cluster[order], lo[order], hi[order], s[order]
    n = len(order)
    new = np.ones(n, dtype=bool)
    if n:
        new[1:] = (cl_s[1:] != cl_s[:-1]) | (lo_s[1:] != lo_s[:-1]) | (hi_s[1:] != hi_s[:-1])
    row_of_game = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    rows = len(starts)
    row_games = np.bincount(row_of_game, minlength=rows).astype(np.float64)
    row_points = np.bincount(row_of_game, weights=s_s, minlength=rows)
    row_lo, row_hi = lo_s[starts], hi_s[starts]
    # Pairs: the distinct (i, j) of the rows, sorted.
    pair_key, row_pair = np.unique(row_lo * k + row_hi, return_inverse=True)
    pairs = len(pair_key)
    pair_of_game = row_pair[row_of_game]
    return Tally(
        players=list(players),
        index={p: x for x, p in enumerate(players)},
        pair_i=(pair_key // max(k, 1)).astype(np.int64),
        pair_j=(pair_key % max(k, 1)).astype(np.int64),
        games=np.bincount(row_pair, weights=row_games, minlength=pairs),
        points=np.bincount(row_pair, weights=row_points, minlength=pairs),
        wins=np.bincount(pair_of_game, weights=(s_s == 1.0), minlength=pairs),
        draws=np.bincount(pair_of_game, weights=(s_s == 0.5), minlength=pairs),
        row_cluster=cl_s[starts].astype(np.int64),
        row_pair=row_pair.astype(np.int64),
        row_games=row_games,
        row_points=row_points,
        clusters=clusters,
        total_games=n,
    )


def crosstable_of(t: Tally) -> Crosstable:
    """``table[a][b]``: how ``a`` did against ``b``, for every pair that played."""
    return Crosstable(t.players, t.pair_i, t.pair_j, t.games, t.wins, t.draws, t.points)


def records_of(t: Tally) -> dict[str, PlayerRecord]:
    """Each player's totals over all its games."""
    k = t.k
    losses = t.games - t.wins - t.draws  # of the lower index

    def both(mine: Floats, theirs: Floats) -> list[float]:
        low = np.bincount(t.pair_i, weights=mine, minlength=k)
        return (low + np.bincount(t.pair_j, weights=theirs, minlength=k)).tolist()

    games = both(t.games, t.games)
    wins = both(t.wins, losses)
    lost = both(losses, t.wins)
    draws = both(t.draws, t.draws)
    points = both(t.points, t.games - t.points)
    return {
        p: PlayerRecord(p, int(games[x]), int(wins[x]), int(lost[x]), int(draws[x]), points[x])
        for x, p in enumerate(t.players)
    }


def crosstable(results: Iterable[Result]) -> Crosstable:
    """Per pair of players: games, wins, losses, draws and points (``table[a][b]``, a's side)."""
    return crosstable_of(tally(results))


def player_records(results: Iterable[Result]) -> dict[str, PlayerRecord]:
    """Per player: games, wins, losses, draws, points and score %."""
    return records_of(tally(results))
