"""A short rehearsal of a term against a real ladder: real ``serve``, Docker seats, HTTP on 127.0.0.1 (issue 37).

Eight teams, a term of 90 s, three hands a game; kill -9 of the server
(aimed at a pair), SIGTERM, and kill -9 of its whole process group, each
followed by a restart; hostile uploads refused at the door (an archive bomb,
a 1,500-deep archive), a build log flood, a seat that forks.  Bound by
outcomes, not timing: after the term the ladder plays on (bounded) until a
few pairs are done and every build has ended, then the audit must find
nothing lost, doubled, changed, uncontained or left behind.

The term is as long as what is checked needs: its uploads and faults all fall
in its first two thirds, one fault at a time, and the pairs and builds the
checks count are waited for after it (``min_pairs``, ``settle_for``); the
hour-long terms are ``bench/``'s.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docker_support import BASE_IMAGE, engine_or_skip

from arena.rehearse.course import Settings, rehearse
from arena.rehearse.plan import BUILD_KINDS, REFUSED_KINDS, Plan, make_plan
from arena.rehearse.tau import kendall_tau

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]

SEAT_KINDS = ("fork", "spin", "outlive")


def course() -> Plan:
    """The first seed whose course meets a refused, a build and a seat hostile upload (deterministic)."""
    for seed in range(1, 500):
        plan = make_plan(seed, 8, hostile=4, fault_count=3)
        kinds = {u.kind for t in plan.teams for u in t.uploads if u.hostile}
        if kinds & set(REFUSED_KINDS) and kinds & set(BUILD_KINDS) and kinds & set(SEAT_KINDS):
            return plan
    raise AssertionError("no seed gives such a course")


def test_a_short_term_with_kills_and_hostile_uploads_loses_nothing_and_leaves_nothing(tmp_path: Path):
    engine_or_skip("the rehearsal").close()
    plan = course()
    assert [f.kind for f in plan.faults] == ["kill", "term", "kill-group"]
    settings = Settings(seconds=90, max_hands=3, base_image=BASE_IMAGE, build_timeout=30.0, min_pairs=4, settle_for=600)
    report = rehearse(tmp_path / "lad", plan, settings)

    assert report["failures"] == [], report["failures"]
    assert report["organiser_actions"] == [], report["organiser_actions"]
    games = report["games"]
    assert report["pairs"]["done"] >= 4 and games["stored"] >= 8
    assert games["doubled"] == games["lost"] == games["records_unequal"] == games["changed_after_stored"] == []
    assert games["checked_for_change"] >= 2, "games seen during the term were checked again at its end"

    faults = {f["kind"]: f for f in report["faults"]}
    assert faults["kill"]["exit_status"] == -9 and faults["kill-group"]["exit_status"] == -9
    assert faults["term"]["exit_status"] == 0, "SIGTERM: the ladder stopped cleanly"
    assert all(f["restart_seconds"] is not None for f in report["faults"]), "every restart came back"
    assert report["server_starts"] == 4

    outcomes = {h["kind"]: h["outcome"] for h in report["hostile"]}
    assert len(report["hostile"]) == 4 and "uncontained" not in outcomes.values(), report["hostile"]
    assert all(outcomes[k] == "refused" for k in outcomes if k in REFUSED_KINDS), report["hostile"]
    assert report["left_behind"] == {"containers": [], "images": [], "temp_dirs": [], "tmp_files": [], "processes": []}

    assert report["tau_over_time"], "τ was sampled during the term"
    truth = {t.name: t.strength for t in plan.teams}
    rated = {r["team"]: r["elo"] for r in report["standings"] if r["elo"] is not None}
    assert report["tau"] == kendall_tau(truth, rated), "τ is the final standings' against the true order"
    assert report["site"]["visits"] > 0 and report["site"]["p95"] is not None
    assert report["site"]["slow_client_unclosed"] == 0, "the server closed every half-sent request"
