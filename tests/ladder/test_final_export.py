"""`arena ladder export DIR --final`: the frozen final table as a gradebook CSV (one row per member,
e-mail first), JSON and Canvas's import shape, with the grade bands of ladder.toml."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from calendar_support import frozen_ladder, set_keys
from site_support import SyntheticLadder

from arena.ladder.config import load_ladder_config
from arena.ladder.course.export import CANVAS_COLUMNS, FINAL_COLUMNS, final_export, final_to_csv, members_of

ARENA = str(Path(sys.executable).with_name("arena"))


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], check=False, capture_output=True, text=True, timeout=180)


def test_the_final_export_has_one_row_per_member_and_the_grade_bands(tmp_path: Path):
    lad = frozen_ladder(tmp_path / "lad", bands=[[30, "A"], [67, "B"], [100, "C"]], missing="F")
    lad.close()
    out = tmp_path / "out"
    done = arena("ladder", "export", str(lad.directory), "--final", "--csv", str(out / "final.csv"),
                 "--json", str(out / "final.json"), "--canvas", str(out / "canvas.csv"), "--assignment", "Ladder")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the final table of Site test (frozen " in done.stderr and "4 teams" in done.stderr
    rows = list(csv.DictReader(io.StringIO((out / "final.csv").read_text())))
    assert tuple(rows[0]) == FINAL_COLUMNS and FINAL_COLUMNS[0] == "email"
    # No members on record: each team is its own single row (its name, no e-mail).
    got = [(r["team"], r["name"], r["email"], r["rank"], r["tied"], r["grade"]) for r in rows]
    assert got == [
        ("alpha", "alpha", "", "1", "", "A"),  # 0% of the 3 ranked teams above: A
        ("beta", "beta", "", "2", "1", "B"),  # tied with gamma: both at place 2 (33% above < 67: B)
        ("gamma", "gamma", "", "2", "1", "B"),
        ("delta", "delta", "", "", "", "F"),  # no final version: `missing`
    ]
    assert float(rows[0]["los_next"]) > 0.95 and float(rows[0]["elo"]) > float(rows[1]["elo"])
    data = json.loads((out / "final.json").read_text())
    assert data["kind"] == "final" and data["bands"] == [[30, "A"], [67, "B"], [100, "C"]]
    assert [(t["team"], t["grade"], t["members"]) for t in data["teams"]][0] == ("alpha", "A", [{"name": "alpha", "email": ""}])
    canvas = list(csv.reader(io.StringIO((out / "canvas.csv").read_text())))
    assert tuple(canvas[0]) == (*CANVAS_COLUMNS, "Ladder")
    assert canvas[1] == ["alpha", "", "", "", "", "A"] and len(canvas) == 5


def test_a_store_without_a_roster_gives_each_team_as_its_own_row():
    assert members_of(object(), "gamma") == [("gamma", "")]


def test_the_final_csv_has_a_row_for_each_roster_member_with_the_team_grade(tmp_path: Path):
    lad = frozen_ladder(tmp_path / "lad", bands=[[30, "A"], [67, "B"], [100, "C"]])
    lad.store.add_member("alpha", "Ada Lovelace", "ada@uni.example")
    lad.store.add_member("alpha", "Bob Smith", "bob@uni.example")
    lad.store.revoke_member("alpha", "Bob Smith")  # a revoked token, not a student gone: still graded
    lad.store.add_member("gamma", "Cy Young", "cy@uni.example")
    lad.close()
    rows = list(csv.DictReader(io.StringIO(final_to_csv(final_export(load_ladder_config(lad.directory))))))
    got = [(r["email"], r["name"], r["team"], r["rank"], r["grade"]) for r in rows]
    assert got == [
        ("ada@uni.example", "Ada Lovelace", "alpha", "1", "A"),
        ("bob@uni.example", "Bob Smith", "alpha", "1", "A"),
        ("", "beta", "beta", "2", "B"),  # no members on record: the team's own row
        ("cy@uni.example", "Cy Young", "gamma", "2", "B"),
        ("", "delta", "delta", "", ""),
    ]


def test_the_final_export_is_refused_before_the_table_is_frozen(tmp_path: Path):
    lad = SyntheticLadder(tmp_path / "lad")
    lad.close()
    set_keys(lad.directory, deadline="2099-01-01T00:00:00Z")
    done = arena("ladder", "export", str(lad.directory), "--final")
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: the final table of {lad.directory} is not frozen yet: the ladder is open (deadline 2099-01-01T00:00:00+00:00)"
    ]
