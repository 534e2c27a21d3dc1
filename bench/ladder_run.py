#!/usr/bin/env python
"""One real ladder run: four bots submitted, time until the ladder has ranked them.

Issue 25 asks for one real run next to the matchmaking simulation
(``bench/ladder.py``): a ladder directory made by ``arena ladder init``, four
teams, ``arena ladder serve`` on 127.0.0.1 (real Docker seats, the real
builder and validation), and four bot directories submitted through
``arena submit``: the random example bot and the built-in Easy, Medium and
Hard (Hard with a budget of 12 sampled worlds a decision).  It prints, from
the moment the server answers:

- ``active``: every submission built, validated and active;
- ``rated``: every version has a rating and an interval on the leaderboard;
- ``ranked``: the *first full ranking*: each version's 95% interval lies wholly
  above the next one's on the leaderboard (the intervals the site shows do not
  overlap), checked every few seconds, or not within ``--minutes``.

It needs root and a Docker engine with the offline base image
(``scripts/docker-setup.sh``).  Everything it starts is stopped at the end.
There is no baseline to divide by here (the simulation compares the
schedulers); the figures are wall time on this machine, with its load printed.

Run: ``python bench/ladder_run.py [--minutes 30] [--set max_hands=3] [--pairs 1] [--json]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm")

#: The four teams and their bots' ``bot.py``.
BUILTIN = (
    "from arena_sdk import run\nfrom arena_sdk.bots import make_bot\n\nrun(make_bot({tier!r}))\n"
)
HARD = "from arena_sdk import run\nfrom arena_sdk.bots import HardBot\n\nrun(HardBot(worlds=12))\n"
TEAMS: dict[str, str | None] = {
    "random": None,  # example_bots/random as it is
    "easy": BUILTIN.format(tier="easy"),
    "medium": BUILTIN.format(tier="medium"),
    "hard": HARD,
}


def arena(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=600, cwd=cwd, check=False,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


def checked(result: subprocess.CompletedProcess[str]) -> str:
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(result.args[3:5])} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def token_of(output: str) -> str:
    found = re.search(r"([A-Za-z0-9_-]{32,})", output.split("token", 1)[-1])
    if not found:
        raise SystemExit(f"no token in:\n{output}")
    return found[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bot_dir(root: Path, team: str, source: str | None) -> Path:
    directory = root / "bots" / team
    if source is None:
        shutil.copytree(REPO / "example_bots" / team, directory)
    else:
        directory.mkdir(parents=True)
        (directory / "bot.py").write_text(source)
    return directory


def ranked(rows: list[dict[str, Any]], n: int) -> bool:
    """All ``n`` rated and every neighbour's interval wholly below the one above it."""
    if len(rows) < n or any(r.get("low") is None or r.get("high") is None for r in rows):
        return False
    return all(upper["low"] > lower["high"] for upper, lower in itertools.pairwise(rows))


def run(minutes: float, settings: list[str], pairs: int, say: Any) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="arena-ladder-run-"))
    directory = root / "ladder"
    sets = [a for s in settings for a in ("--set", s)]
    admin = token_of(
        checked(arena("ladder", "init", str(directory), "--base-image", BASE_IMAGE, *sets))
    )
    toml = directory / "ladder.toml"
    text, replaced = re.subn(
        r"(?m)^concurrency = \d+", f"concurrency = {pairs}", toml.read_text(), count=1
    )
    if not replaced:
        raise SystemExit(f"no [ladder] concurrency line in {toml}")
    toml.write_text(text)
    tokens = {
        team: token_of(checked(arena("ladder", "team", "add", str(directory), team)))
        for team in TEAMS
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (root / "serve.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "ladder", "serve", str(directory), "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    marks: dict[str, float | None] = {"active": None, "rated": None, "ranked": None}
    rows: list[dict[str, Any]] = []
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url + "/api/leaderboard", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the ladder server did not start; see " + str(root / "serve.log"))
            time.sleep(0.2)
        started = time.monotonic()
        for team, source in TEAMS.items():
            checked(
                arena(
                    "submit",
                    str(bot_dir(root, team, source)),
                    "--server",
                    url,
                    "--token",
                    tokens[team],
                )
            )
        say(f"submitted {len(TEAMS)} bots at +{time.monotonic() - started:.0f} s")
        stop_at = started + minutes * 60
        while time.monotonic() < stop_at and marks["ranked"] is None:
            board = httpx.get(url + "/api/leaderboard", timeout=30).json()
            rows = board["standings"]
            now = time.monotonic() - started
            if marks["active"] is None and len(rows) == len(TEAMS):
                marks["active"] = now
                say(f"all {len(TEAMS)} active at +{now:.0f} s")
            if (
                marks["rated"] is None
                and len(rows) == len(TEAMS)
                and all(r.get("low") is not None for r in rows)
            ):
                marks["rated"] = now
                say(f"all rated at +{now:.0f} s")
            if ranked(rows, len(TEAMS)):
                marks["ranked"] = now
                say(f"ranked at +{now:.0f} s")
            if server.poll() is not None:
                raise SystemExit("the ladder server stopped; see " + str(root / "serve.log"))
            time.sleep(5)
        failed = [
            (team, v["status"])
            for team in TEAMS
            for v in httpx.get(url + "/api/me", headers={"Authorization": f"Bearer {tokens[team]}"}, timeout=30).json()["versions"]
            if v["status"] in ("failed", "disabled")
        ]  # fmt: skip
        shown = httpx.get(
            url + "/api/leaderboard", headers={"Authorization": f"Bearer {admin}"}, timeout=30
        ).json()
        rows = shown["standings"]
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(120)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
    return {
        "settings": settings, "pairs_at_once": pairs, "minutes_cap": minutes, "cpus": os.cpu_count(),
        "load_at_end": os.getloadavg()[0], "seconds": marks, "failed": failed,
        "leaderboard": [{k: r.get(k) for k in ("team", "elo", "low", "high", "pairs", "points_per_hand")} for r in rows],
        "directory": str(root),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--minutes", type=float, default=30.0, help="stop waiting for the ranking after this long"
    )
    parser.add_argument("--set", dest="settings", action="append", default=None,
                        help="a rule setting for ladder init (default: max_hands=3)")  # fmt: skip
    parser.add_argument("--pairs", type=int, default=1,
                        help="duplicate pairs the ladder plays at once, two tables each (default 1)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if args.json else print
    result = run(args.minutes, args.settings or ["max_hands=3"], args.pairs, say)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for name, seconds in result["seconds"].items():
        print(
            f"{name:>7}: "
            + (f"{seconds:.0f} s" if seconds is not None else f"not within {args.minutes:g} min")
        )
    for row in result["leaderboard"]:
        elo, low, high = row["elo"], row["low"], row["high"]
        shown = (
            f"{elo:.0f} ({low:.0f} to {high:.0f})"
            if elo is not None and low is not None
            else "unrated"
        )
        print(f"  {row['team']:<8} {shown:<24} {row['pairs']} pairs")
    if result["failed"]:
        print("failed versions:", result["failed"])
    print(
        f"{result['cpus']} CPUs, load {result['load_at_end']:.1f} at the end; ladder kept in {result['directory']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
