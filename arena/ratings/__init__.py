"""Ratings: a Bradley–Terry fit with duplicate-pair error bars, LOS and crosstables.

numpy and scipy do the numbers (docs/ratings.md); the entry point is :func:`fit`::

    from arena.ratings import Result, fit
    ratings = fit([Result("a", "b", 1.0, "pair-1"), Result("b", "a", 0.5, "pair-1"), ...])
    for p in ratings.players:
        print(p.rank, p.name, round(p.elo), f"±{p.margin:.0f}", f"{p.record.score_pct:.1f}%")
"""

from arena.ratings.fit import ELO_PER_LOGIT, MIN_CLUSTERS, Z95, fit
from arena.ratings.graph import components
from arena.ratings.ladder import Ladder, Snapshot
from arena.ratings.model import (
    ERROR_CLUSTER,
    ERROR_MODEL,
    PairRecord,
    PlayerRating,
    PlayerRecord,
    Ratings,
    Result,
)
from arena.ratings.superiority import likelihood_of_superiority, normal_cdf
from arena.ratings.tally import crosstable, player_records

__all__ = [
    "ELO_PER_LOGIT",
    "ERROR_CLUSTER",
    "ERROR_MODEL",
    "MIN_CLUSTERS",
    "Z95",
    "Ladder",
    "PairRecord",
    "PlayerRating",
    "PlayerRecord",
    "Ratings",
    "Result",
    "Snapshot",
    "components",
    "crosstable",
    "fit",
    "likelihood_of_superiority",
    "normal_cdf",
    "player_records",
]
