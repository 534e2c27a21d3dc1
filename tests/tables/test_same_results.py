"""The run loop plays what the runners played before it: the same game ids, deals and results on the same seeds.

The golden files were written by the round-3 runners (commit c2fdf61, before the
run loop and the ledger) from exactly these commands and the tests' run secret
(``ARENA_RUN_SECRET`` from conftest.py): every row's game id, deal seed, sides,
scores, winner, ending and hands.  Bots are the example bots, seeded by the run,
so a game is the same game whichever runner schedules it.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[1] / "example_bots"

TOURNAMENT = """\
[tournament]
name = "golden"
seed = "golden-2026"
deals_per_pairing = 2
concurrency = 2

[rules]
preset = "pagat"
set = {{ max_hands = 3 }}

[[entry]]
name = "heuristic"
bot = "cmd:{python} {examples}/heuristic/bot.py"

[[entry]]
name = "greedy"
bot = "cmd:{python} {examples}/greedy/bot.py"

[[entry]]
name = "random"
bot = "cmd:{python} {examples}/random/bot.py"
"""


def rows(store: Path) -> list[list[object]]:
    with sqlite3.connect(store) as db:
        found = db.execute(
            "SELECT game_id, deal_seed, side0, side1, score0, score1, winner, ending, hands FROM games ORDER BY game_id"
        ).fetchall()
    return [list(r) for r in found]


@pytest.mark.timeout(600)
def test_a_tournament_plays_the_same_games_as_before_the_run_loop(run_cli, tmp_path: Path):
    (tmp_path / "t.toml").write_text(TOURNAMENT.format(examples=EXAMPLES, python=sys.executable))
    done = run_cli("tournament", "run", "t.toml", "--out", "out", "--no-show", timeout=600)
    assert done.returncode == 0, done.stderr
    assert rows(tmp_path / "out" / "results.sqlite") == json.loads((HERE / "golden" / "round-robin.json").read_text())


@pytest.mark.timeout(600)
def test_an_sprt_plays_the_same_pairs_as_before_the_run_loop(run_cli, tmp_path: Path):
    done = run_cli(
        "sprt", "--bot", f"cmd:{sys.executable} {EXAMPLES}/heuristic/bot.py", "--bot", f"cmd:{sys.executable} {EXAMPLES}/random/bot.py",
        "--elo0", "0", "--elo1", "50", "--max-pairs", "6", "--seed", "golden", "--set", "max_hands=3",
        "--out", "out", "--concurrency", "2", timeout=600,
    )  # fmt: skip
    assert done.returncode == 4 and "inconclusive" in done.stdout, done.stderr  # 6 pairs decide nothing
    assert rows(tmp_path / "out" / "results.sqlite") == json.loads((HERE / "golden" / "sprt.json").read_text())
