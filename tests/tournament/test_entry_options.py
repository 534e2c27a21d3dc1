"""Entry options of the tournament file (env, opponents), name-based deal seeds, early disqualification."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament import ConfigError, load_config, schedule

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"

HEAD = """
[tournament]
name = "t"
seed = "entry-options"
deals_per_pairing = 1
concurrency = 1
output = "out"

[rules]
preset = "pagat"
set = { max_hands = 2 }
"""


def entry(name: str, bot: str, extra: str = "") -> str:
    return f'\n[[entry]]\nname = "{name}"\nbot = "cmd:python {BOTS / bot / "bot.py"}"\n{extra}\n'


def write(tmp: Path, text: str) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "t.toml"
    path.write_text(text)
    return path


def test_env_reaches_the_bot_spec(tmp_path):
    env = 'env = { ARENA_HOSTILE = "slow", OTHER = "1" }'
    text = HEAD + entry("random", "random", env) + entry("greedy", "greedy")
    config = load_config(write(tmp_path, text))
    assert config.entries[0].bot.env == (("ARENA_HOSTILE", "slow"), ("OTHER", "1"))
    assert config.entries[1].bot.env == ()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('env = { ARENA_TOKEN = "x" }', "env: 'ARENA_TOKEN' cannot be set"),
        ("env = { N = 3 }", "env.N must be text"),
        ('env = "x"', "env must be a table"),
        ('opponents = ["nobody"]', "opponents: 'nobody' is not another entry"),
        ('opponents = ["random"]', "opponents: 'random' is not another entry"),
        ("opponents = []", "opponents must be a non-empty list"),
    ],
)
def test_bad_entry_options_are_refused(tmp_path, extra, message):
    text = HEAD + entry("random", "random", extra) + entry("greedy", "greedy")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(write(tmp_path, text))


def test_opponents_limit_the_pairings(tmp_path):
    text = (
        HEAD + entry("random", "random") + entry("greedy", "greedy")
        + entry("new1", "heuristic", 'opponents = ["random", "greedy"]')
        + entry("new2", "heuristic", 'opponents = ["random"]')
    )  # fmt: skip
    games = schedule(load_config(write(tmp_path, text)))
    pairs = sorted({(g.pairing, frozenset((g.side0, g.side1))) for g in games}, key=lambda p: p[0])
    assert [set(p) for _, p in pairs] == [
        {"random", "greedy"}, {"random", "new1"}, {"random", "new2"}, {"greedy", "new1"},
    ]  # fmt: skip
    assert [p for p, _ in pairs] == [0, 1, 2, 3], "pairing numbers stay contiguous"


def test_a_pairings_deals_do_not_depend_on_the_other_entries(tmp_path):
    pair = HEAD + entry("random", "random") + entry("greedy", "greedy")
    two = schedule(load_config(write(tmp_path / "a", pair)))
    more = HEAD + entry("heuristic", "heuristic") + entry("greedy", "greedy") + entry("random", "random")
    three = schedule(load_config(write(tmp_path / "b", more)))

    def seeds(games):
        return {g.deal_seed for g in games if {g.side0, g.side1} == {"random", "greedy"}}

    assert seeds(two) and seeds(two) == seeds(three)
    assert len({g.deal_seed for g in three}) == 3, "each pairing its own deals"


def test_an_entry_is_disqualified_during_the_run_and_its_later_tables_never_start(tmp_path):
    crasher = tmp_path / "crash.py"
    crasher.write_text("import sys\nsys.exit(3)\n")
    text = (
        HEAD.replace("[rules]", "[faults]\ndisqualify_min_games = 2\ndisqualify_share = 0.5\n\n[rules]")
        + entry("heuristic", "heuristic") + entry("greedy", "greedy")
        + f'\n[[entry]]\nname = "crash"\nbot = "cmd:python {crasher}"\n'
    )  # fmt: skip
    path = write(tmp_path, text)
    result = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--json", "--no-show"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["unfinished"] == []
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        rows = dict(db.execute("SELECT game_id, ending FROM games").fetchall())
        disqualified = dict(db.execute("SELECT entry, reason FROM disqualified").fetchall())
    # Tables start in schedule order (one at a time here): heuristic-greedy, heuristic-crash, greedy-crash.
    assert rows["p001-d000-t1"] == rows["p001-d000-t2"] == "forfeit:crash"
    assert disqualified == {"crash": "forfeited 2 of 2 games"}
    assert rows["p002-d000-t1"] == rows["p002-d000-t2"] == "forfeit:disqualified"
    logs = tmp_path / "out" / "logs"
    assert not (logs / "p002-t1").exists() and not (logs / "p002-t2").exists(), "never started"
