"""Aggregating games into counts: the fit works on pairs and clusters, not on games.

Scores are 0, 0.5 or 1, so every sum here is exact in floating point and the
tallies (hence the fit) do not depend on the order of the games.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from arena.ratings.model import PairRecord, PlayerRecord, Result

Pair = tuple[int, int]  # (i, j) with i < j, indices into Tally.players


@dataclass
class PairCount:
    """Games between ``i < j`` and the points ``i`` scored, with the W/L/D split."""

    games: int = 0
    points: float = 0.0  # for the lower index
    wins: int = 0  # by the lower index
    draws: int = 0


@dataclass
class Tally:
    """All results, counted per pair of players and per cluster."""

    players: list[str]  # sorted by name
    index: dict[str, int]
    pairs: dict[Pair, PairCount] = field(default_factory=dict)
    clusters: dict[str, dict[Pair, PairCount]] = field(default_factory=dict)
    games: int = 0

    def sorted_pairs(self) -> list[tuple[int, int, int, float]]:
        """``(i, j, games, points_i)`` for every pair that played, in a fixed order."""
        return [(i, j, c.games, c.points) for (i, j), c in sorted(self.pairs.items())]


def tally(results: Iterable[Result]) -> Tally:
    """Count ``results`` per pair and per cluster."""
    results = list(results)
    players = sorted({r.a for r in results} | {r.b for r in results})
    t = Tally(players=players, index={p: k for k, p in enumerate(players)})
    for r in results:
        i, j, s = t.index[r.a], t.index[r.b], r.score
        if i > j:
            i, j, s = j, i, 1.0 - s
        for counts in (t.pairs, t.clusters.setdefault(r.cluster, {})):
            c = counts.setdefault((i, j), PairCount())
            c.games += 1
            c.points += s
            c.wins += s == 1.0
            c.draws += s == 0.5
        t.games += 1
    return t


def crosstable_of(t: Tally) -> dict[str, dict[str, PairRecord]]:
    """``table[a][b]``: how ``a`` did against ``b``, for every pair that played."""
    table: dict[str, dict[str, PairRecord]] = {p: {} for p in t.players}
    for (i, j), c in sorted(t.pairs.items()):
        a, b = t.players[i], t.players[j]
        losses = c.games - c.wins - c.draws
        table[a][b] = PairRecord(a, b, c.games, c.wins, losses, c.draws, c.points)
        table[b][a] = PairRecord(b, a, c.games, losses, c.wins, c.draws, c.games - c.points)
    return table


def records_of(t: Tally) -> dict[str, PlayerRecord]:
    """Each player's totals over all its games."""
    sums = {p: [0, 0, 0, 0, 0.0] for p in t.players}  # games, wins, losses, draws, points
    for row in crosstable_of(t).values():
        for rec in row.values():
            s = sums[rec.a]
            s[0] += rec.games
            s[1] += rec.wins
            s[2] += rec.losses
            s[3] += rec.draws
            s[4] += rec.points
    return {
        p: PlayerRecord(p, int(g), int(w), int(lo), int(d), float(pts))
        for p, (g, w, lo, d, pts) in sums.items()
    }


def crosstable(results: Iterable[Result]) -> dict[str, dict[str, PairRecord]]:
    """Per pair of players: games, wins, losses, draws and points (``table[a][b]``, a's side)."""
    return crosstable_of(tally(results))


def player_records(results: Iterable[Result]) -> dict[str, PlayerRecord]:
    """Per player: games, wins, losses, draws, points and score %."""
    return records_of(tally(results))
