"""A version that passes its validation and then loses its first games by crash is suspended; the previous one is back.

The finding: a version that passed the 2-hand validation and then crashed in
every game (8 of 8 rated games lost by crash) stayed its team's active entry,
lifting its opponents' ratings.  The ladder loop's schedule is fed stored games
here as its run loop would feed them (no Docker: the rule is the loop's).
"""

from __future__ import annotations

from pathlib import Path

from site_support import SyntheticLadder
from standings_support import game

from arena.ladder.versions.lifecycle import ACTIVE, RETIRED, SUSPENDED
from arena.ladder.service import LadderEvent, LadderService, open_results
from arena.tables.ledger import Recorded
from arena.tables.players import LocalTables
from arena.tables.runner import Job


def crashed(seq: int, table: int, side0: str, side1: str, loser: str):  # type: ignore[no-untyped-def]
    row = game(seq, table, side0, side1, 0, 0)
    winner = side1 if loser == side0 else side0
    return row.__class__(**{**row.__dict__, "ending": "forfeit:crash", "winner": winner, "forfeit_entry": loser,
                            "forfeit_reason": "crash", "forfeit_detail": "the bot's process exited (status 1)",
                            "forfeit_entries": (loser,)})  # fmt: skip


def test_a_new_version_that_crashes_its_first_games_is_suspended_and_the_old_one_restored(tmp_path: Path):
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        lad.add_team("alpha")
        lad.add_team("beta")
        old = lad.add_version("alpha")
        lad.store.set_status(old.id, ACTIVE, image_id="sha256:old")
        new = lad.add_version("alpha")  # activating it retired alpha@1
        beta = lad.add_version("beta")
        assert lad.store.version(old.id).status == RETIRED
        events: list[LadderEvent] = []
        results = open_results(lad.config, lad.store.meta()["ladder_id"])
        service = LadderService(lad.config, lad.store, results, LocalTables(), on_event=events.append)
        job = Job("L0000001", {}, {}, {})
        k = lad.config.suspend_after
        assert k == 4, "the documented default"
        for seq in range(1, k + 1):  # new@2 crashes in each of its first four games
            table = 1 + seq % 2
            sides = (new.entry, beta.entry) if table == 1 else (beta.entry, new.entry)
            row = crashed(seq, table, *sides, loser=new.entry)
            assert results.record_game(row)
            if seq < k:
                service.recorded(job, table, None, Recorded(row=row))  # type: ignore[arg-type]
                assert lad.store.version(new.id).status == ACTIVE, f"not yet after {seq} games"
        service.recorded(job, table, None, Recorded(row=row))  # type: ignore[arg-type]
        suspended = lad.store.version(new.id)
        assert suspended.status == SUSPENDED and "lost 4 of its last 4 games" in suspended.reason
        assert lad.store.version(old.id).status == ACTIVE, "the team's previous good version plays again"
        assert [v.entry for v in lad.store.active_versions()] == ["alpha@1", "beta@1"]
        told = [e.text for e in events if e.kind == "suspend"]
        assert len(told) == 1 and "alpha@1 is active again" in told[0]
        # An honest version that loses a game by crash now and then is not suspended.
        service.recorded(job, 1, None, Recorded(row=crashed(99, 1, beta.entry, old.entry, loser=beta.entry)))  # type: ignore[arg-type]
        assert lad.store.version(beta.id).status == ACTIVE
        results.close()
    finally:
        lad.close()


def test_a_version_that_won_its_first_game_and_then_forfeits_is_suspended_by_rate(tmp_path: Path):
    """Issue 46: it won its first game (the other broken bot forfeited first), forfeited 9 in a row, stayed active."""
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        for team in ("alpha", "beta", "gamma"):
            lad.add_team(team)
        broken, other_broken, honest = lad.add_version("alpha"), lad.add_version("beta"), lad.add_version("gamma")
        events: list[LadderEvent] = []
        results = open_results(lad.config, lad.store.meta()["ladder_id"])
        service = LadderService(lad.config, lad.store, results, LocalTables(), on_event=events.append)
        job = Job("L0000001", {}, {}, {})
        assert (lad.config.suspension.window, lad.config.suspension.share) == (10, 0.5), "the documented defaults"
        first = crashed(1, 1, broken.entry, other_broken.entry, loser=other_broken.entry)  # alpha wins its first
        assert results.record_game(first)
        service.recorded(job, 1, None, Recorded(row=first))  # type: ignore[arg-type]
        statuses = []
        for seq in range(2, 11):  # then alpha forfeits every game against the honest bot
            row = crashed(seq, 1, broken.entry, honest.entry, loser=broken.entry)
            assert results.record_game(row)
            service.recorded(job, 1, None, Recorded(row=row))  # type: ignore[arg-type]
            statuses.append(lad.store.version(broken.id).status)
        assert statuses[:2] == [ACTIVE, ACTIVE] and statuses[2] == SUSPENDED, statuses  # 3 of its first 4 lost by fault
        reason = lad.store.version(broken.id).reason
        assert "lost 3 of its last 4 games" in reason and "50%" in reason
        assert lad.store.version(honest.id).status == ACTIVE and lad.store.version(other_broken.id).status == ACTIVE
        assert len([e for e in events if e.kind == "suspend"]) == 1
        results.close()
    finally:
        lad.close()


def test_the_rate_is_the_organisers_and_a_bad_value_is_one_line(tmp_path: Path):
    import pytest

    from arena.ladder.config import load_ladder_config
    from arena.toml_keys import ConfigError

    lad = SyntheticLadder(tmp_path / "lad")
    lad.close()
    toml = lad.directory / "ladder.toml"
    text = toml.read_text()
    toml.write_text(text.replace("suspend_window = 10", "suspend_window = 20").replace("suspend_share = 0.5", "suspend_share = 0.8"))
    rule = load_ladder_config(lad.directory).suspension
    assert (rule.after, rule.window, rule.share) == (4, 20, 0.8)
    assert rule.judged([True, True, True, True]) and not rule.judged([False, True, True, True])
    toml.write_text(text.replace("suspend_share = 0.5", "suspend_share = 1.5"))
    with pytest.raises(ConfigError, match=r"^\[ladder\] suspend_share must be") as caught:
        load_ladder_config(lad.directory)
    assert "\n" not in str(caught.value)


def test_the_rehearsal_audit_counts_a_version_the_rule_missed():
    from arena.rehearse.audit import missed_suspensions

    rows = [{"game_id": f"L{i:07d}-t1", "side0": "a@1", "side1": "b@1", "ending": "forfeit:crash"} for i in range(1, 11)]
    forfeited = {(f"L{i:07d}-t1", "a@1") for i in range(2, 11)}  # a won its first game, then forfeited 9
    active = {"a@1": {"status": "active"}, "b@1": {"status": "active"}}
    assert missed_suspensions(rows, forfeited, active, (4, 10, 0.5)) == [
        "a@1 lost 9 of its last 10 games by its own fault and is still active"
    ]
    assert missed_suspensions(rows, forfeited, {**active, "a@1": {"status": "suspended"}}, (4, 10, 0.5)) == []
    assert missed_suspensions(rows, forfeited, active, (0, 10, 0.5)) == []  # the rule is off
