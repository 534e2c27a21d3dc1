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



PREJOIN_FLOOD_BOT = """\
import os, subprocess, sys, time
from arena_sdk import Bot, run
from arena_sdk.client import token_from_env

# The helper starts before this seat (or any other) has joined.  With the
# seat's own token, half of its streams join as this seat (the first may take
# it: that is the flooder's own loss); with a stranger's token they are refused.
token = token_from_env()
os.environ["ARENA_TOKEN"] = token if {own_token!r} else "not-a-token-of-this-match"
with open({out!r}, "w") as out:
    helper = subprocess.Popen([sys.executable, {h2client!r}, "flood", "{count}"], stdout=out)


class Flooder(Bot):
    name = "flooder"

    def bid(self, view):
        return 1

    def play(self, view):
        return view.legal_cards()[0]


time.sleep(0.5)  # let the flood build up: this seat has to join through it too
try:
    run(Flooder(), ["--token", token])  # its own token (the environment holds the helper's)
except BaseException:
    pass
time.sleep(60)  # keep the helper flooding (it stops with its parent) until the host stops this seat
"""

HONEST_AFTER_FLOOD = """\
import asyncio, json, os, runpy, sys, time
from arena_sdk.client import join_match, token_from_env

# Join only once the flood holds its connections (and so the join slots).
deadline = time.monotonic() + 10
counts = {{}}
while time.monotonic() < deadline and counts.get("connected", 0) < {count}:
    try:
        lines = open({out!r}).read().splitlines()
        counts = json.loads(lines[-1]) if lines else {{}}
    except (OSError, ValueError):
        pass
    time.sleep(0.02)
time.sleep(0.3)
print("joining during the flood:", counts, flush=True)
bot = runpy.run_path({bot!r}, run_name="honest")["ScriptBot"]()
# No SDK retry: a bot in another language may not retry, so the referee alone must seat it.
asyncio.run(join_match(bot, os.environ["ARENA_ADDRESS"], token_from_env(), retry_join=False))
"""


def honest_seats_unharmed(hosted: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The one game of a flood test was played and scored, and E, S and W (honest) joined
    (their names are in the record), were charged nothing and exited 0; any forfeit is the
    flooder N's.  Returns the record and the forfeit."""
    games = hosted.outcome.games
    assert len(games) == 1 and games[0].record is not None and games[0].void is None
    record = check_record(games[0].record)
    honest_seats = ("E", "S", "W")
    assert [record["seats"][s]["name"] for s in honest_seats] == ["sdk-random"] * 3, record["seats"]
    assert not [e for e in record["events"] if e["seat"] in honest_seats], record["events"]
    assert all(record["strikes"][s] == 0 for s in honest_seats), record["strikes"]
    assert hosted.exit_codes[1:] == [0, 0, 0]
    forfeit = games[0].forfeit
    assert forfeit is None or forfeit["seat"] == "N", forfeit
    return record, forfeit


@pytest.mark.parametrize("own_token", [True, False], ids=["own-token", "stranger-token"])
def test_a_flood_before_the_others_join_costs_no_honest_seat_its_join(
    unix_address: str, bot_dir: Path, log_dir: Path, tmp_path: Path, own_token: bool
) -> None:
    # Issue #9.2: seat N's helper floods the socket with streams that send no
    # Join (or a Join the referee refuses) before E, S and W connect.  On the
    # old referee the pending-join limit was checked before the token was
    # read: an honest seat's Join was refused with RESOURCE_EXHAUSTED ("too
    # many streams waiting to join"), the bot exited 1 and was charged
    # lost:crash.  The flood stays under the connection cap: what it tests is
    # the join slots (a flood that fills the connection cap itself is a
    # limit of one shared socket, docs/protocol.md "Connection").
    from referee_support import write_sdk_bot

    count = MAX_CONNECTIONS - 8  # room for the four seats; 3x the join slots in streams without a Join
    counts_file = tmp_path / "flood.json"
    flooder = bot_dir / "prejoin_flooder.py"
    flooder.write_text(
        PREJOIN_FLOOD_BOT.format(own_token=own_token, out=str(counts_file), h2client=str(H2CLIENT), count=count)
    )
    honest = bot_dir / "honest_after_flood.py"
    bot = write_sdk_bot(bot_dir, "random")
    honest.write_text(HONEST_AFTER_FLOOD.format(out=str(counts_file), bot=str(bot), count=count))
    # A seat its helper took (own token) and that never answers is out after three 1 s timeouts.
    tc = TimeControl(move_s=0.3, bank_s=0.7, hard_cap_s=1.0)
    spec = make_spec(preset="pagat", games=1, max_hands=1, tc=tc)
    launchers = [python_launcher(flooder)] + [python_launcher(honest) for _ in range(3)]

    async def scenario() -> Any:
        async with running_referee(unix_address) as server:
            hosted = await host_match(
                server, spec, launchers, server.addresses[0], log_dir=log_dir, start_timeout=15.0
            )
            return hosted, server.service.refused_floods

    started = time.monotonic()
    hosted, refused_floods = arun(scenario(), 60)
    took = time.monotonic() - started
    record, forfeit = honest_seats_unharmed(hosted)
    if not own_token:
        # Nothing kept the flooder's own seat out either: the game was played to its end.
        assert forfeit is None and record["result"]["ending"] == "max_hands", record["result"]
    # The flood was on, and more streams waited for a Join than the referee lets wait long.
    lines = counts_file.read_text().splitlines() if counts_file.exists() else []
    counts = json.loads(lines[-1]) if lines else {}
    assert counts.get("connected", 0) >= count, counts
    assert refused_floods > 0
    if own_token:
        # What the helper did with the seat's token is in that seat's own events.
        assert any(e["code"] == "join_refused" for e in record["events"] if e["seat"] == "N"), record["events"]
    assert took < 30


@pytest.mark.parametrize("own_token", [True, False], ids=["own-token", "stranger-token"])
def test_a_flood_over_the_shared_cap_before_the_others_join_costs_no_honest_seat_its_join(
    bot_dir: Path, log_dir: Path, tmp_path: Path, own_token: bool
) -> None:
    # Issue #9.2, the rest of it: seat N's helper opens twice the old shared
    # connection cap (64 > MAX_CONNECTIONS) and holds them before E, S and W
    # connect.  When all seats shared one socket, the cap was full: the honest
    # seats could not connect at all and were charged "did not join".  Now
    # every seat has its own socket and listener (play_seated, as `arena match
    # run` and tournament tables play): the flood fills only N's own cap.
    import sys

    from referee_support import write_sdk_bot

    from arena.referee.botspec import BotSpec
    from arena.referee.local_match import play_seated
    from arena.referee.server import SEAT_MAX_CONNECTIONS

    count = 2 * MAX_CONNECTIONS
    counts_file = tmp_path / "flood.json"
    flooder = bot_dir / "prejoin_flooder.py"
    flooder.write_text(
        PREJOIN_FLOOD_BOT.format(own_token=own_token, out=str(counts_file), h2client=str(H2CLIENT), count=count)
    )
    honest = bot_dir / "honest_after_flood.py"
    bot = write_sdk_bot(bot_dir, "random")
    honest.write_text(HONEST_AFTER_FLOOD.format(out=str(counts_file), bot=str(bot), count=count))
    tc = TimeControl(move_s=0.3, bank_s=0.7, hard_cap_s=1.0)
    spec = make_spec(preset="pagat", games=1, max_hands=1, tc=tc)
    bots = [BotSpec("cmd", f"{sys.executable} {flooder}")] + [BotSpec("cmd", f"{sys.executable} {honest}")] * 3
    peak = {"fds": 0}

    async def watch_fds() -> None:
        while True:
            peak["fds"] = max(peak["fds"], _open_fds())
            await asyncio.sleep(0.02)

    async def scenario() -> Any:
        watcher = asyncio.ensure_future(watch_fds())
        try:
            return await play_seated(spec, bots, log_dir=log_dir, start_timeout=10.0)
        finally:
            watcher.cancel()

    baseline = _open_fds()
    started = time.monotonic()
    hosted = arun(scenario(), 60)
    took = time.monotonic() - started
    honest_seats_unharmed(hosted)
    # The flood was on: more connections than the old shared cap, and N's own cap turned the rest away.
    lines = counts_file.read_text().splitlines() if counts_file.exists() else []
    counts = json.loads(lines[-1]) if lines else {}
    assert counts.get("connected", 0) + counts.get("refused", 0) >= count, counts
    assert counts.get("closed_by_referee", 0) + counts.get("refused", 0) > 0, counts
    # What it cost the runner: about one seat cap of descriptors, nowhere near the flood.
    assert peak["fds"] - baseline < SEAT_MAX_CONNECTIONS + 4 * 3 + 48, (peak, baseline, counts)
    assert took < 30


def test_a_seats_socket_takes_only_that_seats_token(sock_dir: Path) -> None:
    # A seat's own listener seats no one else: another seat's token is refused
    # there (PERMISSION_DENIED, charged to nobody), and the seat it names can still join.
    import grpc

    from arena.referee.session import RemoteSeat
    from arena_sdk.protocol import PROTOCOL_VERSION
    from arena_sdk.wire import arena_pb2 as pb
    from arena_sdk.wire import arena_pb2_grpc as pb_grpc

    spec = make_spec()

    async def join(address: str, token: str) -> Any:
        async with grpc.aio.insecure_channel(address) as channel:
            call = pb_grpc.RefereeStub(channel).Play()
            await call.write(pb.BotMessage(join=pb.Join(token=token, protocol_version=PROTOCOL_VERSION)))
            try:
                return (await call.read()).WhichOneof("message")
            except grpc.aio.AioRpcError as exc:
                return exc.code()

    async def scenario() -> Any:
        async with running_referee() as server:
            seats = [RemoteSeat(s, spec.match_id) for s in range(2)]
            server.add_match(spec.match_id, spec.rules, spec.time_control, 1, seats)
            (sock_dir / "seat-A").mkdir()
            address_a = await server.add_seat_listener(f"unix:{sock_dir}/seat-A/referee.sock", seats[0])
            wrong = await join(address_a, seats[1].token)
            right = await join(address_a, seats[0].token)
            return wrong, right, seats, list(server.service.refusals)

    wrong, right, seats, refusals = arun(scenario(), 30)
    assert wrong == grpc.StatusCode.PERMISSION_DENIED
    assert right == "welcome"
    assert not seats[1].joined.is_set() and seats[1].lost() is None
    assert refusals == [("PERMISSION_DENIED", "this socket serves seat 0 only")]
