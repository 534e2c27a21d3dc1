"""The audit's comparisons and the report's page, on hand-made inputs (the real course: test_rehearsal.py)."""

from __future__ import annotations

import re
from typing import Any

from arena.rehearse.audit import hostile_outcomes, record_matches_row
from arena.rehearse.plan import Upload
from arena.rehearse.report import html_report, svg_plot
from arena.rehearse.teams import Sent


def _row(**changes: Any) -> dict[str, Any]:
    row = {"game_id": "L0000001-t1", "side0": "a@1", "side1": "b@1", "score0": 178, "score1": 80, "hands": 3,
           "ending": "max_hands", "winner": "a@1"}  # fmt: skip
    return {**row, **changes}


def _record(**changes: Any) -> dict[str, Any]:
    result = {
        "ending": "max_hands",
        "winner": "NS",
        "scores": {"NS": 178, "EW": 80},
        "hands": 3,
        **changes,
    }
    return {"game_id": "L0000001-t1", "result": result}


def test_a_record_equal_to_its_row_passes_and_each_difference_is_named():
    assert record_matches_row(_record(), _row()) is None
    assert "scores" in (record_matches_row(_record(scores={"NS": 80, "EW": 178}), _row()) or "")
    assert "hands" in (record_matches_row(_record(hands=2), _row()) or "")
    assert "ending" in (record_matches_row(_record(ending="target"), _row()) or "")
    assert "winner" in (record_matches_row(_record(winner="EW"), _row()) or "")
    assert "game id" in (record_matches_row({**_record(), "game_id": "other"}, _row()) or "")
    draw = _record(winner=None, scores={"NS": 100, "EW": 100})
    assert record_matches_row(draw, _row(winner=None, score0=100, score1=100)) is None


def _sent(kind: str, status: int, entry: str | None = None, detail: str = "") -> Sent:
    return Sent("t", Upload(0.1, kind), 1.0, status, entry, detail)


def test_hostile_uploads_are_refused_failed_contained_or_not():
    versions = {
        "t@1": {"status": "failed", "reason": "build timed out after 30 s", "build_log": ""},
        "t@2": {"status": "building", "reason": "", "build_log": ""},
        "t@3": {"status": "suspended", "reason": "lost its first 4 games", "build_log": "x" * 10},
        "t@4": {"status": "active", "reason": "", "build_log": ""},
    }
    outcomes = hostile_outcomes(
        [
            _sent("deep-archive", 400, detail="nested deeper than 32"),
            _sent("build-forever", 201, "t@1"),
            _sent("log-flood", 201, "t@2"),
            _sent("spin", 201, "t@3"),
            _sent("archive-bomb", 201, "t@4"),
            _sent("fork", 500, detail="Internal Server Error"),
            _sent("honest", 201, "t@4"),
        ],
        versions,  # type: ignore[arg-type]
        {},
    )
    assert [o.outcome for o in outcomes] == [
        "refused",
        "failed",
        "uncontained",
        "contained",
        "uncontained",
        "uncontained",
    ]
    assert "still building" in outcomes[2].how and "accepted" in outcomes[4].how


def _report(**changes: Any) -> dict[str, Any]:
    report = {
        "seed": 1, "teams": 2, "seconds": 60.0, "cores": 2, "server_starts": 2, "tau": 0.5, "tau_rated": 2,
        "games": {"stored": 2, "doubled": [], "lost": [], "records_unequal": [], "records_missing": [],
                  "changed_after_stored": [], "checked_for_change": 2},
        "pairs": {"done": 1, "void": [{"pair": 1, "entries": "a@1 vs b@1", "reason": "<script>alert(1)</script>"}],
                  "left_playing": [], "per_hour": 60.0, "per_hour_per_core": 30.0},
        "versions": {"by_status": {}, "suspended": [], "stuck": []},
        "hostile": [{"team": "t", "kind": "spin", "outcome": "uncontained", "how": "<img src=https://evil.example/x>"}],
        "faults": [{"at": 10.0, "kind": "kill", "target": "pair", "caught": True, "exit_status": -9,
                    "restart_seconds": 2.0, "error": ""}],
        "left_behind": {"containers": [], "temp_dirs": [], "tmp_files": [], "processes": []},
        "build_queue_wait_p95": 1.0, "peak_memory": 2**28, "peak_disk": 2**20,
        "site": {"p95": 0.05, "visits": 10, "errors": 0, "down": 1, "slow_client_closed": 1, "slow_client_unclosed": 0},
        "tau_over_time": [{"at": 5.0, "tau": None, "rated": 0}, {"at": 10.0, "tau": 0.2, "rated": 2}, {"at": 20.0, "tau": 0.5, "rated": 2}],
        "games_over_time": [{"at": 5.0, "games": 0}, {"at": 20.0, "games": 2}],
        "memory_over_time": [{"at": 5.0, "bytes": 2**27}],
        "standings": [{"rank": 1, "entry": "a@1", "team": "a", "elo": 1550.0, "pairs": 1, "true_strength": 1.0}],
        "failures": ["hostile upload uncontained: <b>"], "organiser_actions": [], "not_rehearsed": ["a Docker daemon restart"],
    }  # fmt: skip
    return {**report, **changes}


def test_the_html_page_is_self_contained_and_escapes_what_the_ladder_sent():
    page = html_report(_report())
    assert "<script" not in page and "<img" not in page, "untrusted text is escaped"
    assert "&lt;script&gt;" in page and "&lt;img" in page
    assert not re.search(r"<[^>]+\s(src|href)\s*=", page), (
        "no element loads anything (no outside origin)"
    )
    assert page.count("<svg") == 3 and "polyline" in page
    assert "default-src 'none'" in page
    assert "Not rehearsed" in page and "a Docker daemon restart" in page


def test_a_plot_without_samples_says_so():
    assert "no samples" in svg_plot([], title="τ", y_label="τ")
    assert "<polyline" in svg_plot([(0.0, 1.0), (60.0, 1.0)], title="flat", y_label="y")
