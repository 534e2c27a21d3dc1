#!/usr/bin/env python
"""The ladder site's response times at 4,000 and 40,000 games, against today's main in the same run.

For each size a ladder directory is filled directly through the stores (16
teams with an active version, duplicate pairs between random active
versions, a rating-history row per version after every pair as the loop
writes them, real records for a sample of the games), then two real uvicorn
servers on 127.0.0.1 read it: this tree's site, and main's
``arena/ladder/site/app.py`` (``git archive main arena`` into a scratch folder,
first on its ``PYTHONPATH``).  Each serves the same standings (fitted once).
The client times ``GET /``, ``GET /teams/TEAM`` (the team with the most
games) and ``GET /api/games/ID`` (games with records, in turn), the two
servers interleaved in rounds so machine load falls on both alike; a
server's URL stops after ``--budget`` seconds (main's scans are slow), with
at least a few requests each.  Printed: p50 and p95 per URL and size, and
main's p95 over this tree's (the speed-up).

Run: ``python bench/ladder_web.py [--games 4000,40000] [--requests 200] [--budget 20] [--json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
TEAMS = 16
#: Games (of the sample) written with a real record, for GET /api/games/ID.
RECORDS = 40


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fill(directory: Path, games: int, seed: int = 7) -> dict[str, Any]:
    """A ladder directory with ``games`` stored games (see the module docstring); returns what to request."""
    sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "ladder")]
    from site_support import SyntheticLadder  # the tests' filler: the stores' own writes

    ladder = SyntheticLadder(directory)
    ladder.results.db.execute("PRAGMA synchronous=OFF")  # a bench fill: no fsync per game
    rng = random.Random(seed)
    entries = []
    for k in range(TEAMS):
        team = f"team{k:02d}"
        ladder.add_team(team)
        entries.append(ladder.add_version(team, note=f"version of {team}").entry)
    start = datetime.datetime(2026, 9, 1, tzinfo=datetime.UTC)
    history: list[tuple[str, str, int, float, float, float]] = []
    pairs = games // 2
    sample = set(rng.sample(range(1, pairs + 1), min(RECORDS, pairs)))
    with_records: list[str] = []
    for seq in range(1, pairs + 1):
        a, b = rng.sample(entries, 2)
        at = start + datetime.timedelta(seconds=30 * seq)
        ids = ladder.add_pair(a, b, rng=rng, at=at)
        if seq in sample:
            ladder.write_record(ids[0], (a, b), seed=seq)
            with_records.append(ids[0])
        stamp = at.isoformat(timespec="seconds")
        history.extend((e, stamp, seq, 1500.0 + rng.uniform(-200, 200), 1400.0, 1600.0) for e in entries)
    with sqlite3.connect(ladder.config.ladder_path) as db:
        db.execute("PRAGMA synchronous=OFF")
        db.executemany("INSERT INTO history(version, at, pairs, elo, low, high) VALUES (?, ?, ?, ?, ?, ?)", history)
    counts: dict[str, int] = {}
    for g in ladder.results.games():
        for side in (g.side0, g.side1):
            counts[side] = counts.get(side, 0) + 1
    busiest = max(counts, key=lambda e: counts[e]).rpartition("@")[0]
    ladder.close()
    return {"team": busiest, "games": with_records, "history_rows": len(history)}


def serve(directory: Path, port: int) -> None:
    """The server process: this tree's or main's site (whichever ``arena`` is first on the path)."""
    import uvicorn

    import arena
    from arena.ladder.config import load_ladder_config
    from arena.ladder.games.standings import standings
    from arena.ladder.store import LadderStore
    from arena.ladder.site.app import create_app, wrap
    from arena.results.store import ResultsStore

    config = load_ladder_config(directory)
    store = LadderStore(config.ladder_path)
    results = ResultsStore.open_read_only(config.results_path)
    from arena.ladder.games.state import LadderState
    state = LadderState(tuple(standings(results.games(), [v.entry for v in store.active_versions()])))
    store.close()
    results.close()
    print(f"serving {arena.__file__}", file=sys.stderr, flush=True)
    app = create_app(config, lambda: state)
    uvicorn.run(wrap(app, config), host="127.0.0.1", port=port, log_level="warning", lifespan="off")


@contextlib.contextmanager
def server(directory: Path, code: Path) -> Iterator[str]:
    """A site process on a free port, running the ``arena`` package under ``code``; yields its URL."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(code)}
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(directory), "--port", str(port)], env=env,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/api/leaderboard", timeout=30).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the site under {code} did not start: {process.stderr.read() if process.stderr else ''}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main_copy(into: Path) -> Path:
    """main's ``arena`` package, as committed, in a scratch folder."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "main", "arena"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def measure(urls: dict[str, str], paths: dict[str, list[str]], requests: int, budget: float,
            rounds: int = 5) -> dict[str, dict[str, list[float]]]:  # fmt: skip
    """Milliseconds per request, per server and URL name, the servers interleaved in ``rounds``."""
    times: dict[str, dict[str, list[float]]] = {code: {name: [] for name in paths} for code in urls}
    spent: dict[tuple[str, str], float] = {}
    clients = {code: httpx.Client(base_url=url, timeout=120) for code, url in urls.items()}
    try:
        for code, client in clients.items():  # warm up: templates compiled, connections made
            for name, targets in paths.items():
                for target in targets[:3]:
                    assert client.get(target).status_code == 200, (code, target)
        for _ in range(rounds):
            for name, targets in paths.items():
                for code, client in clients.items():
                    used = spent.get((code, name), 0.0)
                    taken = times[code][name]
                    for _k in range(requests // rounds):
                        if used > budget and len(taken) >= 5:
                            break
                        target = targets[len(taken) % len(targets)]
                        t0 = time.perf_counter()
                        response = client.get(target)
                        dt = time.perf_counter() - t0
                        assert response.status_code == 200, (code, target, response.status_code)
                        taken.append(dt * 1000)
                        used += dt
                    spent[(code, name)] = used
    finally:
        for client in clients.values():
            client.close()
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default="4000,40000", help="store sizes, comma-separated")
    parser.add_argument("--requests", type=int, default=200, help="requests per URL and server")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds a server may spend on one URL")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, args.port)
        return
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-web-") as tmp:
        main_code = main_copy(Path(tmp) / "main")
        for games in (int(g) for g in args.games.split(",")):
            directory = Path(tmp) / f"lad{games}"
            t0 = time.perf_counter()
            filled = fill(directory, games)
            fill_s = time.perf_counter() - t0
            paths = {"GET /": ["/"], "GET /teams/TEAM": [f"/teams/{filled['team']}"],
                     "GET /api/games/ID": [f"/api/games/{g}" for g in filled["games"]]}  # fmt: skip
            with server(directory, REPO) as new, server(directory, main_code) as old:
                times = measure({"this": new, "main": old}, paths, args.requests, args.budget)
            for name in paths:
                row = {"games": games, "url": name, "history_rows": filled["history_rows"], "fill_s": round(fill_s, 1)}
                for code in ("this", "main"):
                    row[f"{code}_p50_ms"] = round(statistics.median(times[code][name]), 2)
                    row[f"{code}_p95_ms"] = round(percentile(times[code][name], 0.95), 2)
                    row[f"{code}_n"] = len(times[code][name])
                row["speedup_p95"] = round(row["main_p95_ms"] / row["this_p95_ms"], 1)
                out.append(row)
                if not args.json:
                    print(f"{games:>6} games  {name:<18} this p50 {row['this_p50_ms']:7.2f} ms  p95 {row['this_p95_ms']:7.2f} ms"
                          f"  (n={row['this_n']})  |  main p50 {row['main_p50_ms']:8.2f} ms  p95 {row['main_p95_ms']:8.2f} ms"
                          f"  (n={row['main_n']})  |  main/this p95 {row['speedup_p95']:.1f}x", flush=True)  # fmt: skip
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        load = os.getloadavg()[0]
        print(f"load average {load:.1f} on {os.cpu_count()} cores; goal: GET / and GET /api/games/ID p95 <= 50 ms at 40,000 games")


if __name__ == "__main__":
    main()
