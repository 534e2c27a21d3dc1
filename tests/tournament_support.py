"""What the tournament and cluster tests share: the CLI in a subprocess, stored rows, private bot copies."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOTS = REPO / "example_bots"
#: The columns that must agree between two runs of one file (not timings, not when).
COMPARED = "game_id, side0, side1, ending, winner, score0, score1, hands, strikes0, strikes1, decisions, forfeit_reason"


def arena(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` in ``cwd``, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


def stored_rows(out: Path) -> list[tuple]:
    """The compared columns of every stored game, in game order."""
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute(f"SELECT {COMPARED} FROM games ORDER BY game_id").fetchall()


def own_bot(tmp: Path, name: str) -> str:
    """A copy of an example bot at a path only this test uses (so its processes can be found)."""
    target = tmp / f"bot-{name}"
    if not target.exists():
        shutil.copytree(BOTS / name, target)
    return f"cmd:{sys.executable} {target / 'bot.py'}"


def live_processes(marker: str) -> dict[int, int]:
    """Live (not zombie) processes whose command line mentions ``marker``: pid -> parent pid."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        state, parent = stat[stat.rindex(")") + 2 :].split()[:2]
        if marker in cmd and state != "Z":
            found[int(proc.name)] = int(parent)
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cannot_write_prefix() -> list[str]:
    """A command prefix under which the file modes bind, also for root (who otherwise writes anywhere).

    Root keeps its uid but loses every capability, so it reads what it owns (the
    checkout, however private its folder) and cannot write where the modes say no.
    """
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--"] if os.geteuid() == 0 else []
