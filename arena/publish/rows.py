"""The leaderboard as plain rows, and number formats: shared by every output format."""

from __future__ import annotations

from dataclasses import dataclass

from arena.publish.model import Standings
from arena.ratings import Ratings
from arena.ratings.pairs import Interval, PairGame, PairSummary, entry_pairs


@dataclass(frozen=True)
class LeaderRow:
    """One leaderboard line. Unrated entries (no scored game) have ``rank``/``elo`` None."""

    name: str
    rank: int | None
    elo: float | None
    se: float | None
    lower: float | None
    upper: float | None
    games: int
    wins: int
    losses: int
    draws: int
    score_pct: float | None
    disqualified: bool
    pairs: PairSummary | None = None
    """Duplicate pairs: pentanomial counts and points per table-hand (see ``docs/sprt.md``)."""

    @property
    def margin(self) -> float | None:
        """Half-width of the 95% interval."""
        return None if self.lower is None or self.upper is None else (self.upper - self.lower) / 2


def pair_summaries(standings: Standings) -> dict[str, PairSummary]:
    """Each entry's duplicate-pair statistics over its scored games."""
    return entry_pairs(
        PairGame(g.cluster, g.entry_a, g.entry_b, g.score, g.scores_a, g.scores_b, g.hands)
        for g in standings.games
        if not g.is_void
    )


def leaderboard(standings: Standings, ratings: Ratings) -> list[LeaderRow]:
    """Rated entries best first, then entries with no scored game (in entry order)."""
    pairs = pair_summaries(standings)
    rows = [
        LeaderRow(
            p.name,
            p.rank,
            p.elo,
            p.se,
            p.lower,
            p.upper,
            p.record.games,
            p.record.wins,
            p.record.losses,
            p.record.draws,
            p.record.score_pct,
            p.name in standings.disqualified,
            pairs.get(p.name),
        )
        for p in ratings.players
    ]
    for name in dict.fromkeys(standings.entries):
        if name not in ratings:
            rows.append(
                LeaderRow(
                    name,
                    None,
                    None,
                    None,
                    None,
                    None,
                    0,
                    0,
                    0,
                    0,
                    None,
                    name in standings.disqualified,
                )
            )
    return rows


def all_names(standings: Standings, ratings: Ratings) -> list[str]:
    """Every entry, in leaderboard order."""
    return [row.name for row in leaderboard(standings, ratings)]


def fmt_elo(value: float | None) -> str:
    """An Elo rating or interval width as shown: whole points."""
    return "–" if value is None else f"{value:.0f}"


def fmt_pentanomial(pairs: PairSummary | None) -> str:
    """Pairs that scored 0, ½, 1, 1½ and 2: ``3-0-12-1-4`` (``–`` without a pair)."""
    return "–" if pairs is None or not pairs.pairs else "-".join(str(c) for c in pairs.pentanomial)


def fmt_points(points: Interval | None) -> str:
    """Point margin per table-hand with its 95% half-width: ``+12.3 ± 4.5``."""
    if points is None:
        return "–"
    if points.margin == float("inf"):
        return f"{points.value:+.1f}"
    return f"{points.value:+.1f} ± {points.margin:.1f}"


def fmt_pct(value: float | None) -> str:
    """A percentage with one decimal."""
    return "–" if value is None else f"{value:.1f}%"


def fmt_score(value: float) -> str:
    """A game score: ``1``, ``0.5`` or ``0``."""
    return f"{value:g}"
