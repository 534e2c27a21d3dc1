"""The ladder's leaderboard: ratings of the active versions from every game they played together.

Ratings are the Bradley–Terry fit with pair-robust intervals (:func:`arena.ratings.fit`)
over the stored games whose two sides are both active versions; a version
that has not met the others yet (a graph in several pieces) has no rating
until it has.  Each row also counts the duplicate pairs the version played
and its point margin per table-hand (its side's game points minus the other
side's, over the hands played), the measure duplicate deals make fair.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from arena.ratings import Result, components, fit
from arena.results.store import StoredGame


@dataclasses.dataclass(frozen=True)
class Standing:
    """One active version's place."""

    entry: str
    elo: float | None
    low: float | None
    high: float | None
    pairs: int
    games: int
    points_per_hand: float | None
    rank: int | None = None

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def standings(games: Iterable[StoredGame], active: Iterable[str], start: Mapping[str, float] | None = None) -> list[Standing]:
    """Every active version's standing, best first (unrated ones last, by name)."""
    names = set(active)
    results: list[Result] = []
    clusters: dict[str, set[str]] = {n: set() for n in names}
    played: dict[str, int] = dict.fromkeys(names, 0)
    margin: dict[str, float] = dict.fromkeys(names, 0.0)
    hands: dict[str, int] = dict.fromkeys(names, 0)
    for g in games:
        if g.side0 not in names or g.side1 not in names or g.ending.startswith("void"):
            continue
        score = 0.5 if g.winner is None else (1.0 if g.winner == g.side0 else 0.0)
        results.append(Result(g.side0, g.side1, score, g.cluster))
        for side, own, other in ((g.side0, g.score0, g.score1), (g.side1, g.score1, g.score0)):
            clusters[side].add(g.cluster)
            played[side] += 1
            margin[side] += own - other
            hands[side] += g.hands
    rated: dict[str, tuple[float, float, float]] = {}
    if results:
        groups = components(results)
        biggest = set(groups[0])  # largest first
        mine = [r for r in results if r.a in biggest and r.b in biggest]
        if len(biggest) >= 2 and mine:
            fitted = fit(mine, start={k: v for k, v in (start or {}).items() if k in biggest})
            rated = {p.name: (p.elo, p.lower, p.upper) for p in fitted.players}
    rows = [
        Standing(
            entry=n,
            elo=rated[n][0] if n in rated else None,
            low=rated[n][1] if n in rated else None,
            high=rated[n][2] if n in rated else None,
            pairs=len(clusters[n]),
            games=played[n],
            points_per_hand=(margin[n] / hands[n]) if hands[n] else None,
        )
        for n in names
    ]
    rows.sort(key=lambda s: (s.elo is None, -(s.elo or 0.0), s.entry))
    rank = 0
    out = []
    for row in rows:
        if row.elo is not None:
            rank += 1
            row = dataclasses.replace(row, rank=rank)
        out.append(row)
    return out


class StandingsBook:
    """The loop's standings, kept up to date game by game (a stand-in: refits over every kept game)."""

    def __init__(self, games: Iterable[StoredGame] = (), *, excluded_clusters: Iterable[str] = ()) -> None:
        self.games = list(games)
        self.excluded = set(excluded_clusters)

    def add(self, game: StoredGame) -> None:
        self.games.append(game)

    def exclude_cluster(self, cluster: str) -> None:
        self.excluded.add(cluster)

    def standings(self, listed: Iterable[str]) -> list[Standing]:
        return standings((g for g in self.games if g.cluster not in self.excluded), listed)


__all__ = ["Standing", "StandingsBook", "standings"]
