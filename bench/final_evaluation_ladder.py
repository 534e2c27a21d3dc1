#!/usr/bin/env python
"""The final evaluation on a real ladder: `arena ladder serve`, Docker bots, three identical bots among others.

What ``bench/final_evaluation.py --course`` simulates, played for real: ``arena ladder init``,
the teams, ``arena ladder serve`` on 127.0.0.1, each team's bot uploaded with ``arena submit``
(built and validated in Docker, offline), a deadline ``--term`` minutes after the start and
``final_until`` ``--final`` minutes after it.  The bots: the greedy example bot uploaded
unchanged by three teams (the clones), a near-clone (the greedy bot bidding one trick more),
the heuristic and the random example bots.  At the end: the frozen table's verdicts and
grades (``arena ladder export --final``), whether the clones got one grade, the pairs the
final evaluation spent, and whether the table settled.

Run: ``.venv/bin/python bench/final_evaluation_ladder.py DIR [--term 6] [--final 15]
[--concurrency 3] [--hands 2]`` (DIR must not exist; the server is stopped at the end).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
ARENA = [sys.executable, "-m", "arena"]
BANDS = '[[10, "A"], [35, "B"], [70, "C"], [100, "D"]]'
CLONES = ("clone1", "clone2", "clone3")
BOTS = {"clone1": "greedy", "clone2": "greedy", "clone3": "greedy", "near": "near", "heuristic": "heuristic",
        "random": "random"}  # fmt: skip


def arena(*args: str, timeout: float = 300) -> str:
    done = subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def token_of(output: str) -> str:
    found = re.search(r"([A-Za-z0-9_-]{32})", output)
    assert found, output
    return found[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bot_dirs(root: Path) -> dict[str, Path]:
    """Each bot's directory: the example bots as they are, and the near-clone (greedy, one trick more)."""
    out = {name: REPO / "example_bots" / name for name in ("greedy", "heuristic", "random")}
    near = root / "near"
    near.mkdir(parents=True)
    source = (REPO / "example_bots" / "greedy" / "bot.py").read_text()
    changed = source.replace("return max(1, min(13, tricks))", "return max(1, min(13, tricks + 1))  # a near-clone")
    assert changed != source
    (near / "bot.py").write_text(changed)
    out["near"] = near
    return out


def configure(directory: Path, args: argparse.Namespace, deadline: datetime.datetime) -> None:
    toml = directory / "ladder.toml"
    text = toml.read_text()
    until = deadline + datetime.timedelta(minutes=args.final)
    for key, value in (("concurrency", str(args.concurrency)), ("deadline", f'"{deadline:%Y-%m-%dT%H:%M:%SZ}"'),
                       ("final_until", f'"{until:%Y-%m-%dT%H:%M:%SZ}"'), ("bands", BANDS)):  # fmt: skip
        text, n = re.subn(rf"(?m)^{key} = .*?(\s+#.*)?$", f"{key} = {value}", text, count=1)
        assert n == 1, key
    toml.write_text(text)


def wait_for(what: str, check, timeout: float, every: float = 5.0):  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with contextlib.suppress(httpx.HTTPError):
            found = check()
            if found:
                return found
        time.sleep(every)
    raise SystemExit(f"timed out waiting for {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--term", type=float, default=6.0, help="minutes from the start to the deadline")
    parser.add_argument("--final", type=float, default=15.0, help="minutes from the deadline to final_until")
    parser.add_argument("--concurrency", type=int, default=3)
    parser.add_argument("--hands", type=int, default=2, help="max_hands a game")
    parser.add_argument("--base-image", default=os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm"))
    args = parser.parse_args()
    directory: Path = args.directory
    if directory.exists():
        raise SystemExit(f"{directory} exists: give a new directory")
    started = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    deadline = started + datetime.timedelta(minutes=args.term)
    arena("ladder", "init", str(directory), "--set", f"max_hands={args.hands}", "--base-image", args.base_image)
    configure(directory, args, deadline)
    tokens = {team: token_of(arena("ladder", "team", "add", str(directory), team)) for team in BOTS}
    bots = bot_dirs(directory.parent / f"{directory.name}-bots")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (directory / "serve.log").open("a")
    server = subprocess.Popen([*ARENA, "ladder", "serve", str(directory), "--port", str(port)], stdout=log,
                              stderr=subprocess.STDOUT)  # fmt: skip
    try:
        wait_for("the server", lambda: httpx.get(url + "/api/leaderboard", timeout=5).status_code == 200, 120, 1)
        for team, bot in BOTS.items():
            arena("submit", str(bots[bot]), "--server", url, "--token", tokens[team], "--note", bot)
        print(f"uploaded {len(BOTS)} bots; deadline {deadline:%H:%M:%S}, final_until in {args.final:g} min more", flush=True)
        # The table stored by the loop (frozen_reason set), not just the clock's phase: the loop stores it at its next look.
        frozen = wait_for("the freeze", lambda: httpx.get(url + "/api/final", timeout=10).json()["frozen_reason"],
                          (deadline - datetime.datetime.now(datetime.UTC)).total_seconds() + args.final * 60 + 600, 10)  # fmt: skip
        assert frozen
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        shutil.rmtree(directory.parent / f"{directory.name}-bots", ignore_errors=True)
    report(directory, deadline, started)


def report(directory: Path, deadline: datetime.datetime, started: datetime.datetime) -> None:
    data = json.loads(arena("ladder", "export", str(directory), "--final", "--json", "-"))
    grades = {t["team"]: t["grade"] for t in data["teams"]}
    with sqlite3.connect(directory / "results.sqlite") as db:
        rows = db.execute("SELECT finished_at FROM games WHERE ending NOT LIKE 'void%'").fetchall()
    after = sum(1 for (at,) in rows if at and datetime.datetime.fromisoformat(at.replace("Z", "+00:00")) >= deadline)
    for t in data["teams"]:
        print(f"{t['rank'] or '-':>3} {t['team']:10s} {t.get('elo') or 0:7.0f} {t['grade']:2s} "
              f"tied {t.get('tie_group') or '-'}  verdict {t.get('next_verdict') or ''}")  # fmt: skip
    one = len({grades[c] for c in CLONES}) == 1
    print(f"clones in one band: {one} ({', '.join(grades[c] for c in CLONES)}); settled {data['settled']} "
          f"({data['reason']}); games {len(rows)} in all, {after} after the deadline (~{after // 2} pairs); "
          f"{(datetime.datetime.now(datetime.UTC) - started).total_seconds() / 60:.0f} min")  # fmt: skip
    if data.get("warning"):
        print(f"WARNING: {data['warning']}")


if __name__ == "__main__":
    main()
