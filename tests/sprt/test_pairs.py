"""Duplicate-pair statistics: pentanomial counts, pair score and points per table-hand, and the leaderboard columns."""

from __future__ import annotations

import math
import random
from html.parser import HTMLParser

import numpy as np
import pytest

from arena.publish import (
    GameRow,
    Standings,
    ratings_document,
    render_html,
    render_markdown,
    results_from_games,
)
from arena.ratings import fit
from arena.ratings.pairs import (
    PairGame,
    PairOutcome,
    entry_pairs,
    pair_score,
    pentanomial,
    pentanomial_index,
    points_per_hand,
    summarize,
)


def test_entry_pairs_from_a_small_tournament():
    games = [
        # Pair 1: A wins at both tables.
        PairGame("c1", "A", "B", 1.0, 510, 200, 10),
        PairGame("c1", "B", "A", 0.0, 300, 505, 12),
        # Pair 2: each side wins its strong hand.
        PairGame("c2", "A", "B", 1.0, 500, 450, 8),
        PairGame("c2", "B", "A", 1.0, 520, 100, 9),
        # Pair 3: a draw and a loss for A.
        PairGame("c3", "A", "B", 0.5, 300, 300, 20),
        PairGame("c3", "B", "A", 1.0, 501, 0, 15),
        # Only one table played: not a pair.
        PairGame("c4", "A", "B", 1.0, 500, 0, 7),
    ]
    stats = entry_pairs(games)
    a, b = stats["A"], stats["B"]
    assert a.pentanomial == (0, 1, 1, 0, 1) and b.pentanomial == (1, 0, 1, 1, 0)
    assert a.pairs == b.pairs == 3 and a.incomplete == b.incomplete == 1
    margins = [(510 - 200) + (505 - 300), (500 - 450) + (100 - 520), 0 + (0 - 501)]
    hands = [22, 17, 35]
    assert a.points_per_hand is not None and b.points_per_hand is not None
    assert a.points_per_hand.value == pytest.approx(sum(margins) / sum(hands))
    assert b.points_per_hand.value == pytest.approx(-sum(margins) / sum(hands))
    assert a.score is not None and a.score.value == pytest.approx((2 + 1 + 0.5) / 6)


def test_pentanomial_slots():
    assert [pentanomial_index(s) for s in (0, 0.5, 1, 1.5, 2)] == [0, 1, 2, 3, 4]
    for bad in (-0.5, 0.25, 2.5):
        with pytest.raises(ValueError):
            pentanomial_index(bad)
    assert pentanomial([PairOutcome(2.0), PairOutcome(1.0), PairOutcome(1.0)]) == (0, 0, 2, 0, 1)


def test_points_per_hand_matches_the_ratio_estimator_computed_with_numpy():
    rng = random.Random(4)
    outcomes = [PairOutcome(1.0, rng.gauss(30, 200), rng.randint(8, 30)) for _ in range(57)]
    m = np.array([o.margin for o in outcomes])
    h = np.array([o.hands for o in outcomes], dtype=float)
    r = m.sum() / h.sum()
    n = len(outcomes)
    se = np.sqrt(np.sum((m - r * h) ** 2) / (n * (n - 1))) / h.mean()
    got = points_per_hand(outcomes)
    assert got is not None
    assert got.value == pytest.approx(r, rel=1e-12)
    assert got.lower == pytest.approx(r - 1.96 * se, rel=1e-9)
    assert got.upper == pytest.approx(r + 1.96 * se, rel=1e-9)
    assert points_per_hand([]) is None and points_per_hand([PairOutcome(1.0, 5.0, 0)]) is None


def test_intervals_from_pairs_cover_the_truth_about_95_percent_of_the_time():
    # Pairs whose two games are strongly correlated (the same deal): a game-level interval would be too narrow.
    rng = random.Random(11)
    probs = [0.12, 0.03, 0.6, 0.05, 0.2]
    true_score = sum(p * k / 4 for k, p in enumerate(probs))
    true_pph = 15.0
    reps, n = 600, 80
    hit_score = hit_points = 0
    for _ in range(reps):
        outs = []
        for _ in range(n):
            k = rng.choices(range(5), weights=probs)[0]
            hands = rng.randint(14, 26)
            outs.append(PairOutcome(k / 2, rng.gauss(true_pph * hands, 150), hands))
        s = summarize(outs)
        assert s.score is not None and s.points_per_hand is not None
        hit_score += s.score.lower <= true_score <= s.score.upper
        hit_points += s.points_per_hand.lower <= true_pph <= s.points_per_hand.upper
    sd = math.sqrt(0.95 * 0.05 / reps)
    for hits in (hit_score, hit_points):
        assert abs(hits / reps - 0.95) < 4 * sd, hits / reps


def test_pair_score_and_elo_of_a_clean_sweep():
    s = summarize([PairOutcome(2.0, 300.0, 20)] * 5)
    assert s.score is not None and s.score.value == 1.0
    assert s.elo is not None and s.elo.value == math.inf
    assert s.to_dict()["elo"] == {"value": None, "lower": None, "upper": None}
    assert pair_score([0, 0, 0, 0, 0]) is None


def _standings() -> Standings:
    games = []
    rng = random.Random(5)
    for k in range(12):
        for first, second in (("strong", "weak"), ("weak", "strong")):
            strong_wins = rng.random() < 0.8
            winner_is_first = strong_wins == (first == "strong")
            pts = (500, 120) if winner_is_first else (140, 510)
            games.append(
                GameRow(
                    f"g{k}-{first}",
                    first,
                    second,
                    1.0 if winner_is_first else 0.0,
                    "target",
                    f"c{k}",
                    *pts,
                    12,
                )
            )
    return Standings(
        "pairs", "pagat", "h" * 64, ["strong", "weak"], results_from_games(games), games
    )


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[str, dict[str, str]] = {}
        self._row: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-entry" in a:
            self._row = a["data-entry"]
        if tag == "td" and self._row and a.get("class") in ("pentanomial", "points"):
            self.cells.setdefault(self._row, {})[a["class"]] = (
                a.get("data-counts") or a.get("data-value") or ""
            )


def test_leaderboard_shows_pentanomial_and_points_per_hand_in_every_format():
    standings = _standings()
    ratings = fit(standings.results)
    stats = entry_pairs(
        PairGame(g.cluster, g.entry_a, g.entry_b, g.score, g.scores_a, g.scores_b, g.hands)
        for g in standings.games
    )
    strong = stats["strong"]
    assert strong.points_per_hand is not None
    counts = "-".join(map(str, strong.pentanomial))

    md = render_markdown(standings, ratings)
    assert "Pairs 0-½-1-1½-2" in md and "Pts/hand" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| 1 | strong"))
    assert (
        counts in row
        and f"{strong.points_per_hand.value:+.1f} ± {strong.points_per_hand.margin:.1f}" in row
    )

    parser = _Cells()
    parser.feed(render_html(standings, ratings))
    assert parser.cells["strong"]["pentanomial"] == " ".join(map(str, strong.pentanomial))
    assert float(parser.cells["strong"]["points"]) == strong.points_per_hand.value

    doc = ratings_document(standings, ratings)
    entry = next(e for e in doc["entries"] if e["name"] == "strong")
    assert entry["pairs"]["pentanomial"] == list(strong.pentanomial)
    assert entry["pairs"]["points_per_hand"]["value"] == strong.points_per_hand.value
