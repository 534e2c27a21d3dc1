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
        assert suspended.status == SUSPENDED and "first 4 games by its own crash" in suspended.reason
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
