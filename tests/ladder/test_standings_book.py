"""The ladder's one definition of the standings, kept incrementally (issues 32 and 36)."""

from __future__ import annotations

import random

import pytest
from standings_support import pair, random_ladder

from arena.ladder.games.standings import StandingsBook, standings
from arena.ratings import Result, fit

NAMES = ["alpha@1", "beta@1", "gamma@1", "delta@1", "eps@1"]
STRENGTH = {"alpha@1": 120.0, "beta@1": 60.0, "gamma@1": 0.0, "delta@1": -60.0, "eps@1": -120.0}


def as_results(games):  # the games as arena.ratings.fit reads them
    return [
        Result(g.side0, g.side1, 0.5 if g.winner is None else float(g.winner == g.side0), g.cluster)
        for g in games
    ]


def test_the_book_is_the_fit_of_every_stored_game() -> None:
    games = list(random_ladder(NAMES, 300, seed=1, strengths=STRENGTH))
    rows = StandingsBook(games).standings(NAMES)
    full = fit(as_results(games))
    assert [r.entry for r in rows] == full.names
    for r in rows:
        p = full[r.entry]
        assert r.elo == pytest.approx(p.elo, abs=1e-6)
        assert (r.low, r.high) == (pytest.approx(p.lower, abs=1e-6), pytest.approx(p.upper, abs=1e-6))
        assert r.games == p.record.games
        assert r.pairs == len({g.cluster for g in games if r.entry in (g.side0, g.side1)})
    assert [r.rank for r in rows] == [1, 2, 3, 4, 5]


def test_games_added_one_by_one_in_any_order_give_the_same_standings() -> None:
    games = list(random_ladder(NAMES, 200, seed=2, strengths=STRENGTH))
    at_once = StandingsBook(games).standings(NAMES)
    shuffled = games[:]
    random.Random(3).shuffle(shuffled)
    book = StandingsBook()
    for g in shuffled:
        book.add(g)
        book.add(g)  # a second copy of a stored game is not counted twice
    for a, b in zip(book.standings(NAMES), at_once, strict=True):
        assert a.entry == b.entry and a.pairs == b.pairs and a.games == b.games
        assert a.elo == pytest.approx(b.elo, abs=1e-6) and a.high == pytest.approx(b.high, abs=1e-6)
        assert a.points_per_hand == pytest.approx(b.points_per_hand)


def test_a_disabled_teams_games_stay_in_everyones_ratings() -> None:
    """Issue 32: a team went from 11 pairs to 1 when another was disabled (its games left the fit)."""
    games = []
    seq = 0
    for k in range(10):
        seq += 1
        games += pair(seq, "alpha@1", "gamma@1", k % 3)
    for k in range(4):
        seq += 1
        games += pair(seq, "beta@1", "gamma@1", k % 3)
    seq += 1
    games += pair(seq, "alpha@1", "beta@1", 2)
    listed = ["alpha@1", "beta@1"]  # gamma's team is disabled: not listed, its games kept
    rows = {r.entry: r for r in standings(games, listed)}
    assert set(rows) == set(listed)
    assert rows["alpha@1"].pairs == 11 and rows["beta@1"].pairs == 5
    assert rows["alpha@1"].games == 22
    everyone = {r.entry: r for r in standings(games, [*listed, "gamma@1"])}
    for name in listed:  # listing decides the rows, never the fit
        assert rows[name].elo == everyone[name].elo and rows[name].high == everyone[name].high
    assert [r.rank for r in standings(games, listed)] == [1, 2]


def test_a_voided_pairs_stored_half_leaves_the_fit() -> None:
    games = list(random_ladder(NAMES, 120, seed=4, strengths=STRENGTH))
    voided = games[10].cluster
    book = StandingsBook(games)
    book.exclude_cluster(voided)
    without = [g for g in games if g.cluster != voided]
    expected = StandingsBook(without).standings(NAMES)
    assert book.standings(NAMES) == expected
    assert book.games == len(without)
    late = StandingsBook([g for g in games if g.game_id != games[11].game_id], excluded_clusters=[voided])
    late.add(games[11])  # the pair's other half arriving after the void stays out too
    assert late.standings(NAMES) == expected


def test_expunged_versions_leave_everyones_ratings_on_request_only() -> None:
    games = list(random_ladder(NAMES, 150, seed=5, strengths=STRENGTH))
    kept = [g for g in games if "eps@1" not in (g.side0, g.side1)]
    book = StandingsBook(games)
    book.expunge("eps@1")
    expected = StandingsBook(kept).standings(NAMES)
    assert book.standings(NAMES) == expected
    assert StandingsBook(games, expunged=["eps@1"]).standings(NAMES) == expected
    assert standings(games, NAMES, expunged=["eps@1"]) == expected
    eps = next(r for r in expected if r.entry == "eps@1")
    assert eps.elo is None and eps.pairs == 0 and eps.games == 0


def test_versions_not_yet_linked_are_listed_unrated_and_pairs_are_counted_for_matchmaking() -> None:
    games = pair(1, "alpha@1", "beta@1", 2) + pair(2, "gamma@1", "delta@1", 1) + pair(3, "alpha@1", "beta@1", 1)
    book = StandingsBook(games)
    rows = {r.entry: r for r in book.standings(["alpha@1", "beta@1", "gamma@1", "new@1"])}
    assert rows["alpha@1"].rank is not None and rows["beta@1"].rank is not None
    assert rows["gamma@1"].elo is None and rows["new@1"].elo is None and rows["new@1"].pairs == 0
    assert book.pairs_played() == {frozenset({"alpha@1", "beta@1"}): 2, frozenset({"gamma@1", "delta@1"}): 1}
