"""Tournaments on a Dask cluster: per-table overhead, and the speed-up from one worker to two.

Starts a real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1
and measures, in one run:

1. overhead per table through the cluster against the local runner: the same
   short tables (instant bots) played by the local runner (concurrency 1) and
   by a one-worker cluster (one table slot); the difference per table and the
   ratio of the times;
2. the speed-up from one worker to two (one table slot each) with bots that
   spend their move time waiting (``--wait`` seconds per decision), so the
   machine's cores are not the limit: goal >= 1.8x.

Usage: python bench/cluster.py [--tables N] [--wait S] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

WAITING_BOT = '''
import os, time
from arena_sdk import Bot, run

WAIT = float(os.environ.get("BENCH_WAIT", "0"))


class WaitingBot(Bot):
    """Waits WAIT seconds, then answers (bid 3, the first legal card): a bot that uses its time."""

    name = "bench-waiting"
    version = "1"

    def bid(self, view):
        time.sleep(WAIT)
        return 3

    def play(self, view):
        time.sleep(WAIT)
        return view.legal[0]


if __name__ == "__main__":
    run(WaitingBot())
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def cluster(workers: int, logs: Path) -> Iterator[str]:
    """A scheduler and ``workers`` workers (one table slot each) on 127.0.0.1; its address."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    py = sys.executable
    procs = [
        subprocess.Popen(
            [py, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=(logs / "scheduler.log").open("wb"), stderr=subprocess.STDOUT,
        )
    ]  # fmt: skip
    try:
        time.sleep(0.5)
        for w in range(workers):
            procs.append(
                subprocess.Popen(
                    [py, "-m", "distributed.cli.dask_worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                     "--resources", "TABLES=1", "--no-nanny", "--no-dashboard", "--name", f"w{w}"],
                    stdout=(logs / f"worker{w}.log").open("wb"), stderr=subprocess.STDOUT,
                )  # fmt: skip
            )
        from distributed import Client

        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=120)
        yield address
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def tournament_file(directory: Path, name: str, bot: Path, *, entries: int, deals: int, max_hands: int) -> Path:
    lines = [
        "[tournament]", f'name = "{name}"', 'seed = "bench"', f"deals_per_pairing = {deals}", "concurrency = 1",
        f'output = "{directory / name}"', "", "[rules]", 'preset = "pagat"', f"set = {{ max_hands = {max_hands} }}",
    ]  # fmt: skip
    for e in range(entries):
        lines += ["", "[[entry]]", f'name = "bot{e}"', f'bot = "cmd:{sys.executable} {bot}"']
    path = directory / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def timed_run(path: Path, scheduler: str | None) -> tuple[float, int]:
    """Seconds to play the file (through the library, as ``arena tournament run`` does) and games played."""
    from arena.tournament import load_config, run_tournament

    config = load_config(path)
    start = time.perf_counter()
    report = run_tournament(config, scheduler=scheduler)
    return time.perf_counter() - start, report.played


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=12, help="tables in the overhead run (even)")
    parser.add_argument("--wait", type=float, default=0.02, help="seconds the waiting bots wait per decision")
    parser.add_argument("--json", action="store_true", help="print only JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-cluster-") as tmp:
        root = Path(tmp)
        bot = root / "waiting_bot.py"
        bot.write_text(WAITING_BOT)
        os.environ["BENCH_WAIT"] = "0"
        # 1. Overhead per table: short tables (one deal, one hand), local runner vs a one-slot cluster.
        pairings = args.tables // 2
        entries = 2
        while entries * (entries - 1) // 2 < pairings:
            entries += 1
        short = dict(entries=entries, deals=1, max_hands=1)
        local_s, local_games = timed_run(tournament_file(root, "local", bot, **short), None)
        with cluster(1, root) as address:
            one_s, one_games = timed_run(tournament_file(root, "one", bot, **short), address)
        tables = local_games  # one game per table
        # 2. Speed-up one worker -> two with waiting bots (the workers' cores are not the limit).
        os.environ["BENCH_WAIT"] = str(args.wait)
        waiting = dict(entries=3, deals=2, max_hands=2)
        with cluster(1, root) as address:
            w1_s, w1_games = timed_run(tournament_file(root, "w1", bot, **waiting), address)
        with cluster(2, root) as address:
            w2_s, w2_games = timed_run(tournament_file(root, "w2", bot, **waiting), address)
    data = {
        "benchmark": "cluster",
        "cores": os.cpu_count(),
        "tables": tables,
        "local_s": round(local_s, 2),
        "cluster_one_worker_s": round(one_s, 2),
        "overhead_per_table_s": round((one_s - local_s) / tables, 3),
        "ratio_cluster_to_local": round(one_s / local_s, 3),
        "waiting_games": w1_games,
        "one_worker_s": round(w1_s, 2),
        "two_workers_s": round(w2_s, 2),
        "speedup_two_workers": round(w1_s / w2_s, 3),
    }
    if not args.json:
        print(f"{tables} short tables (one game each), {os.cpu_count()} cores")
        print(f"  local runner (concurrency 1):      {local_s:7.2f} s")
        print(
            f"  cluster, one worker (one slot):    {one_s:7.2f} s   overhead per table "
            f"{(one_s - local_s) / tables * 1000:+.0f} ms, ratio {one_s / local_s:.2f}x"
        )
        print(f"{w1_games} games of bots that wait {args.wait * 1000:.0f} ms per decision")
        print(f"  one worker:  {w1_s:7.2f} s")
        print(f"  two workers: {w2_s:7.2f} s   speed-up {w1_s / w2_s:.2f}x (goal >= 1.8x)")
    print(json.dumps(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
