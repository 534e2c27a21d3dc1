"""bench/hands_by_bags.py: contracts set and points per hand by the bags a side began with."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import hands_by_bags


def side(points: int, bags_before: int, made: bool, contract: int = 5) -> dict:
    return {"points": points, "bags_before": bags_before, "made": made, "contract": contract}


def test_sets_are_counted_by_the_bags_each_side_began_with(tmp_path, capsys):
    record = {
        "seats": {"N": {"name": "hard"}, "S": {"name": "hard"}, "E": {"name": "ref"}, "W": {"name": "ref"}},
        "hands": [
            {"result": {"teams": {"NS": side(50, 8, True), "EW": side(-60, 0, False, 6)}},
             "actions": [{"seat": "N", "cpu_ms": 30.0}, {"seat": "E", "cpu_ms": 10.0}]},
            {"result": {"teams": {"NS": side(-50, 9, False), "EW": side(40, 1, True)}},
             "actions": [{"seat": "S", "cpu_ms": 10.0}]},
            {"result": {"teams": {"NS": side(-50, 9, False), "EW": side(0, 1, True, 0)}}, "actions": []},
        ],
    }  # fmt: skip
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "g1.json").write_text(json.dumps(record))
    assert hands_by_bags.main([str(tmp_path), "--near", "8", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = {(r["bot"], r["slice"]): (r["hands"], r["set"], r["points_per_hand"]) for r in result["slices"]}
    assert rows[("hard", "bags >= 8")] == (3, 2, -50 / 3)
    assert rows[("hard", "hands 3+")] == (1, 1, -50.0)
    assert rows[("ref", "bags < 8")] == (3, 1, -20 / 3)  # a side that bid nothing (contract 0) is never "set"
    assert result["games"] == 1 and result["cpu_ms_per_decision"] == {"hard": 20.0, "ref": 10.0}
