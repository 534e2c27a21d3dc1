"""The ladder's leaderboard: one definition, kept current as games are stored.

**The definition** (docs/ladder.md, "Standings and grading"): the Bradley–Terry fit with
honest pair-robust intervals (:mod:`arena.ratings.intervals`) over every stored game that

- is not void (a game a platform failure voided never counts),
- is not in an *excluded* cluster (a voided pair: its stored half leaves the fit, since
  one game of a deal does not cancel the deal's luck), and
- does not involve an *expunged* version (the organiser's explicit removal of a
  version's games from everyone's ratings).

Games against disabled teams and versions stay: disabling stops a version playing, it
does not unmake what it played. The rows are the versions asked for (the site lists the
active ones); a version outside the largest group of versions linked by games has no
rating until it meets them. Each row also has the duplicate pairs the version played,
its games, and its point margin per table-hand (its side's game points minus the other
side's, over the hands played), the measure duplicate deals make fair.

:class:`StandingsBook` keeps the counts for the loop's lifetime (:mod:`arena.ratings.running`):
adding a game costs the same at 40 or 40,000 stored games, and so does a leaderboard.
:func:`standings` is the same definition over a list of games, for one-off callers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from arena.ratings.running import RunningFit, RunningRatings
from arena.results.store import StoredGame


@dataclasses.dataclass(frozen=True)
class Standing:
    """One version's place (``rank`` and the Elo fields ``None`` while it is unrated)."""

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


def is_void(game: StoredGame) -> bool:
    """A game the platform voided (never counted)."""
    return game.ending.startswith("void")


def score_of(game: StoredGame) -> float:
    """``side0``'s game score: 1 a win, 0.5 a draw, 0 a loss."""
    return 0.5 if game.winner is None else (1.0 if game.winner == game.side0 else 0.0)


@dataclasses.dataclass
class _Totals:
    games: int = 0
    margin: float = 0.0
    hands: int = 0


class StandingsBook:
    """The leaderboard's counts, kept for the loop's lifetime (one caller at a time).

    ``games``: the stored games to start from (any order; a pair's two games may come at
    different times). ``excluded_clusters``: voided pairs. ``expunged``: versions whose
    games leave everyone's ratings. Adding a game later is :meth:`add`; a pair voided
    later is :meth:`exclude_cluster`; an expunge later is :meth:`expunge`.
    """

    def __init__(
        self,
        games: Iterable[StoredGame] = (),
        *,
        excluded_clusters: Iterable[str] = (),
        expunged: Iterable[str] = (),
    ) -> None:
        self._fit = RunningFit()
        self._excluded: set[str] = set(excluded_clusters)
        self._expunged: set[str] = set(expunged)
        self._seen: set[str] = set()  # game ids counted (a late copy is not counted twice)
        # Per cluster, the counted games (to take them out again).
        self._by_cluster: dict[str, list[StoredGame]] = {}
        self._totals: dict[str, _Totals] = {}
        for game in games:
            self.add(game)

    @property
    def games(self) -> int:
        """Games in the fit now."""
        return self._fit.games

    @property
    def excluded_clusters(self) -> frozenset[str]:
        return frozenset(self._excluded)

    @property
    def expunged(self) -> frozenset[str]:
        return frozenset(self._expunged)

    def add(self, game: StoredGame) -> None:
        """Count a newly stored game (void ones, excluded clusters, expunged versions: not)."""
        if game.game_id in self._seen:
            return
        self._seen.add(game.game_id)
        if is_void(game) or game.cluster in self._excluded:
            return
        if game.side0 in self._expunged or game.side1 in self._expunged:
            return
        self._count(game, +1)
        self._by_cluster.setdefault(game.cluster, []).append(game)
        self._fit.add(game.side0, game.side1, score_of(game), game.cluster)

    def exclude_cluster(self, cluster: str) -> None:
        """A voided pair: its stored games leave the fit (and any that arrive later stay out)."""
        self._excluded.add(cluster)
        for game in self._by_cluster.pop(cluster, []):
            self._count(game, -1)
        self._fit.remove_cluster(cluster)

    def expunge(self, entry: str) -> None:
        """Remove every game of ``entry`` from everyone's ratings (the organiser's explicit act)."""
        self._expunged.add(entry)
        for cluster, games in list(self._by_cluster.items()):
            if any(entry in (g.side0, g.side1) for g in games):
                kept = [g for g in games if entry not in (g.side0, g.side1)]
                for g in games:
                    if g not in kept:
                        self._count(g, -1)
                if kept:
                    self._by_cluster[cluster] = kept
                else:
                    del self._by_cluster[cluster]
        self._fit.remove_entry(entry)

    def _count(self, game: StoredGame, sign: int) -> None:
        for side, own, other in ((game.side0, game.score0, game.score1), (game.side1, game.score1, game.score0)):
            t = self._totals.setdefault(side, _Totals())
            t.games += sign
            t.margin += sign * (own - other)
            t.hands += sign * game.hands

    def pairs_played(self) -> dict[frozenset[str], int]:
        """``{frozenset({a, b}): duplicate pairs they played}`` (what matchmaking reads)."""
        return self._fit.pairs_played()

    def ratings(self) -> RunningRatings | None:
        """The fit itself (method, note, every rated version), ``None`` below two versions."""
        return self._fit.fit()

    def standings(self, listed: Iterable[str]) -> list[Standing]:
        """The rows of the ``listed`` versions, best first (unrated ones last, by name)."""
        fitted = self._fit.fit()
        rated = fitted.rated if fitted is not None else {}
        rows = []
        for name in set(listed):
            t = self._totals.get(name, _Totals())
            r = rated.get(name)
            rows.append(
                Standing(
                    entry=name,
                    elo=None if r is None else r.elo,
                    low=None if r is None else r.lower,
                    high=None if r is None else r.upper,
                    pairs=self._fit.clusters_of(name),
                    games=t.games,
                    points_per_hand=(t.margin / t.hands) if t.hands else None,
                )
            )
        return ranked(rows)


def ranked(rows: list[Standing]) -> list[Standing]:
    """``rows`` best first with ranks 1, 2, ... among the rated (unrated last, by name)."""
    rows = sorted(rows, key=lambda s: (s.elo is None, -(s.elo or 0.0), s.entry))
    out, rank = [], 0
    for row in rows:
        if row.elo is not None:
            rank += 1
            row = dataclasses.replace(row, rank=rank)
        out.append(row)
    return out


def standings(
    games: Iterable[StoredGame],
    active: Iterable[str],
    start: Mapping[str, float] | None = None,
    *,
    excluded_clusters: Iterable[str] = (),
    expunged: Iterable[str] = (),
) -> list[Standing]:
    """The rows of the ``active`` versions over ``games``: :class:`StandingsBook`'s definition.

    ``start`` is accepted for older callers and not needed (the fit is the same from
    anywhere). Each call counts every game: a long-running caller keeps a book instead.
    """
    del start
    book = StandingsBook(games, excluded_clusters=excluded_clusters, expunged=expunged)
    return book.standings(active)


__all__ = ["Standing", "StandingsBook", "is_void", "ranked", "score_of", "standings"]
