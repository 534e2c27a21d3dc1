"""A sample tournament to publish, with hostile entry names."""

from __future__ import annotations

import math
import random

from arena.publish import GameRow, Standings, results_from_games

HOSTILE = "<script>alert(1)</script>"
QUOTES = "\"quoted' & <b>bold</b>"
MARKUP = "[bold red]rich[/] | pipe"
STRENGTHS = {"alpha": 1700.0, HOSTILE: 1600.0, "gamma": 1500.0, QUOTES: 1420.0, MARKUP: 1300.0}
UNPLAYED = "late-entry"


def sample_standings(pairs_per_pairing: int = 8, seed: int = 3) -> Standings:
    """A duplicate round robin among ``STRENGTHS`` plus one entry with no game, a void game,
    faults, a disqualification and provenance."""
    rng = random.Random(seed)
    names = list(STRENGTHS)
    games: list[GameRow] = []
    n = 0
    for x, a in enumerate(names):
        for b in names[x + 1 :]:
            p = 1 / (1 + 10 ** (-(STRENGTHS[a] - STRENGTHS[b]) / 400))
            for k in range(pairs_per_pairing):
                cluster = f"pair-{x}-{names.index(b)}-{k}"
                for first, second in ((a, b), (b, a)):
                    u = rng.random()
                    pa = p if first == a else 1 - p
                    score = 0.5 if u < 0.05 else (1.0 if u < 0.05 + 0.95 * pa else 0.0)
                    n += 1
                    pts_a = (
                        500 if score == 1.0 else 250 if score == 0.5 else int(200 * rng.random())
                    )
                    pts_b = (
                        500 if score == 0.0 else 250 if score == 0.5 else int(200 * rng.random())
                    )
                    games.append(
                        GameRow(f"g{n:04d}", first, second, score, "target", cluster, pts_a, pts_b)
                    )
    games.append(GameRow("g-void", "alpha", "gamma", 1.0, "void:docker", "pair-void", 0, 0))
    return Standings(
        title="Spring <Cup> & friends",
        ruleset_preset="pagat",
        ruleset_hash="sha256:" + "ab12" * 16,
        entries=[*names, UNPLAYED],
        results=results_from_games(games),
        games=games,
        faults={MARKUP: {"timeout": 3, "illegal": 1}, "gamma": {"crash": 1}},
        disqualified={MARKUP},
        provenance={
            name: {
                "image_id": f"sha256:{k:064x}",
                "sdk_version": "0.1.0",
                "engine_version": "0.1.0",
            }
            for k, name in enumerate(names)
        },
    )


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-9)
