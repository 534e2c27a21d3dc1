"""Ratings: a Bradley–Terry fit with duplicate-pair error bars, LOS and crosstables.

numpy and scipy do the numbers (docs/ratings.md); the entry point is :func:`fit`::

    from arena.ratings import Result, fit
    ratings = fit([Result("a", "b", 1.0, "pair-1"), Result("b", "a", 0.5, "pair-1"), ...])
    for p in ratings.players:
        print(p.rank, p.name, round(p.elo), f"±{p.margin:.0f}", f"{p.record.score_pct:.1f}%")

The value types (:class:`Result`, :class:`Ratings`, ...) and the constants are plain
Python; the numerical parts load numpy and scipy on first use, so that importing the
package (the CLI, the publisher, the tournament) does not pay for them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from arena.ratings.model import (
    ELO_PER_LOGIT,
    ERROR_CLUSTER,
    ERROR_MODEL,
    MIN_CLUSTERS,
    Z95,
    PairRecord,
    PlayerRating,
    PlayerRecord,
    Ratings,
    Result,
)

if TYPE_CHECKING:
    from arena.ratings.graph import components
    from arena.ratings.superiority import likelihood_of_superiority, normal_cdf
    from arena.ratings.tally import crosstable, player_records

#: Names served from the numerical modules, imported when first asked for.
_LAZY = {
    "components": "arena.ratings.graph",
    "likelihood_of_superiority": "arena.ratings.superiority",
    "normal_cdf": "arena.ratings.superiority",
    "crosstable": "arena.ratings.tally",
    "player_records": "arena.ratings.tally",
}


def fit(
    results: Iterable[Result],
    *,
    prior_draws: float = 1.0,
    mean: float = 1500.0,
    min_clusters: int = MIN_CLUSTERS,
    tol: float = 1e-10,
    start: Mapping[str, float] | None = None,
) -> Ratings:
    """Fit Bradley–Terry ratings to ``results`` by maximum likelihood, with 95% intervals.

    See :func:`arena.ratings.fitting.fit` for the options and docs/ratings.md for the
    method (this wrapper imports it on first use).
    """
    from arena.ratings.fitting import fit as fit_

    return fit_(
        results, prior_draws=prior_draws, mean=mean, min_clusters=min_clusters, tol=tol, start=start
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'arena.ratings' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ELO_PER_LOGIT",
    "ERROR_CLUSTER",
    "ERROR_MODEL",
    "MIN_CLUSTERS",
    "Z95",
    "PairRecord",
    "PlayerRating",
    "PlayerRecord",
    "Ratings",
    "Result",
    "components",
    "crosstable",
    "fit",
    "likelihood_of_superiority",
    "normal_cdf",
    "player_records",
]
