"""The standings book's memory is per pair of versions, not per game (issue 44), with the same standings.

Before this (the main branch) the book and its running fit kept every game
(the book a ``StoredGame`` per game and every game id; the fit each cluster's
games): a ladder's memory grew with its history.  Now a complete duplicate
pair is folded into its two versions' sums and forgotten; a pair voided later
is read back from the store.  ``standings_history.json`` is a ladder history
(1,200 games, voids, a pair voided while open and one long complete, an
expunged version, a late copy) with what the book that kept every game said
after each step: the book must still say exactly that.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from standings_support import game, random_ladder

from arena.ladder.games.standings import ClusterSet, StandingsBook
from arena.results.store import StoredGame

HISTORY = Path(__file__).with_name("standings_history.json")


def _recorded() -> tuple[dict[str, Any], list[StoredGame]]:
    data = json.loads(HISTORY.read_text())
    games = []
    for seq, table, side0, side1, score0, score1, hands, ending in data["games"]:
        g = game(seq, table, side0, side1, score0, score1, hands=hands)
        games.append(g if ending == g.ending else StoredGame(**{**g.__dict__, "ending": ending}))
    return data, games


def _snapshot(book: StandingsBook, names: list[str]) -> dict[str, Any]:
    fitted = book.ratings()
    return {
        "games": book.games,
        "standings": [s.to_dict() for s in book.standings(names)],
        "pairs_played": sorted([sorted(k) + [n] for k, n in book.pairs_played().items()]),
        "method": None if fitted is None else [fitted.error_method, fitted.error_note, fitted.games, fitted.clusters],
        "rated": None if fitted is None else {n: [r.elo, r.se] for n, r in sorted(fitted.rated.items())},
    }


def _replay(data: dict[str, Any], games: list[StoredGame], lookup: Callable[[str], Iterable[StoredGame]] | None):
    book: StandingsBook | None = None
    snapshots = []
    for step in data["steps"]:
        kind = step[0]
        if kind == "start":
            book = StandingsBook(games[: step[1]], excluded_clusters=step[2], expunged=step[3], cluster_games=lookup)
        elif kind == "add":
            book.add(games[step[1]])  # type: ignore[union-attr]
        elif kind == "exclude":
            book.exclude_cluster(step[1])  # type: ignore[union-attr]
        elif kind == "expunge":
            book.expunge(step[1])  # type: ignore[union-attr]
        else:
            snapshots.append(_snapshot(book, data["names"]))  # type: ignore[arg-type]
    return book, snapshots


def _assert_same(got: Any, want: Any, where: str) -> None:
    if isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-7), where
    elif isinstance(want, dict):
        assert set(got) == set(want), where
        for key in want:
            _assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            _assert_same(g, w, f"{where}[{k}]")
    else:
        assert got == want, where


@pytest.mark.parametrize("reads_back", [True, False], ids=["folding-pairs", "keeping-games"])
def test_the_book_says_what_the_book_that_kept_every_game_said_on_a_recorded_history(reads_back: bool) -> None:
    data, games = _recorded()
    by_cluster: dict[str, list[StoredGame]] = {}
    for g in games:
        by_cluster.setdefault(g.cluster, []).append(g)
    asked: list[str] = []

    def lookup(cluster: str) -> list[StoredGame]:
        asked.append(cluster)
        return by_cluster.get(cluster, [])

    book, snapshots = _replay(data, games, lookup if reads_back else None)
    assert len(snapshots) == len(data["snapshots"])
    for k, (got, want) in enumerate(zip(snapshots, data["snapshots"], strict=True)):
        _assert_same(got, want, f"snapshot {k}")
    if reads_back:  # a pair voided once complete was read back from the store; nothing else was
        assert asked == _voided_when_complete(data, games), asked


def _voided_when_complete(data: dict[str, Any], games: list[StoredGame]) -> list[str]:
    """The clusters the history voids after both their tables were added (the only ones to read back)."""
    added: dict[str, int] = {}
    found = []
    for step in data["steps"]:
        if step[0] == "start":
            for g in games[: step[1]]:
                added[g.cluster] = added.get(g.cluster, 0) + 1
        elif step[0] == "add":
            added[games[step[1]].cluster] = added.get(games[step[1]].cluster, 0) + 1
        elif step[0] == "exclude" and added.get(step[1], 0) >= 2:
            found.append(step[1])
    return found


def _book_bytes(pairs: int, reads_back: bool) -> int:
    """Bytes a book holds after ``pairs`` duplicate pairs of 12 versions were added to it (traced)."""
    names = [f"team{k}@1" for k in range(12)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        book = StandingsBook(cluster_games=(lambda cluster: []) if reads_back else None)
        for g in random_ladder(names, pairs, seed=3):
            book.add(g)
        book.standings(names)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert book.games == 2 * pairs
    return held


def test_the_books_memory_does_not_grow_with_the_games() -> None:
    small, large = _book_bytes(1_000, True), _book_bytes(10_000, True)
    kept_small, kept_large = _book_bytes(1_000, False), _book_bytes(10_000, False)
    print(f"book after 2,000 / 20,000 games: {small / 1024:.0f} / {large / 1024:.0f} KiB folding pairs, "
          f"{kept_small / 1024:.0f} / {kept_large / 1024:.0f} KiB keeping every game")  # fmt: skip
    assert large < small * 1.5 + 64 * 1024, f"{small} bytes at 2,000 games, {large} at 20,000"
    assert kept_large > 5 * kept_small  # (what it was: proportional to the games)


def test_a_cluster_set_keeps_consecutive_pairs_as_one_range() -> None:
    seen = ClusterSet()
    order = list(range(1, 2001))
    order[10], order[11] = order[11], order[10]  # out of order too
    for n in order:
        seen.add(f"L{n:07d}")
    assert len(seen) == 2000 and seen.pieces == 1
    assert "L0000001" in seen and "L0002000" in seen and "L0002001" not in seen and "L0000000" not in seen
    assert "L2000" not in seen  # another width: another name
    seen.add("L0002002")
    seen.add("odd-name")
    assert seen.pieces == 3 and "L0002001" not in seen and "odd-name" in seen
    seen.add("L0002001")
    assert seen.pieces == 2 and len(seen) == 2003
