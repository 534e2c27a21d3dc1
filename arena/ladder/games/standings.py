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
Given a way to read a pair's games again (``cluster_games``: the ladder's results store),
its memory does not grow with the games either: a duplicate pair with both tables in is
folded into its two versions' sums and forgotten, so what it keeps is per pair of
versions that met and per pair still open, plus a compact note of the pairs complete.
:func:`standings` is the same definition over a list of games, for one-off callers.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from collections.abc import Callable, Iterable, Mapping

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


def _pair_key(game: StoredGame) -> tuple[str, str]:
    return (game.side0, game.side1) if game.side0 < game.side1 else (game.side1, game.side0)


class StandingsBook:
    """The leaderboard's counts, kept for the loop's lifetime (one caller at a time).

    ``games``: the stored games to start from (any order; a pair's two games may come at
    different times). ``excluded_clusters``: voided pairs. ``expunged``: versions whose
    games leave everyone's ratings. Adding a game later is :meth:`add`; a pair voided
    later is :meth:`exclude_cluster`; an expunge later is :meth:`expunge`.

    ``cluster_games``: a cluster's stored games, read again (the results store). With it,
    a cluster with ``pair_tables`` games counted is complete: it is folded into its pair of
    versions' sums and its games forgotten (:meth:`~arena.ratings.running.RunningFit.seal`),
    and voiding it later reads them back. Without it every counted game is kept (as a
    one-off caller needs nothing else).
    """

    def __init__(
        self,
        games: Iterable[StoredGame] = (),
        *,
        excluded_clusters: Iterable[str] = (),
        expunged: Iterable[str] = (),
        cluster_games: Callable[[str], Iterable[StoredGame]] | None = None,
        pair_tables: int = 2,
    ) -> None:
        self._fit = RunningFit()
        self._excluded: set[str] = set(excluded_clusters)
        self._expunged: set[str] = set(expunged)
        self._cluster_games = cluster_games
        self._pair_tables = pair_tables
        # Per cluster not yet complete (or kept whole: no cluster_games), its counted games.
        self._by_cluster: dict[str, list[StoredGame]] = {}
        # The clusters complete and forgotten (a game of theirs arriving again is a copy, not counted).
        self._sealed = ClusterSet()
        # Per pair of versions (names in order): games, the first name's point margin, hands.
        self._totals: dict[tuple[str, str], _Totals] = {}
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
        """Count a newly stored game (void ones, excluded clusters, expunged versions, copies: not)."""
        if is_void(game) or game.cluster in self._excluded:
            return
        if game.side0 in self._expunged or game.side1 in self._expunged:
            return
        if game.cluster in self._sealed:
            return  # its pair is complete: a copy of one of its games
        counted = self._by_cluster.setdefault(game.cluster, [])
        if any(g.game_id == game.game_id for g in counted):
            return  # a copy of a game counted already
        counted.append(game)
        self._count(game, +1)
        self._fit.add(game.side0, game.side1, score_of(game), game.cluster)
        if self._cluster_games is not None and len(counted) >= self._pair_tables and self._fit.seal(game.cluster):
            del self._by_cluster[game.cluster]
            self._sealed.add(game.cluster)

    def exclude_cluster(self, cluster: str) -> None:
        """A voided pair: its stored games leave the fit (and any that arrive later stay out)."""
        self._excluded.add(cluster)
        if cluster in self._sealed and self._cluster_games is not None:
            games = [g for g in self._cluster_games(cluster) if self._counts(g)]
            for game in games:
                self._count(game, -1)
            self._fit.remove_cluster(cluster, [(g.side0, g.side1, score_of(g)) for g in games])
            return
        for game in self._by_cluster.pop(cluster, []):
            self._count(game, -1)
        self._fit.remove_cluster(cluster)

    def expunge(self, entry: str) -> None:
        """Remove every game of ``entry`` from everyone's ratings (the organiser's explicit act)."""
        self._expunged.add(entry)
        for cluster, games in list(self._by_cluster.items()):
            kept = [g for g in games if entry not in (g.side0, g.side1)]
            if len(kept) == len(games):
                continue
            if kept:
                self._by_cluster[cluster] = kept
            else:
                del self._by_cluster[cluster]
        for key in [k for k in self._totals if entry in k]:
            del self._totals[key]  # its pairs' sums: the open games' and the sealed ones' alike
        self._fit.remove_entry(entry)

    def _counts(self, game: StoredGame) -> bool:
        """Whether ``game`` (of a sealed cluster, read again) is one that was counted."""
        return not is_void(game) and game.side0 not in self._expunged and game.side1 not in self._expunged

    def _count(self, game: StoredGame, sign: int) -> None:
        key = _pair_key(game)
        t = self._totals.setdefault(key, _Totals())
        t.games += sign
        first_margin = game.score0 - game.score1 if key[0] == game.side0 else game.score1 - game.score0
        t.margin += sign * first_margin
        t.hands += sign * game.hands
        if t.games == 0:
            del self._totals[key]

    def _entry_totals(self) -> dict[str, _Totals]:
        """Each version's games, point margin and hands, from its pairs' sums."""
        out: dict[str, _Totals] = {}
        for (first, second), t in self._totals.items():
            for name, sign in ((first, 1), (second, -1)):
                e = out.setdefault(name, _Totals())
                e.games += t.games
                e.margin += sign * t.margin
                e.hands += t.hands
        return out

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
        totals = self._entry_totals()
        rows = []
        for name in set(listed):
            t = totals.get(name, _Totals())
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


class ClusterSet:
    """A set of cluster names kept small: ``L0000001`` to ``L0004000`` is one range, not 4,000 names.

    A name ending in digits is kept as a range of numbers under its prefix (and the
    digits' width); any other name as itself.
    """

    _NUMBERED = re.compile(r"(.*?)(\d+)")

    def __init__(self) -> None:
        # Per (prefix, width): sorted, disjoint, non-adjacent [first, last] ranges.
        self._ranges: dict[tuple[str, int], list[list[int]]] = {}
        self._names: set[str] = set()

    def _split(self, name: str) -> tuple[tuple[str, int], int] | None:
        found = self._NUMBERED.fullmatch(name)
        if found is None:
            return None
        return (found[1], len(found[2])), int(found[2])

    def __contains__(self, name: object) -> bool:
        split = self._split(name) if isinstance(name, str) else None
        if split is None:
            return name in self._names
        ranges = self._ranges.get(split[0], [])
        at = bisect.bisect_right(ranges, [split[1], math.inf]) - 1
        return at >= 0 and ranges[at][0] <= split[1] <= ranges[at][1]

    def add(self, name: str) -> None:
        split = self._split(name)
        if split is None:
            self._names.add(name)
            return
        ranges = self._ranges.setdefault(split[0], [])
        n = split[1]
        at = bisect.bisect_right(ranges, [n, math.inf])  # the first range starting after n
        if at > 0 and ranges[at - 1][1] >= n:
            return  # in already
        joins_left = at > 0 and ranges[at - 1][1] == n - 1
        joins_right = at < len(ranges) and ranges[at][0] == n + 1
        if joins_left and joins_right:
            ranges[at - 1][1] = ranges[at][1]
            del ranges[at]
        elif joins_left:
            ranges[at - 1][1] = n
        elif joins_right:
            ranges[at][0] = n
        else:
            ranges.insert(at, [n, n])

    def __len__(self) -> int:
        return len(self._names) + sum(last - first + 1 for ranges in self._ranges.values() for first, last in ranges)

    @property
    def pieces(self) -> int:
        """Ranges and names kept (what its memory is proportional to)."""
        return len(self._names) + sum(len(ranges) for ranges in self._ranges.values())


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


__all__ = ["ClusterSet", "Standing", "StandingsBook", "is_void", "ranked", "score_of", "standings"]
