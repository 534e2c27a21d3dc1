"""The schedule: round robin over all pairings, each as two duplicate tables.

A pairing (A, B) plays ``deals_per_pairing`` deals twice: table 1 with A as
the first side (N/S, or player A) and table 2 with B there, on separate bot
processes or containers, at the same time.  Game ids come from (pairing
index, deal index); deal seeds from (the run's secret, the tournament seed,
the two entry names, deal index), so the same file and results store always
give the same schedule and deals, and the deals of A against B do not change
when other entries join or leave.  The pairing numbers in the game ids are
the results store's (:meth:`~arena.results.store.ResultsStore.pairing_numbers`):
given once per pair of names, so entries added to a started tournament get new
numbers and never renumber the games already stored.  Without a store they
are the pairings' places in the schedule (what a new store gives them too).

An entry whose image was rebuilt plays as a new version, ``name@2``
(``labels``): its pairings are new ones, on the same deals as the first
version's (the seeds use the entry names, not the versions).

An entry with ``opponents`` plays only those entries (a gauntlet against a
reference pool); without it, everyone plays everyone.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping

from arena.match.seeds import derive_seed
from arena.tables.rows import GameSlot
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

    @property
    def slot(self) -> GameSlot:
        """Where the game sits in the run, as the table kernel stores it."""
        return GameSlot(
            self.game_id, self.pairing, self.deal, self.table, self.cluster, self.side0, self.side1, self.deal_seed
        )


@dataclasses.dataclass(frozen=True)
class Table:
    """One sitting: fixed seats playing a list of games."""

    table_id: str
    side0: str
    side1: str
    games: tuple[ScheduledGame, ...]


def deal_seed(tournament_seed: str, entry_a: str, entry_b: str, deal: int, secret: str | None = None) -> str:
    """The deal seed of one deal of the pairing of two entries (:func:`arena.match.seeds.derive_seed`).

    Keyed by the run's ``secret`` (kept in its results store), so a bot that
    guesses the tournament seed still cannot compute the deals.  It depends on
    the two names (in either order), not on the pairing's place in the
    schedule, so adding or removing other entries leaves the deals of this
    pairing unchanged.
    """
    return derive_seed(secret, tournament_seed, sorted((entry_a, entry_b)), deal)


def pairings(config: TournamentConfig) -> list[tuple[str, str]]:
    """The pairings played, in entry order: all of them, less those an entry's ``opponents`` excludes."""
    allowed = {e.name: e.opponents for e in config.entries}

    def plays(a: str, b: str) -> bool:
        return (allowed[a] is None or b in allowed[a]) and (allowed[b] is None or a in allowed[b])

    names = [e.name for e in config.entries]
    return [(a, b) for a, b in itertools.combinations(names, 2) if plays(a, b)]


#: Between an entry's name and its version in a label (``name@2``); never in an entry name.
VERSION_MARK = "@"


def entry_of(label: str) -> str:
    """The entry name of a label: ``name@2`` -> ``name``."""
    return label.split(VERSION_MARK, 1)[0]


def labelled_pairings(config: TournamentConfig, labels: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """:func:`pairings` with each entry under its label (its current version)."""
    labels = labels or {}
    return [(labels.get(a, a), labels.get(b, b)) for a, b in pairings(config)]


def schedule(
    config: TournamentConfig,
    secret: str | None = None,
    numbers: Mapping[tuple[str, str], tuple[int, str, str]] | None = None,
    labels: Mapping[str, str] | None = None,
) -> list[ScheduledGame]:
    """Every game of the tournament, in a fixed order (deal seeds keyed by the run's ``secret``).

    ``numbers``: each labelled pairing's number and order in the results
    store (default: its place in the schedule); ``labels``: the entries'
    current versions (default: their names).
    """
    games = []
    placed = []
    for place, (a, b) in enumerate(labelled_pairings(config, labels)):
        placed.append(numbers[(a, b)] if numbers is not None else (place, a, b))
    for pairing, a, b in sorted(placed):
        for deal in range(config.deals_per_pairing):
            seed = deal_seed(config.seed, entry_of(a), entry_of(b), deal, secret)
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
        Table(table_id(p, t), gs[0].side0, gs[0].side1, tuple(gs))
        for (p, t), gs in sorted(grouped.items())
    ]


def table_id(pairing: int, table: int) -> str:
    """A table's id (and its log directory's name under ``OUTPUT/logs``): ``p003-t1``."""
    return f"p{pairing:03d}-t{table}"
