"""Stored games for the standings and export tests: duplicate pairs as the ladder stores them."""

from __future__ import annotations

import random
from collections.abc import Iterator

from arena.results.store import StoredGame


def game(seq: int, table: int, side0: str, side1: str, score0: int, score1: int, *, hands: int = 8) -> StoredGame:
    """One table of the ladder's pair ``seq`` (its cluster ``L{seq:07d}``, as the service names them)."""
    winner = side0 if score0 > score1 else side1 if score1 > score0 else None
    return StoredGame(
        game_id=f"L{seq:07d}-t{table}", pairing=seq, deal=seq, table_no=table, cluster=f"L{seq:07d}",
        side0=side0, side1=side1, deal_seed="0" * 16, ending="target", winner=winner,
        score0=score0, score1=score1, hands=hands, forfeit_entry=None, forfeit_reason=None,
        forfeit_detail=None, strikes0=0, strikes1=0, decisions=100, think_seconds=1.0,
        ruleset_hash="r", engine_version="e", sdk_version="s", image0=None, image1=None,
        record=None, finished_at="2026-12-06T00:00:00Z",
    )  # fmt: skip


def pair(seq: int, a: str, b: str, a_wins: int) -> list[StoredGame]:
    """A duplicate pair: ``a`` wins ``a_wins`` (0, 1 or 2) of its two tables (sides swapped at table 2)."""
    first = (300, 120) if a_wins >= 1 else (120, 300)  # a sits first at table 1
    second = (150, 300) if a_wins == 2 else (300, 150)  # b sits first at table 2
    return [game(seq, 1, a, b, *first), game(seq, 2, b, a, *second)]


def random_ladder(names: list[str], pairs: int, *, seed: int, strengths: dict[str, float] | None = None) -> Iterator[StoredGame]:
    """``pairs`` duplicate pairs between random pairings of ``names`` (stronger names win more)."""
    rng = random.Random(seed)
    strength = strengths or {n: 0.0 for n in names}
    for seq in range(1, pairs + 1):
        a, b = rng.sample(names, 2)
        p = 1.0 / (1.0 + 10 ** ((strength[b] - strength[a]) / 400.0))
        wins = (rng.random() < p) + (rng.random() < p)
        yield from pair(seq, a, b, wins)
