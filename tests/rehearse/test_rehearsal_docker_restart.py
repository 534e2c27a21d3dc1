"""A rehearsal on a Docker daemon of its own, restarted mid-term as a fault (issue 37).

The ladder's seats and builds run on :class:`~arena.rehearse.own_faults.OwnDaemon`
(the platform-fault tests' daemon, never the machine's); the course's faults
are kill -9, SIGTERM, kill -9 of the process group, a restart of that
daemon while the ladder runs on, and the ladder's disk (a small filesystem of
its own) full for 20 s.  Bound by outcomes: the audit must find
nothing lost, doubled, changed or left behind, on the daemon of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from docker_support import BASE_IMAGE, engine_or_skip

from arena.rehearse.course import Settings, rehearse
from arena.rehearse.own_faults import can_make_faults
from arena.rehearse.plan import make_plan

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1500)]


def test_a_term_whose_docker_daemon_restarts_and_disk_fills_loses_nothing_and_leaves_nothing(tmp_path: Path):
    engine_or_skip("the rehearsal on a daemon of its own").close()
    why_not = can_make_faults()
    if why_not is not None:  # as the platform-fault tests: never skipped in CI
        (pytest.fail if os.environ.get("CI") else pytest.skip)(why_not)
    plan = make_plan(4, 6, hostile=1, fault_count=5, docker_faults=True, disk_faults=True)
    assert [f.kind for f in plan.faults] == ["kill", "term", "kill-group", "docker-restart", "disk-full"]
    # A term as long as the checks need: its faults fall in the first four fifths, one at a time, and the
    # pairs counted are waited for after it (min_pairs, settle_for).
    settings = Settings(seconds=120, max_hands=3, base_image=BASE_IMAGE, own_docker=True, own_disk=True, disk_hold=20.0,
                        min_pairs=4, settle_for=600)  # fmt: skip
    report = rehearse(tmp_path / "lad", plan, settings)

    assert report["failures"] == [], report["failures"]
    assert report["organiser_actions"] == [], report["organiser_actions"]
    restart = next(f for f in report["faults"] if f["kind"] == "docker-restart")
    assert restart["restart_seconds"] is not None and restart["error"] == "", restart
    full = next(f for f in report["faults"] if f["kind"] == "disk-full")
    assert full["restart_seconds"] is not None and full["error"] == "" and "full for" in full["detail"], full
    assert (tmp_path / "lad" / "results.sqlite").is_file(), "the ladder's files are kept after its filesystem goes"
    assert report["pairs"]["done"] >= 4
    assert report["games"]["doubled"] == report["games"]["lost"] == report["games"]["records_unequal"] == []
    assert report["left_behind"] == {"containers": [], "images": [], "temp_dirs": [], "tmp_files": [], "processes": []}
