"""The real CLI: rules show, replay and demo, including bad input (exit 2, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_rules_show_json(run_cli):
    result = run_cli("rules", "show", "wikipedia", "--set", "failed_nil_tricks=contract", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ruleset"]["failed_nil_tricks"] == "contract"
    assert data["ruleset"]["lose_floor"] == -200
    from arena_sdk.engine import resolve_ruleset

    assert data["hash"] == resolve_ruleset("wikipedia", {"failed_nil_tricks": "contract"}).hash


def test_rules_show_table(run_cli):
    result = run_cli("rules", "show", "cards4")
    assert result.returncode == 0
    assert "first-bidder" in result.stdout and "cards4" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rules", "show", "bogus"], "unknown preset 'bogus'"),
        (["rules", "show", "--set", "colour=red"], "unknown option 'colour'"),
        (["rules", "show", "--set", "target=0"], "target=0 is out of range"),
        (["rules", "show", "--set", "bag_threshold=0"], "bag_threshold=0 is out of range"),
        (["rules", "show", "--set", "nil_value=-5"], "nil_value=-5 is out of range"),
        (["rules", "show", "two-player", "--set", "blind_nil=first-bidder"], "first-bidder"),
        (["rules", "show", "--set", "target"], "key=value"),
        (["demo", "--rules", "nope"], "unknown preset"),
    ],
)
def test_bad_input_exits_2_without_traceback(run_cli, args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_demo_writes_a_record_that_replays(run_cli, tmp_path: Path):
    result = run_cli("demo", "--rules", "two-player", "--seed", "4", "--set", "max_hands=5", "--out", "o")
    assert result.returncode == 0, result.stderr
    record = tmp_path / "o" / "demo-two-player-4.json"
    assert "replay OK" in result.stdout
    replayed = run_cli("replay", str(record), "--json")
    assert replayed.returncode == 0, replayed.stderr
    summary = json.loads(replayed.stdout)
    data = json.loads(record.read_text())
    assert summary["scores"] == data["result"]["scores"]
    assert summary["ending"] == data["result"]["ending"] and summary["ok"] is True


def test_replay_names_the_first_bad_entry(run_cli, tmp_path: Path):
    assert run_cli("demo", "--seed", "2", "--set", "max_hands=2", "--out", ".").returncode == 0
    path = tmp_path / "demo-pagat-2.json"
    data = json.loads(path.read_text())
    data["hands"][1]["result"]["teams"]["NS"]["points"] += 10
    path.write_text(json.dumps(data))
    result = run_cli("replay", str(path))
    assert result.returncode == 2
    assert "hands[1].result.teams.NS.points: record says" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "is not valid JSON"), ("[]", "record: expected an object")],
)
def test_replay_rejects_unreadable_files(run_cli, tmp_path: Path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = run_cli("replay", str(path))
    assert result.returncode == 2 and message in result.stderr
    missing = run_cli("replay", str(tmp_path / "missing.json"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
