"""A final evaluation on a small real ladder: real tables, real bots, the ladder's own loop, until it freezes.

Three teams' final versions play as local processes (``bot_of``: the SDK's easy bot, the random
example bot, and a bot that bids 13 every hand and is set every time); a fourth team's version
became active after the deadline and must never play.  The loop runs in the final phase (the clock
says the deadline passed) and must end with every neighbour pair separated or tied, the table
frozen, and only final versions in the games it played.  Bounded: two hands a game, and the test
stops the loop after 15 minutes whatever happens (then it fails).
"""

from __future__ import annotations

import datetime
import sqlite3
import sys
from pathlib import Path

import pytest
import trio
from calendar_support import MovableClock, set_keys
from site_support import SyntheticLadder

from arena.ladder.course.calendar import FINAL, FROZEN, iso
from arena.ladder.config import load_ladder_config
from arena.ladder.course.final_store import FinalStore
from arena.ladder.service import LadderEvent, LadderService, open_results
from arena.ladder.versions.store import Version
from arena.referee.botspec import BotSpec
from arena.tables.players import LocalTables

REPO = Path(__file__).resolve().parents[2]
HOUR = datetime.timedelta(hours=1)
pytestmark = pytest.mark.timeout(1500)

OVERBID = '''
from arena_sdk import run
from arena_sdk.testing import RandomBot


class Overbid(RandomBot):
    """Bids 13 every hand: its side is set every hand."""

    name = "overbid"

    def bid(self, view):
        return 13


run(Overbid())
'''


def test_a_final_evaluation_separates_or_ties_every_neighbour_and_freezes(tmp_path: Path):
    real = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    deadline = real + HOUR
    lad = SyntheticLadder(tmp_path / "lad", "--set", "max_hands=2")
    try:
        set_keys(lad.directory, deadline=deadline, final_until=real + 1000 * HOUR, los=0.95, resolution=150.0)
        for team in ("alpha", "beta", "gamma", "delta"):
            lad.add_team(team)
            lad.add_version(team)
        with sqlite3.connect(lad.config.ladder_path) as db:  # delta's version became active after the deadline
            db.execute("UPDATE versions SET activated=? WHERE team='delta'", (iso(deadline + HOUR),))
        overbid = tmp_path / "overbid.py"
        overbid.write_text(OVERBID)
        bots = {
            "alpha": BotSpec("builtin", "easy"),
            "beta": BotSpec("cmd", f"{sys.executable} {REPO / 'example_bots' / 'random' / 'bot.py'}"),
            "gamma": BotSpec("cmd", f"{sys.executable} {overbid}"),
            "delta": BotSpec("builtin", "easy"),
        }

        def bot_of(version: Version) -> BotSpec:
            return bots[version.team]

        config = load_ladder_config(lad.directory)
        results = open_results(config, lad.store.meta()["ladder_id"])
        events: list[LadderEvent] = []
        clock = MovableClock(deadline + HOUR)
        loop = LadderService(config, lad.store, results, LocalTables(), on_event=events.append, clock=clock,
                             bot_of=bot_of)  # fmt: skip
        assert loop.phase == FINAL and loop.final_entries == ["alpha@1", "beta@1", "gamma@1"]

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                async def watch() -> None:
                    give_up = trio.current_time() + 900
                    while loop.phase != FROZEN and trio.current_time() < give_up:
                        await trio.sleep(0.5)
                    loop.stop.set()

                nursery.start_soon(watch)
                await loop.run()

        trio.run(main)
        log = "\n".join(f"{e.kind}: {e.text}" for e in events)
        assert loop.phase == FROZEN, log[-3000:]
        frozen = FinalStore(config.ladder_path).frozen()
        assert frozen is not None and frozen.reason.startswith("settled"), log[-3000:]
        rows = frozen.body["rows"]
        assert {r["entry"] for r in rows} == {"alpha@1", "beta@1", "gamma@1"}
        assert all(r["elo"] is not None for r in rows)
        assert [r["next_verdict"] for r in rows][:-1] and all(v in ("separated", "tied") for v in [r["next_verdict"] for r in rows][:-1])
        assert rows[-1]["entry"] == "gamma@1", "the bot that is set every hand is last"
        games = [g for g in results.games() if not g.ending.startswith("void")]
        assert games, "the final evaluation played"
        assert all({g.side0, g.side1} <= {"alpha@1", "beta@1", "gamma@1"} for g in games), "only final versions play"
        assert any(e.kind == "phase" and e.text.startswith("final table frozen") for e in events)
        results.close()
    finally:
        lad.close()
