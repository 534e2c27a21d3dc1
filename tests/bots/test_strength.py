"""bench/strength.py: bot settings on the name, CPU per decision of both sides, the by-pair interval."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import strength  # noqa: E402

from arena_sdk.bots import HardBot  # noqa: E402


def test_bot_settings_ride_on_the_name():
    hard = strength.factory_for("hard:worlds=7,z=0.25", None)()
    assert isinstance(hard, HardBot) and hard.worlds == 7 and hard.budget_s is None and hard.z == 0.25
    assert strength.factory_for("hard", 0.2)().budget_s == 0.2
    mc = strength.factory_for("flatmc:4x2", None)()
    assert (mc.deals, mc.rollouts) == (4, 2)
    for bad in ("hard:speed=3", "flatmc:4", "medium:1", "nobody"):
        with pytest.raises(SystemExit):
            strength.factory_for(bad, None)


def test_by_pair_interval_treats_each_pair_as_one_cluster():
    # Two pairs that disagree completely: the hands within a pair agree, so the
    # by-pair interval is much wider than the naive one over hands.
    pairs = [[10.0] * 10, [-10.0] * 10]
    naive = strength.interval([d for p in pairs for d in p])[1]
    assert strength.clustered(pairs) > 3 * naive
    assert math.isnan(strength.clustered([[1.0, 2.0]]))


def test_a_run_reports_cpu_per_decision_of_both_sides(capsys):
    strength.main(["hard:worlds=2", "easy", "--pairs", "1", "--max-hands", "1", "--json"])
    out = capsys.readouterr().out
    summary = json.loads(out.strip().splitlines()[-1])
    hard_cpu, easy_cpu = summary["cpu_ms_per_decision"]
    assert hard_cpu > easy_cpu > 0  # a search costs more than a rule
    assert "CPU per decision hard:worlds=2" in out


def test_per_pair_file_and_a_paired_comparison_of_two_runs(tmp_path, capsys):
    # Two runs on the same seeds write one line per pair; "compare" pairs them by seed.
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    common = ["--pairs", "2", "--max-hands", "1", "--seed", "40"]
    strength.main(["medium", "random", *common, "--per-pair", str(a)])
    strength.main(["random", "medium", *common, "--per-pair", str(b)])
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    assert sorted(r["seed"] for r in rows) == [40, 41]
    assert all(r["deals"] == 1 and isinstance(r["points"], float) for r in rows)
    capsys.readouterr()
    strength.main(["compare", str(a), str(b), "--json"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["pairs"] == 2
    # The same deals from the other side: medium-vs-random minus random-vs-medium is
    # twice medium's lead, well above 0.
    assert result["difference"] == pytest.approx(2 * sum(r["points"] for r in rows) / len(rows))
    assert result["difference"] > 0


def test_compare_pairs_only_the_common_seeds():
    a = [{"seed": 1, "deals": 2, "points": 10.0}, {"seed": 2, "deals": 1, "points": 4.0}]
    b = [{"seed": 2, "deals": 1, "points": -2.0}, {"seed": 3, "deals": 5, "points": 0.0}]
    pairs, diff, half = strength.paired_difference(a, b)
    assert (pairs, diff) == (1, 6.0) and math.isnan(half)
    with pytest.raises(ValueError, match="no seed in common"):
        strength.paired_difference(a[:1], b[1:])
