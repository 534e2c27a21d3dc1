"""Failures point at their decision (issue 26): a strike names the seat's decision and how to reproduce it.

Through the real ``arena match run`` (a real referee, bots as real SDK
processes over a Unix socket): one bot raises at its decision 5, the other
answers with a card it does not hold at its decision 5.  The record's struck
decisions carry the index (the seat's own count, 0-based, the index
``--decision`` takes), the match's output prints the reproduce command for
each, the bot's own log line carries it too, and running the printed command
raises the same exception at that decision (or shows the same illegal answer).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

STRUCK = 5  # the decision (0-based, among the seat's own in the game) where each bot goes wrong

#: A random bot that goes wrong at its decision ``struck`` with the statement ``fail``.
FAILING_AT = """\
import os
from arena_sdk import run
from arena_sdk.testing import RandomBot


class {cls}(RandomBot):
    name = "{name}"

    def on_game_start(self, info):
        self.asked = 0

    def ask(self):
        k, self.asked = self.asked, self.asked + 1
        if k == {struck}:
            {fail}

    def bid(self, view):
        self.ask()
        return super().bid(view)

    def play(self, view):
        self.ask()
        return super().play(view)


if __name__ == "__main__":
    run({cls}())
"""
RAISER = FAILING_AT.format(cls="Raiser", name="raiser", struck=STRUCK, fail='raise ValueError("boom at my decision %d" % k)')

ILLEGAL = """\
from arena_sdk import run
from arena_sdk.engine import CARDS
from arena_sdk.testing import RandomBot


class Illegal(RandomBot):
    name = "illegal"

    def on_game_start(self, info):
        self.asked = 0

    def bid(self, view):
        self.asked += 1
        return super().bid(view)

    def play(self, view):
        k, self.asked = self.asked, self.asked + 1
        if k == {struck}:  # a card it does not hold: illegal
            return next(c for c in CARDS if c not in view.hand)
        return super().play(view)


if __name__ == "__main__":
    run(Illegal())
"""


def _actions(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for h in record["hands"] for a in h["actions"]]


def _reproduce_lines(stdout: str) -> dict[str, str]:
    """The match output's strike lines by seat: ``seat -> the reproduce command``."""
    out = {}
    for line in stdout.splitlines():
        if "reproduce: " in line and ", decision " in line:
            seat = line.split("seat ", 1)[1].split(",", 1)[0]
            out[seat] = line.split("reproduce: ", 1)[1].strip()
    return out


def _argv(command: str) -> list[str]:
    """The printed command, run with this Python (it prints ``python -m arena_sdk.testing ...``)."""
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "arena_sdk.testing"], argv
    return [sys.executable, *argv[1:]]


def test_strikes_name_their_decision_and_the_printed_command_reproduces_them(run_cli, tmp_path: Path) -> None:
    raiser, illegal = tmp_path / "raiser.py", tmp_path / "illegal.py"
    raiser.write_text(RAISER)
    illegal.write_text(ILLEGAL.format(struck=STRUCK))
    result = run_cli(
        "match", "run", "--set", "max_hands=1", "--games", "1", "--out", "m",
        "--bot", f"cmd:{sys.executable} {raiser}", "--bot", f"cmd:{sys.executable} {illegal}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [record_path] = (tmp_path / "m").glob("*-g1.json")
    record = json.loads(record_path.read_text())

    # The record: each seat struck once, at its decision 5, with the referee's reason.
    struck = {a["seat"]: a for a in _actions(record) if a.get("default")}
    assert sorted(struck) == ["E", "N", "S", "W"], struck
    for seat, entry in struck.items():
        assert entry["decision"] == STRUCK, entry
        mine = [a for a in _actions(record) if a["seat"] == seat]
        assert mine.index(entry) == STRUCK  # the index counts the seat's own decisions
        assert entry["reason"], entry
    assert struck["N"]["default"] == "malformed" and struck["E"]["default"] == "illegal"
    assert "does not hold" in struck["E"]["reason"]
    assert "ValueError: boom at my decision 5" in struck["N"]["note"]  # the SDK says why it sent nothing

    # The match output: one line per strike with its decision and a reproduce command.
    commands = _reproduce_lines(result.stdout)
    assert sorted(commands) == ["E", "N", "S", "W"], result.stdout
    for seat in commands:
        assert f"seat {seat}, decision {STRUCK}: {struck[seat]['default']}" in result.stdout
        assert f"--seat {seat} --decision {STRUCK}" in commands[seat]
        assert str(record_path.relative_to(tmp_path)) in commands[seat] or str(record_path) in commands[seat]

    # The bot's own log line names the decision and the command (the record by its file name).
    logs = "".join(p.read_text() for p in (tmp_path / "m" / "logs").glob("*.log"))
    assert f"decision {STRUCK} of seat N in game {record['game_id']}" in logs, logs[-3000:]
    assert f"--replay {record_path.name} --seat N --decision {STRUCK}" in logs, logs[-3000:]
    assert f"--replay {record_path.name} --seat E --decision {STRUCK}" in logs, logs[-3000:]

    # Running the printed command reproduces the exception at that decision ...
    ran = subprocess.run(
        _argv(commands["N"]), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    assert "ValueError: boom at my decision 5" in ran.stderr
    assert "Traceback" in ran.stderr and "raiser.py" in ran.stderr
    assert f"decision {STRUCK} of seat N" in ran.stdout
    # ... and the illegal answer, said to be illegal.
    ran = subprocess.run(
        _argv(commands["E"]), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    assert "illegal" in ran.stdout and "does not hold" in ran.stdout, ran.stdout


# The process dies while asked: a crash, not a strike.
CRASHER = FAILING_AT.format(cls="Crasher", name="crasher", struck=STRUCK, fail="os._exit(3)")


def test_a_seat_lost_while_asked_names_that_decision(run_cli, tmp_path: Path) -> None:
    crasher = tmp_path / "crasher.py"
    crasher.write_text(CRASHER)
    result = run_cli(
        "match", "run", "--set", "max_hands=1", "--games", "1", "--out", "m",
        "--bot", f"cmd:{sys.executable} {crasher}", "--bot", "builtin:easy",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [record_path] = (tmp_path / "m").glob("*-g1.json")
    forfeit = json.loads(record_path.read_text())["result"]["forfeit"]
    assert forfeit["reason"] in ("crash", "disconnect") and forfeit["decision"] == STRUCK, forfeit
    seat = forfeit["seat"]
    assert f"seat {seat}, decision {STRUCK}: lost ({forfeit['reason']}" in result.stdout, result.stdout
    command = _reproduce_lines(result.stdout)[seat]
    assert f"--seat {seat} --decision {STRUCK}" in command and "crasher.py" in command, command
    # --json says the same, for scripts.
    again = run_cli(
        "match", "run", "--set", "max_hands=1", "--games", "1", "--out", "j", "--json",
        "--bot", f"cmd:{sys.executable} {crasher}", "--bot", "builtin:easy",
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    [game] = json.loads(again.stdout)["games"]
    lost = game["lost"]
    assert (lost["decision"], lost["reason"]) == (STRUCK, forfeit["reason"]), lost
    assert f"--seat {lost['seat']} --decision {STRUCK}" in lost["reproduce"], lost
