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


def test_resume_continues_a_run_and_summary_reads_it_back(tmp_path, capsys):
    # A run cut short after one pair is continued in the same file: the seed
    # already there is not played again, and the file alone gives the result.
    path = tmp_path / "run.jsonl"
    common = ["hard:worlds=2", "easy", "--max-hands", "1", "--seed", "70", "--per-pair", str(path)]
    strength.main([*common, "--pairs", "1"])
    with path.open("a", encoding="utf-8") as f:
        f.write('{"seed": 71, "dea')  # a line cut off by a killed run is skipped, not fatal
    strength.main([*common, "--pairs", "2", "--resume"])
    rows = strength.read_rows(str(path))
    assert [r["seed"] for r in rows] == [70, 71]
    assert all(r["a"] == "hard:worlds=2" and r["max_hands"] == 1 and len(r["per_hand"]) == r["deals"] == 1 for r in rows)
    assert all(r["cpu_a"][1] > 0 and r["cpu_b"][1] > 0 and r["tally_a"]["contracts"] >= 1 for r in rows)
    capsys.readouterr()
    strength.main(["summary", str(path), "--json"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["pairs"] == 2 and result["deals"] == 2
    assert result["points_per_table_hand"][0] == pytest.approx(sum(r["points"] for r in rows) / 2)
    hard_cpu, easy_cpu = result["cpu_ms_per_decision"]
    assert hard_cpu > easy_cpu > 0
    # Another run's file is refused rather than mixed into it.
    with pytest.raises(SystemExit):
        strength.main(["medium", "easy", "--max-hands", "1", "--per-pair", str(path), "--resume"])
    assert len(strength.read_rows(str(path))) == 2


def test_summary_interval_is_by_pair():
    rows = [{"seed": s, "deals": 2, "points": p, "share": 0.5, "cpu_a": [0.2, 10], "cpu_b": [0.1, 10]}
            for s, p in ((1, 20.0), (2, -20.0), (3, 40.0))]  # fmt: skip
    result = strength.summarise(rows)
    assert result["points_per_table_hand"][0] == pytest.approx(40.0 / 6)
    # Pair means 10, -10, 20 (per deal): the residuals are per pair, with k/(k-1).
    resid = sum((p - 40.0 / 6 * 2) ** 2 for p in (20.0, -20.0, 40.0))
    assert result["points_per_table_hand"][1] == pytest.approx(1.96 * math.sqrt(1.5 * resid) / 6)
    assert result["cpu_ms_per_decision"] == pytest.approx([20.0, 10.0])
    assert result["points_bags_charged"] is None  # rows without bags (older files): no charged figure


def test_bags_are_charged_their_share_of_the_penalty():
    # A short game stops before its bags are paid for: each bag A's side took
    # more than B's costs 100/10 points in pagat, none without a penalty.
    assert strength.bag_cost("pagat") == 10.0
    assert strength.charged([30.0, -5.0], [2.0, -0.5], 10.0) == [10.0, 0.0]
    rows = [{"seed": s, "deals": 2, "points": p, "share": 0.5, "bags": b, "per_bag": 10.0}
            for s, p, b in ((1, 20.0, 3.0), (2, -20.0, -1.0))]  # fmt: skip
    result = strength.summarise(rows)
    assert result["points_per_table_hand"][0] == pytest.approx(0.0)
    assert result["points_bags_charged"][0] == pytest.approx((20 - 30 - 20 + 10) / 4)


def test_a_pair_keeps_the_bags_each_deal_added(tmp_path):
    # Real games: the bags kept per deal are A's added bags minus B's, the mean of the two tables;
    # over one game (both tables) A's and B's bags taken are the records' own.
    path = tmp_path / "run.jsonl"
    strength.main(["medium", "easy", "--max-hands", "2", "--seed", "90", "--pairs", "2", "--per-pair", str(path)])
    rows = strength.read_rows(str(path))
    assert all(r["per_bag"] == 10.0 and len(r["per_hand_bags"]) == r["deals"] == 2 for r in rows)
    assert all(r["bags"] == pytest.approx(sum(r["per_hand_bags"])) for r in rows)
    assert any(r["bags"] != 0 for r in rows)  # the two sides' bags differ somewhere in 8 table-hands
    result = strength.summarise(rows)
    charged_mean = sum(r["points"] - 10.0 * r["bags"] for r in rows) / 4
    assert result["points_bags_charged"][0] == pytest.approx(charged_mean)


def test_a_crossing_counts_as_the_bags_that_made_it():
    # NS on 8 bags takes 3 more: -100 and 1 carried (8 -> 1); EW adds 2. Charged, NS's three
    # bags cost 30 in all, not 100: the penalty comes back as the 7 bags of debt paid off.
    def team(points, before, after):
        return {"points": points, "bags_before": before, "bags_after": after, "nil_results": [],
                "contract": 5, "made": True}  # fmt: skip

    record = {"hands": [{"number": 1, "result": {"teams": {"NS": team(53 - 100, 8, 1), "EW": team(42, 0, 2)}}}]}
    bags: dict[int, float] = {}
    points = strength.tally_hands(record, {"NS": strength.Tally(), "EW": strength.Tally()}, ["NS", "EW"], bags)
    assert points == {1: -47 - 42} and bags == {1: (1 - 8) - (2 - 0)}
    assert strength.charged([points[1]], [bags[1]], 10.0) == [(53 - 30) - (42 - 20)]


def test_a_pair_counts_bags_from_a_s_side_at_both_tables(monkeypatch):
    # A's side adds two bags more than B's at each table; at the second table A sits on the
    # other team. Both tables must give A +2 (a lost sign would average them to 0).
    from types import SimpleNamespace

    def team(bags_added: int) -> dict:
        return {"points": 50 + bags_added, "bags_before": 0, "bags_after": bags_added, "nil_results": [],
                "contract": 5, "made": True}  # fmt: skip

    def fake_game(bots, preset, seed, *, max_hands, move_ms, match_id):
        a_team = "EW" if match_id.endswith("-1") else "NS"  # the second game swaps the sides
        b_team = "NS" if a_team == "EW" else "EW"
        teams = {a_team: team(3), b_team: team(1)}
        record = {"hands": [{"number": 1, "result": {"teams": {k: teams[k] for k in ("NS", "EW")}}}]}
        return SimpleNamespace(record=record, winner=None)

    monkeypatch.setattr(strength, "play_game", fake_game)
    result = strength.play_pair(("medium", "easy", None, None, "pagat", 1, 1000), 5)
    assert result.per_hand == [2.0] and result.per_hand_bags == [2.0]
    assert result.per_hand_charged == [2.0 - 10.0 * 2.0]


def test_resume_refuses_a_file_of_another_version_of_a_bot(tmp_path, monkeypatch):
    # The same name and settings at another version is another player: its pairs are not resumed.
    path = tmp_path / "run.jsonl"
    common = ["medium", "easy", "--max-hands", "1", "--seed", "70", "--per-pair", str(path)]
    strength.main([*common, "--pairs", "1"])
    assert strength.read_rows(str(path))[0]["versions"] == ["1", "1"]
    monkeypatch.setattr(strength.TIERS["medium"], "version", "9")
    with pytest.raises(SystemExit):
        strength.main([*common, "--pairs", "2", "--resume"])
    assert len(strength.read_rows(str(path))) == 1
