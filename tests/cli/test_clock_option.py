"""``--clock`` and ``[time] clock`` (issue 23 item 9): checked, passed through, warned about.

The CPU move clock itself is tested with real bots in tests/referee/test_cpu_clock.py
and tests/sandbox/test_container_cpu_clock.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import one_clean_line, tournament_file

from arena.ladder.config import load_ladder_config, template
from arena.match import TimeControl, oversubscribed_warning
from arena.tournament import ConfigError, load_config
from arena.tables.cores import usable_cores

REPO = Path(__file__).resolve().parents[2]
RANDOM = f"cmd:python {REPO / 'example_bots' / 'random' / 'bot.py'}"

#: The [rules] of the tournament files here: two players, one hand (short).
RULES = 'preset = "two-player"\nset = { max_hands = 1 }'


def test_time_control_refuses_an_unknown_clock() -> None:
    with pytest.raises(ValueError, match="clock must be one of wall, cpu"):
        TimeControl(clock="cycles")
    assert TimeControl().clock == "wall" and TimeControl(clock="cpu").cpu


def test_match_run_refuses_an_unknown_clock(run_cli) -> None:
    result = run_cli("match", "run", "--bot", RANDOM, "--bot", RANDOM, "--games", "1", "--clock", "cycles")
    one_clean_line(result, "clock must be one of wall, cpu")


def test_match_run_plays_under_the_cpu_clock(run_cli, tmp_path: Path) -> None:
    result = run_cli(
        "match", "run", "--bot", RANDOM, "--bot", RANDOM, "--games", "1", "--rules", "two-player",
        "--set", "max_hands=1", "--clock", "cpu", "--out", "out", "--seed", "clock-" + "ab" * 12,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [path] = (tmp_path / "out").glob("*-g1.json")
    record = json.loads(path.read_text())
    assert record["meta"]["clock"] == "cpu"
    actions = [a for h in record["hands"] for a in h["actions"]]
    assert actions and all("cpu_ms" in a for a in actions)  # what each decision was charged


def test_tournament_file_clock(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(tournament_file(RANDOM, rules=RULES, time='clock = "cpu"'))
    assert load_config(path).time_control.clock == "cpu"
    path.write_text(tournament_file(RANDOM, rules=RULES))
    assert load_config(path).time_control.clock == "wall"  # nothing changes for a file that does not say
    path.write_text(tournament_file(RANDOM, rules=RULES, time='clock = "cycles"'))
    with pytest.raises(ConfigError, match=r"\[time\] clock must be one of wall, cpu"):
        load_config(path)


def test_ladder_file_clock(tmp_path: Path) -> None:
    text = template("lad", "pagat", {})
    (tmp_path / "ladder.toml").write_text(text)
    assert load_ladder_config(tmp_path).time_control.clock == "cpu"  # the ladder's default (issue 36)
    (tmp_path / "ladder.toml").write_text(text.replace('clock = "cpu"', 'clock = "wall"'))
    assert load_ladder_config(tmp_path).time_control.clock == "wall"


def test_the_warning_when_more_tables_think_than_there_are_cores() -> None:
    assert oversubscribed_warning(2, 2) is None
    wall = oversubscribed_warning(8, 2)
    assert wall is not None and "8 tables can think at once on 2 cores" in wall and "use the CPU clock" in wall
    cpu = oversubscribed_warning(8, 2, "cpu", 60.0)
    assert cpu is not None and "0.25 of a core" in cpu and "hard cap (60 s)" in cpu


def test_tournament_run_warns_when_oversubscribed(run_cli, tmp_path: Path) -> None:
    tables = usable_cores() + 2
    path = tmp_path / "t.toml"
    path.write_text(tournament_file(RANDOM, tournament=f"concurrency = {tables}", rules=RULES, time='clock = "cpu"'))
    result = run_cli("tournament", "run", str(path), "--out", "res", timeout=300)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and f"{tables} tables can think at once" in warnings[0], result.stderr


def test_a_tables_deadline_on_the_cpu_clock_is_bounded_by_the_wall_allowance() -> None:
    # A table past its deadline is voided.  On the CPU clock a seat may take, in wall time, its
    # wall allowance for the game (CPU_WALL_FACTOR × bank and move times), each decision at most
    # the hard cap: the deadline allows that, and no more (before the wall allowance it was
    # players × decisions × hard cap: 213 hours for a pagat game).
    from arena_sdk.engine import resolve_ruleset

    from arena.match.spec import CPU_WALL_FACTOR
    from arena.sandbox.docker import ContainerLimits
    from arena.tables.spec import DEADLINE_SLACK_S, SeatSpec, TableSpec

    rules = resolve_ruleset("two-player", {"max_hands": 2})
    seats = (SeatSpec("a", "cmd", "bot"), SeatSpec("b", "cmd", "bot"))

    def play_time(clock: str) -> float:
        tc = TimeControl(move_s=1.0, bank_s=10.0, hard_cap_s=20.0, clock=clock)
        spec = TableSpec("t", "m", "run", rules, ("g",), ("s",), tc, ContainerLimits(), 5.0, seats)
        return spec.deadline_s - 5.0 - DEADLINE_SLACK_S

    per_seat = 2 * (13 + 16)  # max_hands × decisions a hand, at most (13 of them the draft's)
    assert play_time("wall") == pytest.approx(2 * (10.0 + per_seat * 1.0))
    assert play_time("cpu") == pytest.approx(2 * CPU_WALL_FACTOR * (10.0 + per_seat * 1.0))
    assert play_time("cpu") < 2 * per_seat * 20.0  # below the hard cap at every decision


def test_serve_has_no_clock_option(run_cli, tmp_path: Path) -> None:
    # Its bots join from outside: their CPU cannot be read, so the CPU clock cannot be offered there.
    result = run_cli("serve", "--listen", f"unix:{tmp_path}/s.sock", "--clock", "cpu", timeout=120)
    assert result.returncode == 2 and "No such option" in result.stderr and "--clock" in result.stderr, result.stderr
