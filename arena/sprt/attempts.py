"""What one start of a batch's tables did to its pairs: why each unfinished pair is unfinished, what to void.

A batch's tables play its pairs' deals in order (:mod:`arena.tables.pairs`).
When one ends with some of its games not stored, each pair left unfinished
gets a line that says what happened at each missing table (kept with the pair
in the store, and quoted if the pair is given up), and the game a failed
table was at is voided (its attempt counts in the voids table, as a
tournament's does).  Nothing here writes: the runner does, through the ledger.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

from arena.tables.pairs import PairBatch
from arena.tables.spec import TableResult


@dataclasses.dataclass(frozen=True)
class Unfinished:
    """What a start left: each unfinished pair's reason, and the games to void."""

    reasons: dict[int, str]
    """Pair -> what happened to it at each of its missing tables (``; ``-joined)."""
    voids: list[tuple[str, str]]
    """(game id, void reason) of the game each failed table was at when it failed."""
    untried: set[int]
    """Pairs no table reached (each failed at an earlier pair's game): their start does not count."""


def unfinished(
    batch: PairBatch,
    tables: Iterable[int],
    results: Mapping[int, TableResult],
    void_games: Mapping[str, str],
    stored: Callable[[str], bool],
) -> Unfinished:
    """Why ``batch``'s pairs are not complete after its ``tables`` ended with ``results``.

    ``void_games``: the games a table reported void (game id -> the void's
    ending); ``stored``: whether a game is stored now.
    """
    reasons: dict[int, list[str]] = {}
    voids: list[tuple[str, str]] = []
    tried: set[int] = set()
    for table in tables:
        result = results.get(table)
        error = "its process ended without a result" if result is None else result.error
        sent = set() if result is None else {game.game_id for game in result.games}
        failed_at: str | None = None
        for pair, game_id in zip(batch.pairs, batch.game_ids[table - 1], strict=True):
            if stored(game_id):
                continue
            if failed_at is not None:
                why = f"table {table} failed before reaching it, at {failed_at} ({error})"
            elif game_id in void_games:
                why = f"its game at table {table} was void ({void_games[game_id]})"
            elif error is None:
                why = f"table {table} ended without playing its game"
            else:
                failed_at = game_id
                why = f"table {table} failed ({error})"
                if game_id not in sent:
                    voids.append((game_id, f"void:platform: {error}"))
            if failed_at is None or failed_at == game_id:
                tried.add(pair)
            reasons.setdefault(pair, []).append(why)
    return Unfinished({pair: "; ".join(lines) for pair, lines in reasons.items()}, voids, set(reasons) - tried)


__all__ = ["Unfinished", "unfinished"]
