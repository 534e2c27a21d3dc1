"""The ladder's leaderboard from its stores: every stored game, the pairs the ladder gave up left out.

One definition, read by the loop (at its start), the site's ``arena ladder
show``, the grading export and the rehearsal: :func:`ladder_book` folds the
stored games into a :class:`~arena.ladder.games.standings.StandingsBook`
with the voided pairs' halves excluded; :func:`ladder_standings` lists the
active versions of enabled teams from it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable
from typing import Protocol

from arena.ladder.games.ids import pair_cluster
from arena.ladder.games.standings import Standing, StandingsBook
from arena.ladder.versions.store import Version
from arena.results.store import ResultsStore, StoredGame


class _GameTables(Protocol):
    def legacy_void_pairs(self) -> list[int]: ...


class _Listed(_GameTables, Protocol):
    def active_versions(self) -> list[Version]: ...


def voided_clusters(store: _GameTables, results: ResultsStore) -> set[str]:
    """The clusters of the pairs the ladder gave up (void or abandoned): their stored halves leave the fit.

    The run's ledger keeps them in ``results.sqlite``; a ladder from before it kept its
    pairs in ``ladder.sqlite``, whose voided ones count too.
    """
    found = {pair_cluster(seq) for seq in store.legacy_void_pairs()}
    with contextlib.suppress(sqlite3.OperationalError):  # a results store from before the ledger, read-only
        found |= results.void_clusters()
    return found


def ladder_book(
    store: _GameTables, results: ResultsStore, games: Iterable[StoredGame], expunged: Iterable[str] = ()
) -> StandingsBook:
    """The standings' counts for a ladder: ``games`` with the ladder's voided pairs excluded.

    A pair complete is folded into its versions' sums and forgotten (the book's memory
    does not grow with the games); a pair voided later is read back from ``results``.
    """

    def pair_games(cluster: str) -> list[StoredGame]:
        return [g for g in (results.game(f"{cluster}-t{table}") for table in (1, 2)) if g is not None]

    return StandingsBook(games, excluded_clusters=voided_clusters(store, results), expunged=expunged,
                         cluster_games=pair_games)  # fmt: skip


def ladder_standings(
    store: _Listed, results: ResultsStore, games: Iterable[StoredGame], expunged: Iterable[str] = ()
) -> list[Standing]:
    """The ladder's leaderboard (what the site, ``arena ladder show`` and the export show)."""
    listed = [v.entry for v in store.active_versions()]
    return ladder_book(store, results, games, expunged).standings(listed)


__all__ = ["ladder_book", "ladder_standings", "voided_clusters"]
