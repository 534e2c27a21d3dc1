"""example_bots/learned: the shipped policy loads and plays as an ordinary bot, locally, through the
referee (`arena match run`) and in a tournament; its trainer runs; bad policy files are refused clearly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from learn_support import RULESETS, short
from tournament_support import arena, stored_rows

from arena_sdk.testing import load_bot, play_game

REPO = Path(__file__).resolve().parents[2]
LEARNED = REPO / "example_bots" / "learned"
BOT = f"cmd:{sys.executable} {LEARNED / 'bot.py'}"


@pytest.fixture(scope="module")
def learned_modules():
    """The example's own modules (policy.py, bot.py), imported the way bot.py imports them."""
    cls = load_bot(f"{LEARNED / 'bot.py'}:LearnedBot")
    policy = sys.modules["policy"]
    return cls, policy


@pytest.mark.parametrize("rules_name", ["pagat", "wikipedia", "cards4", "two-player"])
def test_the_shipped_policy_plays_whole_games_in_every_preset(learned_modules, rules_name):
    cls, _ = learned_modules
    rules = short(RULESETS[rules_name], hands=3)
    opponent = "easy"
    result = play_game([cls, opponent], rules, seed=17)  # strict: an illegal answer would raise
    assert result.names[0] == "learned" and result.defaults == (0,) * rules.players


def test_the_bot_is_deterministic_given_the_deal(learned_modules):
    cls, _ = learned_modules
    a = play_game([cls, "easy"], short(RULESETS["pagat"], hands=2), seed=4)
    b = play_game([cls, "easy"], short(RULESETS["pagat"], hands=2), seed=4)
    assert a.record["hands"] == b.record["hands"]


def test_a_policy_file_of_another_layout_or_missing_is_refused_clearly(learned_modules, tmp_path):
    _, policy = learned_modules
    fresh = policy.LearnedPolicy.create(hidden=8, card_hidden=4)
    path = tmp_path / "p.npz"
    fresh.save(path)
    loaded = policy.LearnedPolicy.load(path)
    for net in policy.NETWORKS:
        assert loaded.nets[net].keys() == fresh.nets[net].keys()
        for name, value in fresh.nets[net].items():
            assert np.array_equal(loaded.nets[net][name], value)
    arrays = {f"{net}.{k}": v for net, p in fresh.nets.items() for k, v in p.items()}
    sizes = {"observation_size": 750, "action_count": 71, "card_features": fresh.nets["cards"]["w0"].shape[0]}
    np.savez(tmp_path / "old.npz", **{**sizes, "observation_size": 700}, **arrays)
    with pytest.raises(policy.PolicyFileError, match="trained for observations of 700, .* train it again"):
        policy.LearnedPolicy.load(tmp_path / "old.npz")
    np.savez(tmp_path / "first.npz", observation_size=750, action_count=71, w1=fresh.nets["decisions"]["w0"])
    with pytest.raises(policy.PolicyFileError, match="no card network .* train it again"):  # the first format
        policy.LearnedPolicy.load(tmp_path / "first.npz")
    cut = {k: v for k, v in arrays.items() if k != "cards.w1"}
    np.savez(tmp_path / "cut.npz", **sizes, **cut)
    with pytest.raises(policy.PolicyFileError, match="cards network is missing or incomplete"):
        policy.LearnedPolicy.load(tmp_path / "cut.npz")
    bent = {**arrays, "cards.w1": arrays["cards.w1"][:-1]}
    np.savez(tmp_path / "bent.npz", **sizes, **bent)
    with pytest.raises(policy.PolicyFileError, match="cards network's weights do not match"):
        policy.LearnedPolicy.load(tmp_path / "bent.npz")
    with pytest.raises(policy.PolicyFileError, match="cannot read policy"):
        policy.LearnedPolicy.load(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(policy.PolicyFileError, match="cannot read policy"):
        policy.LearnedPolicy.load(tmp_path / "junk.npz")


def test_arena_match_run_plays_the_learned_bot_through_the_referee(tmp_path):
    out = tmp_path / "match"
    result = arena(
        tmp_path, "match", "run", "--bot", BOT, "--bot", "builtin:easy", "--games", "2",
        "--set", "max_hands=2", "--out", str(out), "--json", timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["seats"]["N"] == "learned" and data["seats"]["E"] == "builtin-easy"
    for game in data["games"]:
        assert game["ending"] in ("target", "floor", "max_hands"), game["ending"]
        assert game["strikes"]["N"] == game["strikes"]["S"] == 0
        assert game["timing"]["N"]["decisions"] > 20
    replay = arena(tmp_path, "replay", str(out / f"{data['games'][0]['game_id']}.json"))
    assert replay.returncode == 0, replay.stderr


def test_a_tournament_takes_the_learned_bot_as_an_entry(tmp_path):
    (tmp_path / "t.toml").write_text(
        f"""
[tournament]
name = "learned"
seed = "learned-in-a-tournament"
deals_per_pairing = 1
concurrency = 2
output = "out"

[rules]
preset = "pagat"
set = {{ max_hands = 2 }}

[[entry]]
name = "learned"
bot = "{BOT}"

[[entry]]
name = "easy"
bot = "builtin:easy"
"""
    )
    result = arena(tmp_path, "tournament", "run", "t.toml", timeout=900)
    assert result.returncode == 0, result.stderr
    rows = stored_rows(tmp_path / "out")
    assert len(rows) == 2  # one deal, two duplicate tables
    assert {r[1] for r in rows} | {r[2] for r in rows} == {"learned", "easy"}
    assert all(r[3] in ("target", "floor", "max_hands") for r in rows)
    assert all(r[8] == r[9] == 0 for r in rows)  # no strikes


def test_the_trainer_runs_saves_and_the_bot_loads_what_it_saved(tmp_path):
    out = tmp_path / "trained.npz"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, str(LEARNED / "train.py"), "--minutes", "0.02", "--tables", "4", "--batch", "256",
         "--hidden", "16", "--card-hidden", "8", "--eval-every", "2", "--eval-deals", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert out.exists() and "saved" in result.stdout
    check = subprocess.run(
        [sys.executable, "-m", "arena_sdk.testing", f"{LEARNED / 'bot.py'}:LearnedBot", "--against", "random",
         "--games", "1", "--rules", "pagat"],
        capture_output=True, text=True, timeout=600, env={**env, "ARENA_POLICY": str(out)},
    )  # fmt: skip
    assert check.returncode == 0, check.stderr + check.stdout
