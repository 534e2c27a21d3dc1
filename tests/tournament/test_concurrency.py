"""How many tables at a time: ``concurrency = N | "auto"``, ``--concurrency``, and resuming with another value.

Concurrency says how a tournament is run, not what it is (the rows are the same
at any value, tests/tournament/test_table_processes.py), so the store does not
bind it: an organiser who stops a run may resume it with more tables at a time
(a bigger machine), and a store claimed before this rule still resumes.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from arena.tournament import ConfigError, load_config
from arena.tournament.config import MAX_CONCURRENCY, parse_concurrency, tournament_hash, usable_cores
from tournament_support import arena, stored_rows

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"


def tournament_text(concurrency: str) -> str:
    return f"""
[tournament]
name = "cc"
seed = "concurrency"
deals_per_pairing = 1
concurrency = {concurrency}
output = "out"

[rules]
preset = "pagat"
set = {{ max_hands = 2 }}

[[entry]]
name = "greedy"
bot = "cmd:python {BOTS / 'greedy' / 'bot.py'}"

[[entry]]
name = "random"
bot = "cmd:python {BOTS / 'random' / 'bot.py'}"
"""


def write(tmp: Path, concurrency: str) -> Path:
    path = tmp / "cc.toml"
    path.write_text(tournament_text(concurrency))
    return path


def test_auto_is_one_table_per_usable_core(tmp_path):
    assert usable_cores() == len(os.sched_getaffinity(0))
    assert load_config(write(tmp_path, '"auto"')).concurrency == usable_cores()
    assert load_config(write(tmp_path, "3")).concurrency == 3
    assert load_config(write(tmp_path, '"AUTO"')).concurrency == usable_cores()
    assert parse_concurrency("7") == 7 and parse_concurrency(" auto ") == usable_cores()


@pytest.mark.parametrize(
    "value", ["0", "-2", '"many"', "2.5", "true", str(MAX_CONCURRENCY + 1), '""', '"\u00b2"', '"' + "9" * 5000 + '"']
)
def test_a_bad_concurrency_is_refused_with_one_line(tmp_path, value):
    path = write(tmp_path, value)
    with pytest.raises(ConfigError, match='concurrency must be a whole number from 1 to 4096 or "auto"'):
        load_config(path)
    result = arena(tmp_path, "tournament", "run", str(path))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "concurrency" in result.stderr and not (tmp_path / "out").exists()


def test_the_command_line_overrides_the_file_and_a_run_resumes_with_another_value(tmp_path):
    path = write(tmp_path, "1")
    first = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show", "--concurrency", "2")
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert summary["concurrency"] == 2 and summary["played"] == summary["games"] == 2
    rows = stored_rows(tmp_path / "out")

    # The file now says auto, the command line 1: same tournament, nothing left to play.
    path.write_text(tournament_text('"auto"'))
    again = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show", "-j", "1")
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    assert resumed["concurrency"] == 1 and resumed["already_done"] == 2 and resumed["played"] == 0
    assert stored_rows(tmp_path / "out") == rows

    shown = arena(tmp_path, "tournament", "run", str(path), "--no-show")
    tables = "1 table" if usable_cores() == 1 else f"{usable_cores()} tables"
    assert shown.returncode == 0 and shown.stdout.splitlines()[0] == f"results go to out ({tables} at a time)"

    for value in ("lots", "\u00b2", "0"):
        bad = arena(tmp_path, "tournament", "run", str(path), "--concurrency", value)
        assert bad.returncode == 2 and "--concurrency must be a whole number" in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1

    # What a tournament is still binds the store.
    path.write_text(tournament_text("1").replace('seed = "concurrency"', 'seed = "another"'))
    refused = arena(tmp_path, "tournament", "run", str(path))
    assert refused.returncode == 2 and "different file" in refused.stderr


def test_a_store_claimed_with_concurrency_in_its_hash_still_resumes(tmp_path):
    """Stores made before concurrency left the hash carry the older hash: the same file resumes
    (and the store is bound to today's hash)."""
    import tomllib

    path = write(tmp_path, "2")
    assert arena(tmp_path, "tournament", "run", str(path), "--no-show").returncode == 0
    older = tournament_hash(tomllib.loads(path.read_text()), run_keys=frozenset())
    db = tmp_path / "out" / "results.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'file_hash'", (older,))
    resumed = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["already_done"] == 2
    # That resume bound the store to today's hash: from now on concurrency is free to change.
    path.write_text(tournament_text("1"))
    changed = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show")
    assert changed.returncode == 0 and json.loads(changed.stdout)["already_done"] == 2, changed.stderr


def test_sprt_auto_is_an_even_number_of_tables_from_the_cores(monkeypatch):
    from arena.sprt import config as sprt_config

    for cores, tables in [(1, 2), (2, 2), (3, 2), (8, 8), (15, 14)]:
        monkeypatch.setattr(sprt_config, "usable_cores", lambda cores=cores: cores)
        assert sprt_config.sprt_concurrency("auto") == tables
    assert sprt_config.sprt_concurrency(" 6 ") == 6
    for bad in ("x", "\u00b2", "9" * 5000):
        with pytest.raises(sprt_config.SprtConfigError, match="or auto, got"):
            sprt_config.sprt_concurrency(bad)
