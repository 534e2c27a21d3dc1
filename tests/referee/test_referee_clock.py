"""The referee's clock is honest (issue #16, clocks): answers are judged by when they
arrived, the referee's own stalls are never a bot's, and a slow bot is not a flooder."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import BURNER_BOT
from referee_support import arun, check_record, host, make_spec, python_launcher, write_sdk_bot

from arena.match import DecisionPrompt, TimeControl
from arena.referee.session import MAX_REFUSED_PER_GAME, RemoteSeat
from arena_sdk.engine import GameState, resolve_ruleset
from arena_sdk.wire import arena_pb2 as pb

#: How long the referee's loop is held up in the stall test (well over the move time).
STALL_S = 1.5


class StallingSeat(RemoteSeat):
    """A seat whose decisions 2 and 4 block the referee's event loop (a platform stall).

    Decision 2 blocks before its request is written, decision 4 right after
    (the bot answers while the referee is stuck): either way the time is the
    referee's, not the bot's.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.asked = 0

    def attach(self, write: Any, name: str, version: str) -> None:
        async def stalling(message: pb.RefereeMessage) -> None:
            await write(message)
            if message.WhichOneof("message") == "request" and self.asked == 4:
                time.sleep(STALL_S)

        super().attach(stalling, name, version)

    async def decide(self, prompt: DecisionPrompt, timeout: float) -> Any:
        self.asked += 1
        if self.asked == 2:
            asyncio.get_running_loop().call_soon(time.sleep, STALL_S)
        return await super().decide(prompt, timeout)


def test_a_stall_of_the_referee_never_strikes_a_bot(unix_address: str, bot_dir: Path, log_dir: Path) -> None:
    tc = TimeControl(move_s=0.5, bank_s=0.0, hard_cap_s=0.5)
    spec = make_spec(tc=tc)
    seats = [StallingSeat(0, spec.match_id), RemoteSeat(1, spec.match_id)]
    bot = write_sdk_bot(bot_dir, "random")

    hosted = host(unix_address, spec, [python_launcher(bot), python_launcher(bot)], log_dir, 60, seats=seats)
    [game] = hosted.outcome.games
    record = check_record(game.record)
    assert record["result"]["ending"] == "max_hands", record["result"]
    actions = [a for h in record["hands"] for a in h["actions"]]
    assert record["strikes"] == {"A": 0, "B": 0}, [a for a in actions if a.get("lag_ms")]
    assert all(a["ms"] < 500 for a in actions)
    # Decision 2 stalled before its request went out: charged to the platform.
    second = [a for a in actions if a["seat"] == "A"][1]
    assert second["lag_ms"] >= (STALL_S - 0.2) * 1000, second


def _prompt(rid: int) -> DecisionPrompt:
    state = GameState.new(resolve_ruleset("pagat"), "slow")
    assert state.to_move is not None
    return DecisionPrompt(rid, state.view(state.to_move), 1, 0)


def test_late_answers_of_a_slow_bot_are_not_a_flood() -> None:
    # Issue #16.4: every late answer used to count as a refused message, and the
    # 51st lost the seat (forfeit:protocol).  Late answers are the strikes' business.
    async def scenario() -> RemoteSeat:
        seat = RemoteSeat(0, "m")

        async def write(message: pb.RefereeMessage) -> None:
            return None

        seat.attach(write, "slow", "1")
        for rid in range(1, MAX_REFUSED_PER_GAME + 11):
            with pytest.raises(TimeoutError):
                await seat.decide(_prompt(rid), 0.001)
            seat.receive(pb.BotMessage(answer=pb.Answer(request_id=rid, bid=1)))
        assert seat.lost() is None
        stale = [e for e in seat.take_events() if e.code == "stale_answer"]
        assert len(stale) == MAX_REFUSED_PER_GAME + 10
        # A second answer to the same timed-out request is a refused message again.
        seat.receive(pb.BotMessage(answer=pb.Answer(request_id=1, bid=1)))
        assert [e.code for e in seat.take_events()] == ["stale_answer"]
        return seat

    arun(scenario(), 30)


def test_each_request_says_what_the_referee_will_enforce(unix_address: str, bot_dir: Path, log_dir: Path) -> None:
    # Issue #16.2: move 0.5 s, bank 4 s, hard cap 1 s: the bot is struck at 1 s, so it is told 1 s.
    import rawclient as rc
    from referee_support import task_launcher

    spec = make_spec(tc=TimeControl(move_s=0.5, bank_s=4.0, hard_cap_s=1.0))
    script = rc.Script()

    host(unix_address, spec, [task_launcher(script), python_launcher(write_sdk_bot(bot_dir))], log_dir, 60)
    assert script.requests and all(r.allowed_ms == 1000 for r in script.requests)
    [welcome] = script.of("welcome")
    assert welcome.time_control.hard_cap_ms == 1000  # type: ignore[attr-defined]


def test_cpu_time_per_decision_is_recorded_next_to_wall_time(
    unix_address: str, bot_dir: Path, log_dir: Path
) -> None:
    # Issue #16.5: an author tells "my bot was slow" (CPU) from "the machine was busy" (wall).
    burn = 0.3
    script = bot_dir / "burner.py"
    script.write_text(BURNER_BOT.format(burn=burn))
    spec = make_spec(tc=TimeControl(move_s=3.0, bank_s=3.0, hard_cap_s=6.0))

    hosted = host(unix_address, spec, [python_launcher(script), python_launcher(write_sdk_bot(bot_dir))], log_dir, 60)
    [game] = hosted.outcome.games
    record = check_record(game.record)
    plays = [a for h in record["hands"] for a in h["actions"] if a["seat"] == "A" and a["kind"] == "play"]
    burned, slept = plays[1], plays[2]
    assert burn * 1000 * 0.95 <= burned["cpu_ms"] <= burned["ms"] + 5, burned
    # Slow by the clock, not by CPU (the referee's own lag on a loaded machine is not charged, hence the half).
    assert slept["cpu_ms"] < 50 and slept["ms"] >= 0.5 * burn * 1000, slept
    assert all("cpu_ms" in a and "ref_us" in a for h in record["hands"] for a in h["actions"])
    assert game.stats[0].cpu_measured == game.stats[0].decisions
    assert 0 < game.stats[0].ref_s < 1.0
    # The same figures in `arena replay --json` and the match summary's timing.
    from typer.testing import CliRunner

    from arena.cli import app
    from arena.match.output import write_record
    from arena.match.timing import stats_timing

    path = write_record(log_dir.parent / "records", game)
    shown = CliRunner().invoke(app, ["replay", str(path), "--json"])
    assert shown.exit_code == 0, shown.output
    timing = json.loads(shown.output)["timing"]
    assert timing["A"]["cpu_ms"] >= burn * 1000 * 0.95 and timing["A"]["decisions"] == game.stats[0].decisions
    live = stats_timing(2, game.stats)
    assert live["A"]["cpu_ms"] == pytest.approx(timing["A"]["cpu_ms"], abs=1.0)
    assert live["A"]["ms"] == pytest.approx(timing["A"]["ms"], abs=1.0)
