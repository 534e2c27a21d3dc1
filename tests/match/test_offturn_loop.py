"""Off-turn CPU in the match loop (issue 36): counted per seat and game, struck past the threshold.

The seats here are scripted: each reply says how much CPU the seat used while it
was not asked before that request (what the referee's RemoteSeat measures with
the bot's CPU meter; tests/referee/test_offturn_cpu.py plays real bots).  The
threshold is docs/time-control.md's: OFFTURN_FREE_S plus OFFTURN_SHARE of the
wall time not asked, counted since the game's start or the last off-turn strike.
"""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from arena_sdk.engine import replay_record
from test_loop import ScriptedSeat, random_policy, spec

from arena.match import DecisionPrompt, ManualClock, SeatReply, TimeControl, run_match_loop
from arena.match.spec import OFFTURN_FREE_S, OFFTURN_SHARE
from arena.match.timing import record_timing, stats_timing

#: The wall time a seat is not asked before each of its requests, in these games.
IDLE_S = 0.2


def offturn_policy(share: float):
    """Answer like random_policy; before each request the seat used ``share`` of a core for IDLE_S."""

    def policy(prompt: DecisionPrompt, rng: random.Random) -> tuple[float, SeatReply]:
        think, reply = random_policy(prompt, rng)
        reply.offturn_cpu_s = share * IDLE_S
        reply.offturn_s = IDLE_S
        return think, reply

    return policy


class TailSeat(ScriptedSeat):
    """A scripted seat that also reports the span after its last answer of a game."""

    def __init__(self, *args, tail: tuple[float | None, float], **kw) -> None:
        super().__init__(*args, **kw)
        self.tail = tail
        self.tails = 0

    def offturn_tail(self) -> tuple[float | None, float]:
        self.tails += 1
        return self.tail


def play(policies: dict[int, float], strikes: int = 3, **kw) -> tuple[list, list[ScriptedSeat]]:
    clock = ManualClock()
    seats = [
        TailSeat(s, clock, offturn_policy(policies[s]), tail=(policies[s] * IDLE_S, IDLE_S))
        if s in policies
        else ScriptedSeat(s, clock)
        for s in range(4)
    ]
    tc = TimeControl(1.0, 5.0, 10.0, strikes, **kw)
    outcome = asyncio.run(run_match_loop(spec(games=1, tc=tc, max_hands="2"), seats, clock))
    return outcome.games, seats


def offturn_strikes(record: dict) -> list[dict]:
    return [a for h in record["hands"] for a in h["actions"] if a.get("default") == "offturn"]


def test_a_modest_background_thread_is_recorded_and_never_struck():
    # A quarter of a core, less a little, over the whole game: within OFFTURN_SHARE.
    share = OFFTURN_SHARE * 0.95
    [game], seats = play({0: share, 1: 0.0})
    assert game.ending == "max_hands" and sum(st.strikes for st in game.stats) == 0
    north, east = game.stats[0], game.stats[1]
    spans = north.decisions + 1  # one before each request, and the tail after the last answer
    assert seats[0].tails == 1
    assert abs(north.offturn_cpu_s - spans * share * IDLE_S) < 1e-9
    assert abs(north.offturn_s - spans * IDLE_S) < 1e-9
    assert north.offturn_measured and east.offturn_measured and east.offturn_cpu_s == 0.0
    assert not game.stats[2].offturn_measured  # a seat with no meter has no figures
    # In the record (under meta: any reader replays it) and in the match's timing, the same figures.
    offturn = game.record["meta"]["offturn"]
    assert set(offturn) == {"N", "E"}
    assert offturn["N"] == {"cpu_ms": round(north.offturn_cpu_s * 1000, 3), "ms": round(north.offturn_s * 1000, 3)}
    replay_record(json.loads(json.dumps(game.record)))
    live, stored = stats_timing(4, game.stats), record_timing(game.record)
    for seat in "NESW":
        for key in ("offturn_cpu_ms", "offturn_ms"):
            assert live[seat][key] == stored[seat][key], (seat, key)
    assert live["N"]["offturn_cpu_ms"] == offturn["N"]["cpu_ms"] and live["S"]["offturn_cpu_ms"] is None


def test_a_seat_spinning_between_its_decisions_is_struck_until_it_forfeits():
    [game], _ = play({0: 1.0, 1: 0.0})
    struck = offturn_strikes(game.record)
    assert [a["seat"] for a in struck] == ["N"] * 3
    assert game.ending == "forfeit:timeout" and game.forfeit is not None
    assert game.forfeit["seat"] == "N" and "offturn" in game.forfeit["detail"]
    assert "while not asked" in struck[0]["reason"] and struck[0]["decision"] >= 0
    # Each strike counts from the one before: a whole core for IDLE_S a span passes the
    # allowance once the spans add up to OFFTURN_FREE_S / (1 - OFFTURN_SHARE) of wall time.
    spans_per_strike = int(OFFTURN_FREE_S / ((1 - OFFTURN_SHARE) * IDLE_S)) + 1
    decisions = [a["decision"] for a in struck]
    assert decisions == [spans_per_strike - 1, 2 * spans_per_strike - 1, 3 * spans_per_strike - 1]
    assert game.stats[1].strikes == 0
    replay_record(json.loads(json.dumps(game.record)))


def test_off_turn_strikes_count_on_the_cpu_clock_too():
    [game], _ = play({1: 1.0}, strikes=10, clock="cpu")
    assert {a["seat"] for a in offturn_strikes(game.record)} == {"E"}
    assert game.record["meta"]["clock"] == "cpu" and "E" in game.record["meta"]["offturn"]


def test_the_limit_is_part_of_the_time_control_and_checked():
    assert TimeControl().offturn_free_s == OFFTURN_FREE_S and TimeControl().offturn_share == OFFTURN_SHARE
    for bad in ({"offturn_free_s": -1.0}, {"offturn_free_s": float("nan")}, {"offturn_share": -0.1},
                {"offturn_share": float("inf")}, {"offturn_share": True}):  # fmt: skip
        with pytest.raises(ValueError, match="off-turn CPU"):
            TimeControl(**bad)
    # A stricter limit strikes what the default spares: a tenth of a core.
    [game], _ = play({0: 0.1}, strikes=10, offturn_free_s=0.1, offturn_share=0.05)
    assert offturn_strikes(game.record) and {a["seat"] for a in offturn_strikes(game.record)} == {"N"}
    [game], _ = play({0: 0.1}, strikes=10)
    assert not offturn_strikes(game.record)


def test_arena_replay_reads_records_with_and_without_off_turn_figures(tmp_path):
    from typer.testing import CliRunner

    from arena.cli import app
    from arena.match.output import write_record

    [game], _ = play({0: 1.0, 1: 0.0})
    path = write_record(tmp_path / "new", game)
    old = json.loads(path.read_text())
    del old["meta"]["offturn"]  # a round-3 record: no off-turn figures (and no offturn strike code known)
    for action in (a for h in old["hands"] for a in h["actions"]):
        if action.get("default") == "offturn":
            action["default"] = "timeout"
    old_path = tmp_path / "old.json"
    old_path.write_text(json.dumps(old))
    runner = CliRunner()
    new_shown = runner.invoke(app, ["replay", str(path), "--json"])
    old_shown = runner.invoke(app, ["replay", str(old_path), "--json"])
    assert new_shown.exit_code == 0 and old_shown.exit_code == 0, (new_shown.output, old_shown.output)
    new_timing, old_timing = json.loads(new_shown.output)["timing"], json.loads(old_shown.output)["timing"]
    assert new_timing["N"]["offturn_cpu_ms"] == game.record["meta"]["offturn"]["N"]["cpu_ms"] > 0
    assert old_timing["N"]["offturn_cpu_ms"] is None and old_timing["N"]["offturn_ms"] is None
