"""The schedule: round robin over all pairings, each as two duplicate tables.

A pairing (A, B) plays ``deals_per_pairing`` deals twice: table 1 with A as
the first side (N/S, or player A) and table 2 with B there, on separate bot
processes or containers, at the same time.  Game ids and deal seeds are
derived from (tournament seed, pairing, deal index), so the same file always
gives the same schedule and deals.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools

from arena.tournament.config import TournamentConfig


@dataclasses.dataclass(frozen=True)
class ScheduledGame:
    """One game of the tournament."""

    game_id: str
    pairing: int
    deal: int
    table: int
    """1: the pairing's first entry is side 0; 2: the second entry is."""
    side0: str
    side1: str
    deal_seed: str

    @property
    def cluster(self) -> str:
        """The duplicate pair this game belongs to (same deal, sides swapped)."""
        return f"p{self.pairing:03d}-d{self.deal:03d}"


@dataclasses.dataclass(frozen=True)
class Table:
    """One sitting: fixed seats playing a list of games."""

    table_id: str
    side0: str
    side1: str
    games: tuple[ScheduledGame, ...]


def deal_seed(tournament_seed: str, pairing: int, deal: int) -> str:
    """The deal seed of one deal of one pairing: a one-way hash of the tournament seed."""
    text = f"{tournament_seed}/pairing/{pairing}/deal/{deal}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def schedule(config: TournamentConfig) -> list[ScheduledGame]:
    """Every game of the tournament, in a fixed order."""
    names = [e.name for e in config.entries]
    games = []
    for pairing, (a, b) in enumerate(itertools.combinations(names, 2)):
        for deal in range(config.deals_per_pairing):
            seed = deal_seed(config.seed, pairing, deal)
            for table, (s0, s1) in ((1, (a, b)), (2, (b, a))):
                games.append(
                    ScheduledGame(
                        game_id=f"p{pairing:03d}-d{deal:03d}-t{table}",
                        pairing=pairing,
                        deal=deal,
                        table=table,
                        side0=s0,
                        side1=s1,
                        deal_seed=seed,
                    )
                )
    return games


def tables(games: list[ScheduledGame]) -> list[Table]:
    """Group games into tables (pairing, table number), keeping their order.

    The two tables of a pairing come next to each other so that running
    tables in order with concurrency >= 2 plays them at the same time.
    """
    grouped: dict[tuple[int, int], list[ScheduledGame]] = {}
    for game in games:
        grouped.setdefault((game.pairing, game.table), []).append(game)
    return [
        Table(f"p{p:03d}-t{t}", gs[0].side0, gs[0].side1, tuple(gs))
        for (p, t), gs in sorted(grouped.items())
    ]
