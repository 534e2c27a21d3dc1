"""The ladder loop follows the calendar's clock across restarts (a real ladder.sqlite; the clock moved by the test).

Each "restart" is a new :class:`LadderService` over the same directory, as ``arena ladder serve``
makes at start: the phase comes from the clock, the final versions and the frozen table from the
store, never from memory.
"""

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path

from calendar_support import MovableClock, set_keys
from site_support import SyntheticLadder
from standings_support import pair

from arena.ladder.course.calendar import BEFORE, FINAL, FROZEN, OPEN, iso
from arena.ladder.config import load_ladder_config
from arena.ladder.course.final_store import FinalStore
from arena.ladder.service import LadderEvent, LadderService, open_results
from arena.tables.players import LocalTables

HOUR = datetime.timedelta(hours=1)


def service(lad: SyntheticLadder, clock: MovableClock, events: list[LadderEvent]) -> LadderService:
    """The loop as ``serve`` makes it at start (its stores opened anew)."""
    config = load_ladder_config(lad.directory)
    results = open_results(config, lad.store.meta()["ladder_id"])
    return LadderService(config, lad.store, results, LocalTables(), on_event=events.append, clock=clock)


def said(events: list[LadderEvent]) -> list[str]:
    return [e.text for e in events if e.kind == "phase"]


def test_phases_final_versions_and_the_frozen_table_survive_restarts(tmp_path: Path):
    real = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    opens, deadline, final_until = real + 24 * HOUR, real + 72 * HOUR, real + 120 * HOUR
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        set_keys(lad.directory, opens=opens, deadline=deadline, final_until=final_until, los=0.999, resolution=0.0)
        for team in ("alpha", "beta", "gamma"):
            lad.add_team(team)
            lad.add_version(team)
        alpha2 = lad.add_version("alpha")  # activated after the deadline (its build finished late): not final
        with sqlite3.connect(lad.config.ladder_path) as db:
            late = iso(deadline + HOUR)
            db.execute("UPDATE versions SET activated=? WHERE id=?", (late, alpha2.id))
            db.execute("UPDATE versions SET retired=? WHERE team='alpha' AND number=1", (late,))
        for seq, (a, b, wins) in enumerate([("alpha@1", "beta@1", 1), ("beta@1", "gamma@1", 1),
                                            ("alpha@1", "gamma@1", 2), ("beta@1", "gamma@1", 0)], 1):  # fmt: skip
            for g in pair(seq, a, b, wins):
                lad.results.record_game(g)

        clock, events = MovableClock(opens - HOUR), []
        first = service(lad, clock, events)
        assert first.phase == BEFORE and said(events)[0].startswith("phase before: ") and "uploads open in 1 h 0 min" in said(events)[0]
        clock.now = opens + HOUR
        assert first.advance() == OPEN and said(events)[-1].startswith("phase before -> open")
        assert {s.entry for s in first.state.standings} == {"alpha@2", "beta@1", "gamma@1"}  # the active versions

        clock.now = deadline + 2 * HOUR  # the deadline passed while the loop ran
        assert first.advance() == FINAL
        assert "final versions fixed at the deadline: alpha@1, beta@1, gamma@1" in said(events)
        assert said(events)[-1].startswith("phase open -> final: the final evaluation: only the 3 final versions play")
        assert {s.entry for s in first.state.standings} == {"alpha@1", "beta@1", "gamma@1"}, "only final versions are listed"
        live = FinalStore(lad.config.ladder_path).live()  # what the site shows during the final evaluation
        assert live is not None and {r["entry"] for r in live["rows"]} == {"alpha@1", "beta@1", "gamma@1"}

        # A restart in the final phase: the same final versions, though the store now says otherwise.
        beta2 = lad.add_version("beta")  # (as if activated before the deadline: recomputing would pick it)
        with sqlite3.connect(lad.config.ladder_path) as db:
            db.execute("UPDATE versions SET activated=? WHERE id=?", (iso(deadline - HOUR), beta2.id))
        events2: list[LadderEvent] = []
        second = service(lad, clock, events2)
        assert second.phase == FINAL and second.final_entries == ["alpha@1", "beta@1", "gamma@1"]
        assert not any("fixed" in t for t in said(events2)), "fixed once, not again"
        assert said(events2) == [said(events2)[0]] and said(events2)[0].startswith("phase final: ")

        clock.now = final_until + HOUR  # final_until passed: the standings freeze
        assert second.advance() == FROZEN
        frozen = FinalStore(lad.config.ladder_path).frozen()
        assert frozen is not None and frozen.reason.startswith("final_until")
        assert [r["entry"] for r in frozen.body["rows"]] and {r["entry"] for r in frozen.body["rows"]} == {"alpha@1", "beta@1", "gamma@1"}
        assert any(t.startswith("final table frozen") for t in said(events2))
        assert said(events2)[-1].startswith("phase final -> frozen") and "freeze in" not in said(events2)[-1]
        assert second.next_job(4) is None, "nothing plays once frozen"

        # More games stored after the freeze and a restart later: the frozen table does not change.
        for g in pair(9, "beta@1", "gamma@1", 0):
            lad.results.record_game(g)
        clock.now = final_until + 500 * HOUR
        events3: list[LadderEvent] = []
        third = service(lad, clock, events3)
        assert third.phase == FROZEN and third.next_job(4) is None
        again = FinalStore(lad.config.ladder_path).frozen()
        assert again == frozen
        assert not any(t.startswith("final table frozen") for t in said(events3)), "frozen once"
    finally:
        lad.close()


def test_a_final_evaluation_whose_neighbours_are_separated_freezes_at_once_as_settled(tmp_path: Path):
    real = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        set_keys(lad.directory, deadline=real + HOUR)
        for team in ("alpha", "beta", "gamma"):
            lad.add_team(team)
            lad.add_version(team)
        seq = 0
        for a, b in [("alpha@1", "beta@1"), ("beta@1", "gamma@1"), ("alpha@1", "gamma@1")] * 12:
            seq += 1
            for g in pair(seq, a, b, 2):  # the upper one wins both games of every pair
                lad.results.record_game(g)
        clock, events = MovableClock(real + 2 * HOUR), []
        loop = service(lad, clock, events)
        assert loop.phase == FROZEN
        frozen = FinalStore(lad.config.ladder_path).frozen()
        assert frozen is not None and frozen.reason.startswith("settled")
        rows = frozen.body["rows"]
        assert [r["entry"] for r in rows] == ["alpha@1", "beta@1", "gamma@1"]
        assert [r["next_verdict"] for r in rows] == ["separated", "separated", None]
        assert all(r["los_next"] >= 0.95 for r in rows[:2])
    finally:
        lad.close()
