"""Containment: one hostile bot stalls or floods only its own seat (issue #9, holes 1 and 2).

Real referee on a real socket; the attackers are separate processes speaking
HTTP/2 at the frame level (``h2client.py``), doing what gRPC libraries never do.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from referee_support import arun, check_record, events, host, make_spec, python_launcher, running_referee

from arena.match import TimeControl
from arena.referee.host import host_match
from arena.referee.server import MAX_CONNECTIONS

HERE = Path(__file__).resolve().parent
H2CLIENT = HERE / "h2client.py"


def sdk_random(bot_dir: Path) -> Any:
    from referee_support import write_sdk_bot

    return python_launcher(write_sdk_bot(bot_dir, "random"))


@pytest.mark.parametrize("window", [0, 300], ids=["no-window", "tiny-window"])
def test_a_seat_that_grants_no_window_times_out_and_the_table_goes_on(
    unix_address: str, bot_dir: Path, log_dir: Path, window: int
) -> None:
    # Seat A joins, answers pings, and never opens its flow-control window:
    # the referee's writes to it can never complete.  On the old referee the
    # first write blocked the match loop for good (this test hit its bound).
    tc = TimeControl(move_s=0.3, bank_s=0.3, hard_cap_s=1.0)
    spec = make_spec(games=2, tc=tc)
    launchers = [python_launcher(H2CLIENT, "stall", str(window)), sdk_random(bot_dir)]

    started = time.monotonic()
    hosted = host(unix_address, spec, launchers, log_dir, 45)
    took = time.monotonic() - started
    games = hosted.outcome.games
    assert [g.ending for g in games] == ["forfeit:timeout", "forfeit:timeout"]
    assert all(g.forfeit is not None and g.forfeit["seat"] == "A" for g in games)
    assert all(g.winner == 1 for g in games)  # B wins: the honest seat is unharmed
    first = check_record(games[0].record)
    lost = events(first, "lost:timeout")
    assert len(lost) == 1 and "did not take its messages" in lost[0]["detail"], first["events"]
    # One timeout strike (the unsent request, charged move + bank), then the seat is out.
    strikes = [a for h in first["hands"] for a in h["actions"] if a.get("default")]
    assert [(a["seat"], a["default"]) for a in strikes] == [("A", "timeout")]
    assert 600 - 5 <= strikes[0]["ms"] < 5000
    assert "earlier game" in games[1].forfeit["detail"]  # type: ignore[index]
    assert took < 40


FLOOD_BOT = """\
import os, subprocess, sys
from arena_sdk import Bot, run
from arena_sdk.client import token_from_env

# A local bot reads its token once from a pipe; this one keeps it for its flooding helper.
os.environ["ARENA_TOKEN"] = token_from_env()

class Flooder(Bot):
    name = "flooder"
    helper = None

    def on_game_start(self, info):
        if self.helper is None:  # every seat has joined: flood while the others play
            with open({out!r}, "w") as out:
                self.helper = subprocess.Popen([sys.executable, {h2client!r}, "flood", "{count}"], stdout=out)

    def bid(self, view):
        if not getattr(self, "waited", False):
            import time
            self.waited = True
            time.sleep(2.0)  # let the flood build up (the bank pays for it)
        return 1

    def play(self, view):
        return view.legal_cards()[0]

run(Flooder())
"""


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_connection_flood_harms_no_other_seat_and_takes_no_runner_descriptors(
    unix_address: str, bot_dir: Path, log_dir: Path, tmp_path: Path
) -> None:
    # Seat A joins and plays, and its helper opens thousands of connections to
    # the referee's socket (half of them joining with A's token).  On the old
    # referee every one was accepted and held: the runner's descriptors went
    # with them (a runner at the usual limit of 1,024 died).
    counts_file = tmp_path / "flood.json"
    flooder = bot_dir / "flooder.py"
    flooder.write_text(FLOOD_BOT.format(out=str(counts_file), h2client=str(H2CLIENT), count=3000))
    spec = make_spec(games=3, max_hands=1, tc=TimeControl(move_s=1.0, bank_s=3.0, hard_cap_s=5.0))
    peak = {"fds": 0}

    async def watch_fds() -> None:
        while True:
            peak["fds"] = max(peak["fds"], _open_fds())
            await asyncio.sleep(0.02)

    async def scenario() -> Any:
        async with running_referee(unix_address) as server:
            watcher = asyncio.ensure_future(watch_fds())
            try:
                hosted = await host_match(
                    server, spec, [python_launcher(flooder), sdk_random(bot_dir)], server.addresses[0],
                    log_dir=log_dir, start_timeout=15.0,
                )  # fmt: skip
            finally:
                watcher.cancel()
            return hosted, server.service.refused, server.service.refused_floods

    baseline = _open_fds()
    hosted, refused, refused_floods = arun(scenario(), 90)
    games = hosted.outcome.games
    # The honest seat B was never charged: it won or drew every game, no strikes, no losses.
    for game in games:
        record = check_record(game.record)
        assert record["strikes"]["B"] == 0, record["strikes"]
        assert not [e for e in record["events"] if e["seat"] == "B"], record["events"]
        assert game.forfeit is None or game.forfeit["seat"] == "A", game.forfeit
    # What the flooding seat did with its token is in its own events (refused joins).
    flooded = [e for g in games for e in g.record["events"] if e["seat"] == "A"]
    assert any(e["code"] == "join_refused" for e in flooded), flooded
    assert len(flooded) < 200  # counted, not listed one by one
    # The flood really happened, and cost the referee a bounded number of descriptors.
    lines = counts_file.read_text().splitlines() if counts_file.exists() else []
    counts = json.loads(lines[-1]) if lines else {}
    assert counts.get("connected", 0) + counts.get("refused", 0) >= 500, counts
    assert peak["fds"] - baseline < MAX_CONNECTIONS + 64, (peak, baseline, counts)


def test_an_oversized_answer_then_a_clean_exit_is_one_documented_outcome(
    unix_address: str, bot_dir: Path, log_dir: Path
) -> None:
    # Issue #14: a message over 64 KiB ends the stream (RESOURCE_EXHAUSTED); a bot
    # that then exits 0 was recorded as forfeit:crash.  docs/protocol.md: a disconnect.
    from referee_support import rawclient_launcher

    spec = make_spec(games=2)

    hosted = host(unix_address, spec, [sdk_random(bot_dir), rawclient_launcher("huge-exit0", "100000")], log_dir, 45)
    assert [g.ending for g in hosted.outcome.games] == ["forfeit:disconnect"] * 2
    assert hosted.exit_codes[1] == 0
    assert "RESOURCE_EXHAUSTED" in (log_dir / "seat1.log").read_text()
