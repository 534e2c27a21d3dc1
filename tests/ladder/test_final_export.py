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

from arena.ladder.export import CANVAS_COLUMNS, FINAL_COLUMNS, final_export, final_to_csv, members_of

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
    # No roster on this branch's store: each team is its own single row (its name, no e-mail).
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


class Member:
    def __init__(self, name: str, email: str) -> None:
        self.name, self.email = name, email


class RosterStore:
    """A store with the roster's ``members(team)`` (the other half of issue 38 adds it to LadderStore)."""

    def members(self, team: str) -> list[Member]:
        return {"alpha": [Member("Ada", "ada@uni.example"), Member("=Bob", "bob@uni.example")]}.get(team, [])


def test_members_come_from_the_roster_when_the_store_has_one():
    assert members_of(RosterStore(), "alpha") == [("Ada", "ada@uni.example"), ("=Bob", "bob@uni.example")]
    assert members_of(RosterStore(), "beta") == [("beta", "")], "a team with no members is its own row"
    assert members_of(object(), "gamma") == [("gamma", "")]


def test_the_final_csv_writes_each_member_and_defuses_formulas(tmp_path: Path, monkeypatch):  # type: ignore[no-untyped-def]
    lad = frozen_ladder(tmp_path / "lad")
    lad.close()
    import arena.ladder.export as ex

    # The lead wires the roster's LadderStore.members at merge; here a roster store stands in for it.
    monkeypatch.setattr(ex, "members_of", lambda store, team: members_of(RosterStore(), team))
    rows = list(csv.DictReader(io.StringIO(final_to_csv(final_export(lad.directory)))))
    alpha = [(r["email"], r["name"]) for r in rows if r["team"] == "alpha"]
    assert alpha == [("ada@uni.example", "Ada"), ("bob@uni.example", "'=Bob")]


def test_the_final_export_is_refused_before_the_table_is_frozen(tmp_path: Path):
    lad = SyntheticLadder(tmp_path / "lad")
    lad.close()
    set_keys(lad.directory, deadline="2099-01-01T00:00:00Z")
    done = arena("ladder", "export", str(lad.directory), "--final")
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: the final table of {lad.directory} is not frozen yet: the ladder is open (deadline 2099-01-01T00:00:00+00:00)"
    ]
