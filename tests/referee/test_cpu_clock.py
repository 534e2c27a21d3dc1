"""The CPU move clock (issue 23 item 9, docs/time-control.md) with real local bots.

A decision is charged its seat's CPU time (here the bot's process tree), the
referee polls it while the decision is open so a CPU overrun is struck at
once, and the wall hard cap still strikes a bot that sleeps.  On a machine
kept busy by other processes, a bot that needs less CPU than its move time is
never struck, while the wall time the record shows next to its CPU time is
what the wall clock would have charged it.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_sdk.wire import arena_pb2 as pb
from helpers import CPU_BOT
from referee_support import host, make_spec, python_launcher, task_launcher, write_sdk_bot

from arena.match import TimeControl
from arena.referee.host import command_launcher
from arena.tables.cores import usable_cores


def cpu_bot(bot_dir: Path, **env: object) -> Any:
    """A launcher of :data:`CPU_BOT` with ``env`` (BURN_S, SLEEP_S, ON_PLAYS) added to its environment."""
    script = bot_dir / "cpu_bot.py"
    script.write_text(CPU_BOT)
    command = " ".join(shlex.quote(str(a)) for a in (sys.executable, script))
    return command_launcher(command, {k: str(v) for k, v in env.items()})


def plays_of(record: dict[str, Any], seat: str) -> list[dict[str, Any]]:
    return [a for h in record["hands"] for a in h["actions"] if a["seat"] == seat and a["kind"] == "play"]


def test_cpu_clock_strikes_a_bot_that_burns_cpu_not_one_that_sleeps(
    unix_address: str, bot_dir: Path, log_dir: Path
) -> None:
    # Move 0.3 s + bank 0.1 s of CPU; the hard cap (wall) is far away.  Play 2 burns 4.0 s of CPU:
    # struck once it passes 0.4 s (the referee polls its CPU), not when it answers nor at the hard cap.  Play 4 sleeps 1.0 s (over
    # move + bank in wall time, nearly no CPU): under the CPU clock that is no timeout.
    tc = TimeControl(move_s=0.3, bank_s=0.1, hard_cap_s=8.0, clock="cpu")
    bot = cpu_bot(bot_dir, BURN_S=4.0, ON_PLAYS="2")
    sleeper = cpu_bot(bot_dir, SLEEP_S=1.0, ON_PLAYS="4")
    spec = make_spec(tc=tc)

    hosted = host(unix_address, spec, [bot, python_launcher(write_sdk_bot(bot_dir))], log_dir, 120)
    [game] = hosted.outcome.games
    burned = plays_of(game.record, "A")[1]
    assert burned.get("default") == "timeout", burned
    # Struck for its CPU, by the poll: long before it would have answered at 4000 ms (room for a
    # referee starved by a loaded machine, whose poll runs late).
    assert 400 <= burned["cpu_ms"] < 3000, burned
    assert burned["ms"] < 8000 * 0.9, burned  # not at the wall hard cap
    assert "of CPU" in burned["reason"], burned
    assert game.record["meta"]["clock"] == "cpu"  # the record says which clock judged it

    hosted = host(unix_address, spec, [sleeper, python_launcher(write_sdk_bot(bot_dir))], log_dir, 120)
    [game] = hosted.outcome.games
    slept = plays_of(game.record, "A")[3]
    assert "default" not in slept, slept
    # About 1 s of wall time (less the referee's own stalls, lag_ms): a timeout on the wall clock
    # (move + bank is 0.4 s), charged only its CPU here.
    assert slept["ms"] >= 600 and slept["cpu_ms"] < 100, slept
    assert game.record["strikes"]["A"] == 0


def test_cpu_clock_still_strikes_a_sleeper_at_the_wall_hard_cap(
    unix_address: str, bot_dir: Path, log_dir: Path
) -> None:
    # Sleeping 1.5 s uses no CPU, but the hard cap of 0.8 s counts wall time.
    tc = TimeControl(move_s=0.3, bank_s=0.1, hard_cap_s=0.8, clock="cpu")
    spec = make_spec(tc=tc)
    hosted = host(
        unix_address, spec, [cpu_bot(bot_dir, SLEEP_S=1.5, ON_PLAYS="2"), python_launcher(write_sdk_bot(bot_dir))],
        log_dir, 120,
    )  # fmt: skip
    [game] = hosted.outcome.games
    slept = plays_of(game.record, "A")[1]
    assert slept.get("default") == "timeout", slept
    assert slept["ms"] >= 790 and slept["cpu_ms"] < 100, slept
    assert "hard cap" in slept["reason"], slept


def test_the_welcome_and_each_request_say_the_clock(unix_address: str, bot_dir: Path, log_dir: Path) -> None:
    import rawclient as rc

    for clock, expected in (("cpu", pb.CLOCK_CPU), ("wall", pb.CLOCK_WALL)):
        spec = make_spec(tc=TimeControl(move_s=0.5, bank_s=4.0, hard_cap_s=1.0, clock=clock))
        script = rc.Script()
        host(unix_address, spec, [task_launcher(script), python_launcher(write_sdk_bot(bot_dir))], log_dir, 60)
        [welcome] = script.of("welcome")
        assert welcome.time_control.clock == expected  # type: ignore[attr-defined]
        # What the referee enforces: min(move + bank, hard cap), CPU time under the CPU clock.
        assert script.requests and all(r.allowed_ms == 1000 for r in script.requests)


@pytest.fixture
def busy_machine() -> Iterator[list[int]]:
    """Busy-loop processes, one per usable core (at least 2), for the test's duration; killed by pid."""
    count = max(2, min(usable_cores(), 8))
    code = "import time\nend = time.monotonic() + 300\nwhile time.monotonic() < end: pass"
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(10)


def test_on_a_busy_machine_a_bot_within_its_cpu_is_never_struck(
    busy_machine: list[int], unix_address: str, bot_dir: Path, log_dir: Path
) -> None:
    # Every play needs 150 ms of CPU, under the 300 ms move time; no bank.  The machine is
    # busy (a busy loop per core, and whatever else runs), so each play takes longer in wall time.
    tc = TimeControl(move_s=0.3, bank_s=0.0, hard_cap_s=20.0, clock="cpu")
    spec = make_spec(tc=tc)
    bot = cpu_bot(bot_dir, BURN_S=0.15, ON_PLAYS="all")
    hosted = host(unix_address, spec, [bot, python_launcher(write_sdk_bot(bot_dir))], log_dir, 240)
    [game] = hosted.outcome.games
    plays = plays_of(game.record, "A")
    assert game.record["strikes"]["A"] == 0, [p for p in plays if "default" in p]
    assert len(plays) == 13 and all(p["cpu_ms"] >= 150 for p in plays), plays
    wall = sum(p["ms"] for p in plays)
    cpu = sum(p["cpu_ms"] for p in plays)
    over = sum(p["ms"] > tc.move_s * 1000 for p in plays)
    # The record carries both: the wall time is what the wall clock would have charged.
    print(f"busy machine ({len(busy_machine)} busy loops): wall {wall:.0f} ms, CPU {cpu:.0f} ms for 13 plays; "
          f"{over} plays over the move time in wall time (strikes under the wall clock)")  # fmt: skip
    assert wall > cpu, (wall, cpu)


def test_cpu_clock_strikes_a_sleeper_once_its_wall_allowance_is_used(
    unix_address: str, bot_dir: Path, log_dir: Path
) -> None:
    # Every play sleeps 0.9 s, just under the 1.0 s hard cap, with nearly no CPU.  Without a wall
    # allowance it is never struck and holds the table for the hard cap at every decision.  Its
    # allowance for the game: CPU_WALL_FACTOR × (0.2 s bank + 0.02 s a decision: the draft's
    # quick decisions add to it too); once used up a decision is struck at what is left, in wall time.
    from arena.match.spec import CPU_WALL_FACTOR

    tc = TimeControl(move_s=0.02, bank_s=0.2, hard_cap_s=1.0, strikes_to_forfeit=100, clock="cpu")
    spec = make_spec(tc=tc)
    sleeper = cpu_bot(bot_dir, SLEEP_S=0.9, ON_PLAYS="all")
    hosted = host(unix_address, spec, [sleeper, python_launcher(write_sdk_bot(bot_dir))], log_dir, 240)
    [game] = hosted.outcome.games
    decisions = [a for h in game.record["hands"] for a in h["actions"] if a["seat"] == "A"]
    plays = plays_of(game.record, "A")
    struck = [p for p in plays if p.get("default") == "timeout"]
    by_allowance = [p for p in struck if "of its allowance for the game" in p["reason"]]
    # From about the third play on (a loaded machine may stretch a sleep past the hard cap first).
    assert len(plays) == 13 and len(by_allowance) >= 6, plays
    for play in struck:
        assert "wall time" in play["reason"] and play["cpu_ms"] < 100, play
        assert play["ms"] < tc.hard_cap_s * 1000 + 100, play
    # Its wall time in the game stays within the allowance (the referee's own stalls, lag_ms, aside;
    # a strike may come a little late).  Unstruck, its 13 sleeps alone would take 11.7 s.
    allowance_ms = CPU_WALL_FACTOR * (tc.bank_s + len(decisions) * tc.move_s) * 1000
    assert sum(a["ms"] for a in decisions) <= allowance_ms + 100 * len(struck) < 13 * 900, decisions
