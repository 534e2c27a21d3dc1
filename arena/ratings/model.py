"""Value types of the ratings layer: game results in, ratings out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Elo points per logit: ``P(a beats b) = 1 / (1 + 10^(−(r_a − r_b)/400))``.
ELO_PER_LOGIT = 400.0 / math.log(10.0)
#: Two-sided 95% normal quantile.
Z95 = 1.96
#: Default: the cluster-robust error bars need every player in at least this many clusters.
MIN_CLUSTERS = 10

#: The error bars came from the spread of duplicate pairs (cluster-robust sandwich).
ERROR_CLUSTER = "cluster-robust"
#: The error bars came from the model alone (inverse Fisher information).
ERROR_MODEL = "model"

_SCORES = (0.0, 0.5, 1.0)


@dataclass(frozen=True)
class Result:
    """One scored game between two entries.

    ``score`` is from ``a``'s side: 1 ``a`` won, 0.5 draw, 0 ``b`` won. ``cluster``
    names the duplicate pair: the games on the same deals with the sides swapped
    share it, and the error bars treat a cluster, not a game, as one observation.
    """

    a: str
    b: str
    score: float
    cluster: str

    def __post_init__(self) -> None:
        if not isinstance(self.a, str) or not isinstance(self.b, str):
            raise TypeError("Result.a and Result.b must be entry names (str)")
        if self.a == self.b:
            raise ValueError(f"a game needs two different entries, got {self.a!r} twice")
        if self.score not in _SCORES:
            raise ValueError(f"score must be 0, 0.5 or 1 (for a), got {self.score!r}")


@dataclass(frozen=True)
class PairRecord:
    """How ``a`` did against ``b`` (one cell of the crosstable, from ``a``'s side)."""

    a: str
    b: str
    games: int
    wins: int
    losses: int
    draws: int
    points: float  # wins + draws / 2

    @property
    def score_pct(self) -> float:
        """Points per game in percent."""
        return 100.0 * self.points / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (without the names, which are the keys around it)."""
        return {
            "games": self.games,
            "wins": self.wins,
            "losses": self.losses,
            "draws": self.draws,
            "points": self.points,
            "score_pct": self.score_pct,
        }


@dataclass(frozen=True)
class PlayerRecord:
    """An entry's totals over all its games."""

    name: str
    games: int
    wins: int
    losses: int
    draws: int
    points: float

    @property
    def score_pct(self) -> float:
        """Points per game in percent."""
        return 100.0 * self.points / self.games if self.games else 0.0


@dataclass(frozen=True)
class PlayerRating:
    """One row of the leaderboard: the rating, its 95% interval and the record."""

    name: str
    rank: int
    elo: float
    se: float  # standard error, Elo points
    lower: float  # elo - 1.96 se
    upper: float  # elo + 1.96 se
    record: PlayerRecord

    @property
    def margin(self) -> float:
        """Half-width of the 95% interval (the "±")."""
        return (self.upper - self.lower) / 2.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        r = self.record
        return {
            "rank": self.rank,
            "name": self.name,
            "elo": self.elo,
            "se": self.se,
            "lower": self.lower,
            "upper": self.upper,
            "margin": self.margin,
            "games": r.games,
            "wins": r.wins,
            "losses": r.losses,
            "draws": r.draws,
            "points": r.points,
            "score_pct": r.score_pct,
        }


@dataclass(frozen=True)
class Ratings:
    """The outcome of :func:`arena.ratings.fit`.

    ``players`` is best first (Elo descending, then name). ``covariance`` is in
    Elo², ``los[a][b]`` is the likelihood that ``a`` is stronger than ``b`` (a ≠ b),
    ``crosstable[a][b]`` exists for every pair that played, from ``a``'s side.
    ``error_method`` is :data:`ERROR_CLUSTER` or :data:`ERROR_MODEL`, and
    ``error_note`` says why.

    ``covariance``, ``los`` and ``crosstable`` are read-only mappings of mappings
    (name → name → value, names in sorted order), backed by arrays in a fit
    (:mod:`arena.ratings.views`): read them like nested dicts; ``to_dict()`` gives
    plain dicts.
    """

    players: tuple[PlayerRating, ...]
    covariance: Mapping[str, Mapping[str, float]]
    los: Mapping[str, Mapping[str, float]]
    crosstable: Mapping[str, Mapping[str, PairRecord]]
    error_method: str
    error_note: str
    games: int
    clusters: int
    mean: float
    prior_draws: float
    iterations: int
    z: float
    elo_per_logit: float

    def __getitem__(self, name: str) -> PlayerRating:
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(p.name == name for p in self.players)

    @property
    def names(self) -> list[str]:
        """Entry names, best first."""
        return [p.name for p in self.players]

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready."""
        return {
            "method": {
                "model": "bradley-terry (maximum likelihood; a draw is half a win each side)",
                "prior_draws": self.prior_draws,
                "mean": self.mean,
                "elo_per_logit": self.elo_per_logit,
                "interval": 0.95,
                "z": self.z,
                "error_bars": self.error_method,
                "error_note": self.error_note,
                "iterations": self.iterations,
            },
            "games": self.games,
            "clusters": self.clusters,
            "players": [p.to_dict() for p in self.players],
            "los": _plain(self.los),
            "covariance": _plain(self.covariance),
            "crosstable": {
                a: {b: rec.to_dict() for b, rec in row.items()}
                for a, row in self.crosstable.items()
            },
        }


def _plain(m: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Nested plain dicts (a view's own ``to_dict`` is much faster than reading it cell by cell)."""
    to_dict = getattr(m, "to_dict", None)
    if callable(to_dict):
        out: dict[str, dict[str, float]] = to_dict()
        return out
    return {a: dict(row) for a, row in m.items()}
