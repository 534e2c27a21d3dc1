"""A rehearsal term too short for its plan says so instead of failing (issue 46).

Red team 5: ``arena ladder rehearse --teams 2 --minutes 0.1`` reported
"FAILURE: hostile upload uncontained" and organiser actions only because the
term ended before anything was built.  The real rehearsal (its ladder
server, Docker) runs here with that term; its uploads are still in the build
queue at the end: ``unfinished``, a ``term too short`` line, no failure.
The audit's rule on hand-made inputs: test_audit_report.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docker_support import engine_or_skip

from arena.rehearse.audit import hostile_outcomes, term_too_short, unfinished_versions
from arena.rehearse.plan import Upload
from arena.rehearse.teams import Sent

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]


def test_a_six_second_term_says_it_was_too_short_and_fails_nothing(tmp_path: Path) -> None:
    engine_or_skip("the rehearsal's ladder")
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "arena", "ladder", "rehearse", str(tmp_path / "term"), "--teams", "2",
         "--minutes", "0.1", "--no-faults", "--json-file", str(report_path)],
        capture_output=True, text=True, timeout=840, env={**os.environ, "COLUMNS": "200"}, check=False,
    )  # fmt: skip
    report = json.loads(report_path.read_text())
    assert report["failures"] == [], report["failures"]
    assert report["organiser_actions"] == [], report["organiser_actions"]
    assert "ended before" in (report["term_too_short"] or "") and "minutes" in report["term_too_short"]
    assert "term too short:" in done.stdout + done.stderr
    assert "FAILURE" not in done.stdout + done.stderr and done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_only_uploads_sent_too_late_to_be_built_are_unfinished() -> None:
    versions = {"t@1": {"status": "queued", "reason": "", "build_log": ""},
                "t@2": {"status": "queued", "reason": "", "build_log": ""}}  # fmt: skip
    early = Sent("t", Upload(0.0, "log-flood"), 1.0, 201, "t@1")  # an hour before the end: stuck, not late
    late = Sent("t", Upload(0.9, "log-flood"), 3590.0, 201, "t@2")
    unfinished = unfinished_versions([early, late], versions, 3600.0, 30.0)  # type: ignore[arg-type]
    assert unfinished == {"t@2"}
    outcomes = hostile_outcomes([early, late], versions, {}, unfinished)  # type: ignore[arg-type]
    assert [o.outcome for o in outcomes] == ["uncontained", "unfinished"]
    assert "the term ended first" in outcomes[1].how
    assert term_too_short(set(), 6.0, 30.0, 4) is None
    assert "ended before 1 upload(s) were built (t@2)" in (term_too_short({"t@2"}, 6.0, 30.0, 4) or "")
