"""Absurd time values (issue 9, item 8): every time and limit is finite and in range, or exit 2.

A bank of 5,000,000 s used to overflow the uint32 milliseconds of Welcome (the
game was scored as ``forfeit:crash``), and ``inf``/``nan`` move times voided
every game.  Now the CLI and the tournament file refuse them with one line.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from arena_sdk.wire import arena_pb2 as pb
from helpers import one_clean_line, tournament_file

from arena.match import TimeControl
from arena.match.spec import MAX_SECONDS

REPO = Path(__file__).resolve().parents[2]
RANDOM = f"cmd:python {REPO / 'example_bots' / 'random' / 'bot.py'}"
QUICK = ("--games", "1", "--set", "max_hands=1")

ABSURD = [
    ("--time-bank", "5000000", "time bank"),
    ("--time-bank", "inf", "time bank"),
    ("--time-bank", "nan", "time bank"),
    ("--time-bank", "-1", "time bank"),
    ("--move-time", "inf", "move time"),
    ("--move-time", "nan", "move time"),
    ("--move-time", "-0.5", "move time"),
    ("--start-timeout", "nan", "start timeout"),
]


@pytest.mark.parametrize(("option", "value", "what"), ABSURD)
def test_match_run_refuses_absurd_times(run_cli, option, value, what):
    one_clean_line(run_cli("match", "run", "--bot", RANDOM, "--bot", RANDOM, *QUICK, option, value), what)


@pytest.mark.parametrize(("option", "value", "what"), [a for a in ABSURD if a[0] != "--start-timeout"][:4])
def test_serve_refuses_absurd_times(run_cli, tmp_path, option, value, what):
    # A refusal ends at once; the bound is only for a serve that would not refuse (a loaded machine starts slowly).
    one_clean_line(run_cli("serve", "--listen", f"unix:{tmp_path}/s.sock", option, value, timeout=120), what)


def test_hard_cap_and_strikes_are_checked(run_cli):
    one_clean_line(run_cli("match", "run", "--bot", RANDOM, "--bot", RANDOM, *QUICK, "--hard-cap", "inf"), "hard cap")
    one_clean_line(run_cli("match", "run", "--bot", RANDOM, "--bot", RANDOM, *QUICK, "--strikes", str(2**40)), "strikes")


@pytest.mark.parametrize(
    ("time", "extra", "what"),
    [
        ("bank = 5000000.0", "", "[time] time bank"),
        ("bank = inf", "", "[time] time bank"),
        ("bank = nan", "", "[time] time bank"),
        ("bank = -1.0", "", "[time] time bank"),
        ("move = inf", "", "[time] move time"),
        ("move = nan", "", "[time] move time"),
        ("hard_cap = nan", "", "[time] hard cap"),
        ("move = 1.0", "start_timeout = inf", "[tournament] start_timeout"),
        ("move = 1.0", "start_timeout = nan", "[tournament] start_timeout"),
    ],
)
def test_tournament_file_refuses_absurd_times(run_cli, tmp_path, time, extra, what):
    path = tmp_path / "t.toml"
    path.write_text(tournament_file(RANDOM, tournament=extra, time=time))
    one_clean_line(run_cli("tournament", "run", str(path)), what)
    assert not (tmp_path / "tournaments").exists()  # refused before anything was written


def test_tournament_limits_refuse_nan(run_cli, tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(tournament_file(RANDOM, limits="cpus = nan"))
    one_clean_line(run_cli("tournament", "run", str(path)), "cpus")


@pytest.mark.parametrize(
    "kwargs",
    [{"bank_s": 5_000_000.0}, {"bank_s": math.inf}, {"bank_s": math.nan}, {"bank_s": -1.0},
     {"move_s": math.nan}, {"move_s": math.inf}, {"move_s": 0.0001}, {"hard_cap_s": math.nan},
     {"strikes_to_forfeit": 2**32}],
)  # fmt: skip
def test_time_control_refuses(kwargs):
    with pytest.raises(ValueError):
        TimeControl(**kwargs)


def test_the_largest_allowed_values_fit_the_wire():
    """What TimeControl accepts always fits Welcome's uint32 milliseconds."""
    tc = TimeControl(move_s=MAX_SECONDS, bank_s=MAX_SECONDS, hard_cap_s=MAX_SECONDS, strikes_to_forfeit=10_000)
    message = pb.TimeControl(
        move_ms=int(tc.move_s * 1000), bank_ms=int(tc.bank_s * 1000), hard_cap_ms=int(tc.hard_cap_s * 1000),
        strikes_to_forfeit=tc.strikes_to_forfeit,
    )  # fmt: skip
    assert pb.TimeControl.FromString(message.SerializeToString()).bank_ms == 86_400_000


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "5000000"])
def test_bot_check_refuses_an_absurd_join_timeout(run_cli, value):
    one_clean_line(run_cli("bot", "check", "no-such-image:1", "--timeout", value), "start timeout")


SPRT = ("sprt", "--bot", RANDOM, "--bot", RANDOM, "--elo0", "0", "--elo1", "5", "--max-pairs", "1")


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "5000000"])
def test_sprt_refuses_an_absurd_start_timeout(run_cli, value):
    result = run_cli(*SPRT, "--out", "sprt-out", "--start-timeout", value, timeout=120)
    one_clean_line(result, "start timeout")


@pytest.mark.parametrize("value", ["100000000000", "100001", "0", "-3"])
def test_match_run_refuses_an_absurd_number_of_games(run_cli, value):
    """10^11 games used to hang building their deal seeds before the first game."""
    result = run_cli("match", "run", "--bot", RANDOM, "--bot", RANDOM, "--games", value, timeout=120)
    one_clean_line(result, "games must be between 1 and 100000")


def test_serve_refuses_an_absurd_number_of_games(run_cli, tmp_path):
    result = run_cli("serve", "--listen", f"unix:{tmp_path}/s.sock", "--games", "100000000000", timeout=120)
    one_clean_line(result, "games must be between 1 and 100000")


def test_the_games_bound_is_in_the_help(run_cli):
    assert "1 to 100000" in run_cli("match", "run", "--help").stdout
