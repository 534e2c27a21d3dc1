"""`arena replay`: the --html viewer, and hostile records (one line, exit 2, no traceback)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "publish"))
from replay_records import record  # noqa: E402


def test_replay_html_writes_one_self_contained_page(run_cli, tmp_path: Path):
    rec = record("two-player", 14)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(rec))
    result = run_cli("replay", str(path), "--html", "view.html")
    assert result.returncode == 0, result.stderr
    page = tmp_path / "view.html"
    assert "view.html" in result.stdout
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and 'class="game-data"' in text
    assert "<link" not in text and "<script src" not in text and "http" not in text.lower().replace(
        "http-equiv", ""
    )
    assert not list(tmp_path.glob("*.tmp"))


def test_replay_html_into_a_missing_directory_exits_2(run_cli, tmp_path: Path):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record("pagat", 11)))
    result = run_cli("replay", str(path), "--html", str(tmp_path / "no" / "such" / "dir.html"))
    assert result.returncode == 2 and "cannot write" in result.stderr
    assert "Traceback" not in result.stderr


def _hostile(tmp_path: Path) -> dict[str, str]:
    good = record("pagat", 11)
    unhashable = json.loads(json.dumps(good))
    unhashable["ruleset"]["preset"] = ["pagat"]
    dict_preset = json.loads(json.dumps(good))
    dict_preset["ruleset"]["preset"] = {"a": 1}
    return {
        "deep-nesting": "[" * 100_000 + "]" * 100_000,
        "deep-object": '{"a":' * 100_000 + "1" + "}" * 100_000,
        "huge-integer": '{"format": "spades-arena-record", "version": ' + "9" * 5000 + "}",
        "huge-seed": json.dumps({**good, "seed": 0}).replace('"seed": 0', '"seed": ' + "7" * 5000),
        "unhashable-preset": json.dumps(unhashable),
        "object-preset": json.dumps(dict_preset),
    }


@pytest.mark.parametrize(
    "case",
    ["deep-nesting", "deep-object", "huge-integer", "huge-seed", "unhashable-preset", "object-preset"],
)
def test_hostile_records_exit_2_with_one_line(run_cli, tmp_path: Path, case: str):
    path = tmp_path / f"{case}.json"
    path.write_text(_hostile(tmp_path)[case])
    html = case == "unhashable-preset"  # the viewer checks the record first, the same way
    args = ["replay", str(path)] + (["--html", "out.html"] if html else [])
    result = run_cli(*args)
    assert result.returncode == 2, (result.stdout, result.stderr[-500:])
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert not (tmp_path / "out.html").exists()
