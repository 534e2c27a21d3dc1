"""What the one-runner-per-directory tests share: a directory's fingerprint, bots held at a gate, processes.

A runner whose bots wait at a gate writes nothing while they wait: its
directory is still, so a second runner's refusal can be checked to change
nothing at all (every file's bytes and modification time).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: The first decision of each table waits for the gate file this long at most (then the bot plays on).
GATE_WAIT_S = 600

GATE_BOT = '''
import os, sys, time
from pathlib import Path
sys.path.insert(0, {random_dir!r})
from bot import RandomBot
from arena_sdk import run

GATE, ARRIVED = Path({gate!r}), Path({arrived!r})


class GateBot(RandomBot):
    """The random bot, held at its first decision of game {hold_at} (or of the games {hold_in}) until the gate opens."""

    games = 0
    game_id = ""
    waited = False

    def on_game_start(self, info):
        self.games += 1
        self.game_id = info.game_id

    def hold(self):
        at = self.game_id in {hold_in} if {hold_in} else self.games == {hold_at}
        if at and not self.waited:
            self.waited = True
            (ARRIVED / str(os.getpid())).touch()
            deadline = time.monotonic() + {wait}
            while not GATE.exists() and time.monotonic() < deadline:
                time.sleep(0.05)

    def bid(self, view):
        self.hold()
        return super().bid(view)

    def play(self, view):
        self.hold()
        return super().play(view)

    def blind_nil(self, view):
        self.hold()
        return super().blind_nil(view)

    def draw(self, view):
        self.hold()
        return super().draw(view)


if __name__ == "__main__":
    run(GateBot())
'''


class Gate:
    """Bots that wait at their first decision of game ``hold_at`` (of their process), or of the games whose ids
    are ``hold_in``, until :meth:`open`."""

    def __init__(self, tmp: Path, name: str = "gate", *, hold_at: int = 1, hold_in: tuple[str, ...] = ()) -> None:
        self.folder = tmp / f"bot-{name}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.file = tmp / f"{name}.open"
        self.arrived = tmp / f"{name}.arrived"
        self.arrived.mkdir(exist_ok=True)
        self.script = self.folder / "bot.py"
        self.script.write_text(GATE_BOT.format(
            random_dir=str(REPO / "example_bots" / "random"), gate=str(self.file), arrived=str(self.arrived),
            wait=GATE_WAIT_S, hold_at=hold_at, hold_in=set(hold_in),
        ))  # fmt: skip

    @property
    def spec(self) -> str:
        """The bot as a ``cmd:`` spec."""
        return f"cmd:{sys.executable} {self.script}"

    def waiting(self) -> int:
        """How many bots have reached the gate."""
        return len(list(self.arrived.iterdir()))

    def open(self) -> None:
        self.file.touch()


def fingerprint(directory: Path) -> dict[str, tuple[int, int, str] | None]:
    """Every path under ``directory``: a file's size, modification time and SHA-256 (None for a directory)."""
    found: dict[str, tuple[int, int, str] | None] = {}
    for path in sorted(directory.rglob("*")):
        name = str(path.relative_to(directory))
        if path.is_dir():
            found[name] = None
            continue
        info = path.stat()
        found[name] = (info.st_size, info.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def wait_for(check: Callable[[], object], what: str, timeout: float = 240) -> object:
    """Poll ``check`` until it is truthy (a generous bound: the machine may be loaded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"not seen within {timeout:.0f} s: {what}")


def arena_process(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    """``arena ARGS`` as a process of its own session (so everything it started can be stopped with it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COLUMNS": "200"}, start_new_session=True,
    )  # fmt: skip


def kill_runner(process: subprocess.Popen[str]) -> None:
    """SIGKILL the runner alone (as a crash would: its tables and bots are left to end by themselves), and reap it."""
    if process.poll() is None:
        process.kill()
    process.communicate(timeout=60)


def end_own_processes(marker: str) -> None:
    """Stop, by pid, what is left of this test's processes (command lines holding ``marker``, a path of its own)."""
    from tournament_support import live_processes

    for pid in live_processes(marker):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def one_line(text: str) -> str:
    """The only non-empty line of ``text`` (asserts there is exactly one)."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]
