"""Duplicate pairs: pentanomial counts, pair score, Elo and points per table-hand, with intervals.

A duplicate pair is one deal played at two tables with the partnerships
swapped. From one side's view a pair scores 0, ½, 1, 1½ or 2 game points
(the sum of its two game scores); the five counts are the *pentanomial*.
Because the two games of a pair share the deal they are correlated, so every
interval here treats a pair, not a game, as one observation (see
``docs/sprt.md``).

Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: A pair's possible scores for one side (sum of its two game scores), in pentanomial order.
PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)
#: Two-sided 95% normal quantile.
Z95 = 1.96
#: The Elo model every conversion here uses: ``score = 1 / (1 + 10^(−elo/400))`` per game.
ELO_MODEL = "logistic"

Pentanomial = tuple[int, int, int, int, int]


def pentanomial_index(pair_score: float) -> int:
    """The pentanomial slot (0…4) of a pair score 0, 0.5, 1, 1.5 or 2."""
    k = round(pair_score * 2)
    if not 0 <= k <= 4 or abs(k - pair_score * 2) > 1e-9:
        raise ValueError(f"a pair score is 0, 0.5, 1, 1.5 or 2, got {pair_score!r}")
    return k


@dataclass(frozen=True)
class PairOutcome:
    """One finished duplicate pair from one side's view.

    ``score`` is the side's game points over both tables (0…2 in halves),
    ``margin`` its game points minus the opponent's summed over both tables,
    ``hands`` the hands played at both tables together.
    """

    score: float
    margin: float = 0.0
    hands: int = 0

    def __post_init__(self) -> None:
        pentanomial_index(self.score)
        if self.hands < 0:
            raise ValueError(f"hands must be >= 0, got {self.hands}")


@dataclass(frozen=True)
class Interval:
    """An estimate with its 95% interval (``lower``/``upper`` may be ±inf for Elo)."""

    value: float
    lower: float
    upper: float

    @property
    def margin(self) -> float:
        """Half-width of the interval."""
        return (self.upper - self.lower) / 2.0

    def to_dict(self) -> dict[str, float | None]:
        """JSON-ready: non-finite numbers (an Elo of a clean sweep) become ``None``."""
        return {
            k: _finite(v)
            for k, v in (("value", self.value), ("lower", self.lower), ("upper", self.upper))
        }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def pentanomial(outcomes: Iterable[PairOutcome]) -> Pentanomial:
    """Counts of pairs that scored 0, ½, 1, 1½ and 2."""
    counts = [0, 0, 0, 0, 0]
    for o in outcomes:
        counts[pentanomial_index(o.score)] += 1
    return (counts[0], counts[1], counts[2], counts[3], counts[4])


def elo_of_score(score: float) -> float:
    """The logistic Elo difference with expected per-game score ``score`` (±inf at 1 and 0)."""
    if score >= 1.0:
        return math.inf
    if score <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no "-0" at an even score


def score_of_elo(elo: float) -> float:
    """The expected per-game score of a logistic Elo difference ``elo``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def pair_score(counts: Sequence[int]) -> Interval | None:
    """Mean score per game (0…1) from pentanomial ``counts``, with a 95% interval from pairs.

    The variance is the spread of the pair scores (each pair one observation),
    so the correlation of the two games of a pair is accounted for. ``None``
    without a pair.
    """
    n = sum(counts)
    if n == 0:
        return None
    scores = [k / 4.0 for k in range(5)]  # per-game score of each slot
    mean = sum(c * a for c, a in zip(counts, scores, strict=True)) / n
    var = sum(c * (a - mean) ** 2 for c, a in zip(counts, scores, strict=True)) / n
    half = Z95 * math.sqrt(var / n)
    return Interval(mean, max(0.0, mean - half), min(1.0, mean + half))


def elo_estimate(counts: Sequence[int]) -> Interval | None:
    """Logistic Elo difference from pentanomial ``counts``, 95% interval from pairs."""
    score = pair_score(counts)
    if score is None:
        return None
    return Interval(elo_of_score(score.value), elo_of_score(score.lower), elo_of_score(score.upper))


@dataclass
class PointsTally:
    """Running sums for the point margin per table-hand (add pairs one at a time)."""

    pairs: int = 0
    margin: float = 0.0
    hands: float = 0.0
    margin2: float = 0.0
    cross: float = 0.0
    hands2: float = 0.0

    def add(self, outcome: PairOutcome) -> None:
        """Count one pair (a pair with no hand played adds nothing)."""
        if outcome.hands <= 0:
            return
        m, h = outcome.margin, float(outcome.hands)
        self.pairs += 1
        self.margin += m
        self.hands += h
        self.margin2 += m * m
        self.cross += m * h
        self.hands2 += h * h

    def interval(self) -> Interval | None:
        """Point margin per table-hand (total margin / total hands), 95% interval from pairs.

        A ratio estimator over pairs: ``R = Σ margin / Σ hands``, with the
        variance ``Σ (margin_i − R·hands_i)² / (n (n−1) h̄²)`` (the delta method),
        so a pair, not a hand, is one observation. ``None`` before a hand is played.
        """
        n = self.pairs
        if self.hands <= 0:
            return None
        ratio = self.margin / self.hands
        if n < 2:
            return Interval(ratio, -math.inf, math.inf)
        ss = max(self.margin2 - 2.0 * ratio * self.cross + ratio * ratio * self.hands2, 0.0)
        half = Z95 * math.sqrt(ss / (n * (n - 1))) / (self.hands / n)
        return Interval(ratio, ratio - half, ratio + half)


def points_per_hand(outcomes: Iterable[PairOutcome]) -> Interval | None:
    """Point margin per table-hand of ``outcomes``, with its 95% interval (see :class:`PointsTally`)."""
    tally = PointsTally()
    for o in outcomes:
        tally.add(o)
    return tally.interval()


@dataclass(frozen=True)
class PairSummary:
    """What duplicate pairs say about one side (an entry, or NEW in a test)."""

    pairs: int
    pentanomial: Pentanomial
    score: Interval | None
    """Mean score per game (0…1)."""
    elo: Interval | None
    """Logistic Elo difference against the opponents met in these pairs."""
    points_per_hand: Interval | None
    """Point margin per table-hand."""
    incomplete: int = 0
    """Games whose pair has not (yet) been played at both tables: not counted."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "pairs": self.pairs,
            "pentanomial": list(self.pentanomial),
            "score": None if self.score is None else self.score.to_dict(),
            "elo": None if self.elo is None else self.elo.to_dict(),
            "elo_model": ELO_MODEL,
            "points_per_hand": None
            if self.points_per_hand is None
            else self.points_per_hand.to_dict(),
            "incomplete_games": self.incomplete,
        }


def summary_of(counts: Sequence[int], points: Interval | None, incomplete: int = 0) -> PairSummary:
    """A :class:`PairSummary` from pentanomial ``counts`` and the points per table-hand."""
    c = tuple(counts)
    if len(c) != 5:
        raise ValueError(f"a pentanomial has 5 counts, got {len(c)}")
    return PairSummary(
        pairs=sum(c),
        pentanomial=(c[0], c[1], c[2], c[3], c[4]),
        score=pair_score(c),
        elo=elo_estimate(c),
        points_per_hand=points,
        incomplete=incomplete,
    )


def summarize(outcomes: Sequence[PairOutcome], incomplete: int = 0) -> PairSummary:
    """Pentanomial, score, Elo and points per table-hand of ``outcomes``."""
    return summary_of(pentanomial(outcomes), points_per_hand(outcomes), incomplete)


@dataclass(frozen=True)
class PairGame:
    """One scored game of a tournament, as the pair statistics need it.

    ``score_a`` is ``a``'s game score (1 win, 0.5 draw, 0 loss); ``points_a`` and
    ``points_b`` the final game points; ``cluster`` names the duplicate pair.
    """

    cluster: str
    a: str
    b: str
    score_a: float
    points_a: int
    points_b: int
    hands: int


def entry_pairs(games: Iterable[PairGame]) -> dict[str, PairSummary]:
    """Each entry's :class:`PairSummary` over the duplicate pairs it played.

    A cluster counts as a pair when it holds exactly two games between the
    same two entries with the sides swapped; the games of any other cluster
    (half-played, or voided at one table) are counted as ``incomplete``.
    """
    clusters: dict[str, list[PairGame]] = {}
    for g in games:
        clusters.setdefault(g.cluster, []).append(g)
    outcomes: dict[str, list[PairOutcome]] = {}
    incomplete: dict[str, int] = {}
    for cluster in clusters.values():
        for g in cluster:
            outcomes.setdefault(g.a, [])
            outcomes.setdefault(g.b, [])
        first, *rest = cluster
        if len(rest) != 1 or (rest[0].a, rest[0].b) != (first.b, first.a):
            for g in cluster:
                incomplete[g.a] = incomplete.get(g.a, 0) + 1
                incomplete[g.b] = incomplete.get(g.b, 0) + 1
            continue
        second = rest[0]
        for side in (first.a, first.b):
            score = margin = 0.0
            for g in (first, second):
                own, other = (g.points_a, g.points_b) if g.a == side else (g.points_b, g.points_a)
                score += g.score_a if g.a == side else 1.0 - g.score_a
                margin += own - other
            outcomes[side].append(PairOutcome(score, margin, first.hands + second.hands))
    return {name: summarize(o, incomplete.get(name, 0)) for name, o in sorted(outcomes.items())}
