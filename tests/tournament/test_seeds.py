"""Deal and bot seeds a bot cannot find by guessing the tournament seed (issue 24, item 4).

The red team's attack: with ``seed = 31337`` a bot took its bot seed (sent in
every GameStart), guessed the tournament seed offline, recomputed the deal
seeds and the bot seeds from the public formulas until one matched, and then
knew every hand.  With a run secret in the results store neither formula can
be evaluated without the secret: the test plays a real tournament with a
guessable seed and runs the attacker's search over the records.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest
from arena_sdk.engine.policy import bot_seed
from tournament_support import arena, own_bot

from arena.match.seeds import bot_seed_key, derive_seed, guessable

FILE = """\
[tournament]
name = "seeds"
seed = "31337"
deals_per_pairing = 2
concurrency = 2

[rules]
preset = "pagat"
set = {{ max_hands = 1 }}

[[entry]]
name = "alpha"
bot = "{a}"

[[entry]]
name = "beta"
bot = "{b}"
"""


def _records(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))]


def _attacker_finds_the_deal(record: dict, guesses: list[str]) -> bool:
    """What the red team's bot did: from its own bot seed, try guessed tournament seeds until one matches."""
    names = sorted(seat["name"] for seat in record["seats"].values())
    pair = sorted(set(names))
    mine = record["bot_seeds"]["N"]
    for guess in guesses:
        for deal in range(4):
            public = derive_seed(None, guess, pair, deal)
            if bot_seed(public, 0) == mine or public == record["seed"]:
                return True
    return False


def test_a_guessed_tournament_seed_gives_away_no_deal(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(FILE.format(a=own_bot(tmp_path, "random"), b=own_bot(tmp_path, "greedy")))
    done = arena(tmp_path, "tournament", "run", str(path), "--no-show")
    assert done.returncode == 0, done.stderr
    records = _records(_out(tmp_path))
    assert len(records) == 4
    guesses = [str(n) for n in range(31300, 31400)]
    assert not any(_attacker_finds_the_deal(r, guesses) for r in records), "the guessed seed found a deal"
    # The secret is in the store, and with it the deals are the run's own.
    with sqlite3.connect(_out(tmp_path) / "results.sqlite") as db:
        secret = dict(db.execute("SELECT key, value FROM meta"))["deal_secret"]
        seeds = dict(db.execute("SELECT game_id, deal_seed FROM games"))
    assert secret == os.environ["ARENA_RUN_SECRET"], "the test suite's (conftest.py): unknown to the attacker"
    for record in records:
        assert seeds[record["game_id"]] == record["seed"]
        key = bot_seed_key(secret)
        assert record["bot_seeds"] == {s: bot_seed(record["seed"], i, key) for i, s in enumerate("NESW")}
    # Both tables of a duplicate pair still play the same deal.
    by_deal: dict[str, set[str]] = {}
    for game_id, seed in seeds.items():
        by_deal.setdefault(game_id.rsplit("-t", 1)[0], set()).add(seed)
    assert all(len(s) == 1 for s in by_deal.values()) and len(by_deal) == 2


def test_the_attack_works_without_a_secret():
    """The check above can fail: with the public derivation (no secret) the attacker finds the deal."""
    deal = derive_seed(None, "31337", ["alpha", "beta"], 1)
    record = {"seats": {"N": {"name": "alpha"}, "E": {"name": "beta"}}, "seed": deal, "bot_seeds": {"N": bot_seed(deal, 0)}}
    assert _attacker_finds_the_deal(record, [str(n) for n in range(31300, 31400)])


def test_a_resumed_run_keeps_its_deals(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(FILE.format(a=own_bot(tmp_path, "random"), b=own_bot(tmp_path, "greedy")))
    first = arena(tmp_path, "tournament", "run", str(path), "--no-show")
    assert first.returncode == 0, first.stderr
    db_path = _out(tmp_path) / "results.sqlite"
    with sqlite3.connect(db_path) as db:
        before = dict(db.execute("SELECT game_id, deal_seed FROM games"))
        db.execute("DELETE FROM games WHERE game_id LIKE '%-t2'")  # as if the run had stopped halfway
    again = arena(tmp_path, "tournament", "run", str(path), "--no-show")
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(db_path) as db:
        assert dict(db.execute("SELECT game_id, deal_seed FROM games")) == before


def test_the_public_derivation_is_the_one_stores_before_secrets_used():
    """Stores made before run secrets resume with their old deals: the keyless derivation is the old formula."""
    old_tournament = hashlib.sha256(json.dumps(["demo-2026", ["greedy", "random"], 1]).encode()).hexdigest()[:32]
    assert derive_seed(None, "demo-2026", sorted(("random", "greedy")), 1) == old_tournament
    old_sprt = hashlib.sha256(json.dumps(["sprt", "s", 7]).encode()).hexdigest()[:32]
    assert derive_seed(None, "sprt", "s", 7) == old_sprt
    assert derive_seed("k" * 64, "sprt", "s", 7) != old_sprt


def test_guessable_seeds():
    assert guessable("31337") and guessable("demo-2026") and guessable("deadbeef")
    assert not guessable("9f86d081884c7d659a2feaa0c55ad015") and not guessable("8" * 20)


def _out(tmp_path: Path) -> Path:
    """Where the tournament file above writes (its default output directory)."""
    candidates = [p.parent for p in tmp_path.rglob("results.sqlite")]
    assert len(candidates) == 1, candidates
    return candidates[0]


def test_a_new_secret_is_random_unless_the_organiser_sets_one(monkeypatch):
    from arena.errors import ArenaError
    from arena.match.seeds import SECRET_ENV, new_secret

    monkeypatch.delenv(SECRET_ENV, raising=False)
    first, second = new_secret(), new_secret()
    assert first != second and len(first) == len(second) == 64
    monkeypatch.setenv(SECRET_ENV, "x" * 40)
    assert new_secret() == "x" * 40
    monkeypatch.setenv(SECRET_ENV, "short")
    with pytest.raises(ArenaError, match="at least 32"):
        new_secret()
