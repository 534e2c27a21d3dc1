"""``ratings.json``: everything in one JSON document."""

from __future__ import annotations

from typing import Any

from arena.publish.model import Standings
from arena.publish.rows import leaderboard
from arena.ratings import Ratings

FORMAT = "arena-ratings"
VERSION = 1


def ratings_document(standings: Standings, ratings: Ratings) -> dict[str, Any]:
    """Ratings, intervals, LOS, covariance, crosstable, faults, provenance and method.

    ``entries`` is the leaderboard, best first; unrated entries (no scored game) come
    last with ``rank``/``elo`` null. All numbers are unrounded.
    """
    fitted = ratings.to_dict()
    by_name = {p["name"]: p for p in fitted["players"]}
    entries = []
    for row in leaderboard(standings, ratings):
        entry: dict[str, Any] = dict(
            by_name.get(row.name)
            or {
                "rank": None,
                "name": row.name,
                "elo": None,
                "se": None,
                "lower": None,
                "upper": None,
                "margin": None,
                "games": 0,
                "wins": 0,
                "losses": 0,
                "draws": 0,
                "points": 0.0,
                "score_pct": None,
            }
        )
        entry["pairs"] = None if row.pairs is None else row.pairs.to_dict()
        entry["disqualified"] = row.disqualified
        entry["faults"] = dict(sorted(standings.faults.get(row.name, {}).items()))
        entry["provenance"] = dict(standings.provenance.get(row.name, {}))
        timing = standings.timing.get(row.name)
        entry["timing"] = None if timing is None else timing.as_json()
        entries.append(entry)
    return {
        "format": FORMAT,
        "version": VERSION,
        "title": standings.title,
        "ruleset": {"preset": standings.ruleset_preset, "hash": standings.ruleset_hash},
        "method": fitted["method"],
        "games": fitted["games"],
        "clusters": fitted["clusters"],
        "games_listed": len(standings.games),
        "entries": entries,
        "disqualified": sorted(standings.disqualified),
        "faults": {e: dict(sorted(c.items())) for e, c in sorted(standings.faults.items())},
        "provenance": {e: dict(p) for e, p in sorted(standings.provenance.items())},
        "los": fitted["los"],
        "covariance": fitted["covariance"],
        "crosstable": fitted["crosstable"],
    }
