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
    """The four fields of ``results`` as four lists."""
    results = results if isinstance(results, list | tuple) else list(results)
    # One list per field: building a tuple per game instead costs several times more.
    return (
        [r.a for r in results],
        [r.b for r in results],
        [r.score for r in results],
        [r.cluster for r in results],
    )


def sorted_codes(values: list[str], *, few: bool = False) -> tuple[list[str], Ints]:
    """The distinct ``values`` sorted, and each value's position among them.

    ``few``: the values repeat a lot (player names): a dict of the distinct ones is
    fastest. Otherwise (cluster ids, about two games each) a numpy string array sorts
    them several times faster than a dict would; numpy drops trailing NUL characters,
    so ids with one take the dict path.
    """
    if not values:
        return [], np.zeros(0, dtype=np.int64)
    arr = None if few else np.array(values)
    if (
        arr is None
        or arr.dtype.kind != "U"
        or int(np.char.str_len(arr).sum()) != sum(map(len, values))
    ):
        distinct = sorted(set(values))
        index = {v: k for k, v in enumerate(distinct)}
        return distinct, np.array(list(map(index.__getitem__, values)), dtype=np.int64)
    order = np.argsort(arr, kind="stable")
    ordered = arr[order]
    new = np.ones(len(arr), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    codes = np.empty(len(arr), dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return ordered[new].tolist(), codes


def tally(results: Iterable[Result]) -> Tally:
    """Count ``results`` per pair and per (cluster, pair)."""
    a, b, s, c = columns(results)
    # Players and clusters are numbered in sorted order, not in the order of the games: the
    # fit's sums then run in the same order however the games came, and its result is the
    # same bit for bit.
    players, ab = sorted_codes(a + b, few=True)
    cluster_ids, cl = sorted_codes(c)
    n = len(a)
    return tally_arrays(
        players, ab[:n], ab[n:], np.asarray(s, dtype=np.float64), cl, len(cluster_ids)
    )


def tally_arrays(
    players: Sequence[str], ia: Ints, ib: Ints, score: Floats, cluster: Ints, clusters: int
) -> Tally:
    """Count games given as index arrays (``score`` from ``ia``'s side)."""
    k = len(players)
    swap = ia > ib
    lo = np.where(swap, ib, ia)
    hi = np.where(swap, ia, ib)
    s = np.where(swap, 1.0 - score, score)
    # One row per (cluster, i, j): sort by the three and cut where any changes (one int64
    # key when it fits: a single sort is several times faster than lexsort on three).
    if (clusters + 1) * (k + 1) * (k + 1) < 2**62:
        key = (cluster * k + lo) * k + hi
        order = np.argsort(key, kind="stable")
        key_s = key[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = key_s[1:] != key_s[:-1]
    else:
        order = np.lexsort((hi, lo, cluster))
        new = np.ones(len(order), dtype=bool)
        c_, l_, h_ = cluster[order], lo[order], hi[order]
        new[1:] = (c_[1:] != c_[:-1]) | (l_[1:] != l_[:-1]) | (h_[1:] != h_[:-1])
    cl_s, lo_s, hi_s, s_s = cluster[order], lo[order], hi[order], s[order]
    n = len(order)
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
