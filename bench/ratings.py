"""The ratings fit at ladder scale: time and memory, the numpy fit against the pure-Python one.

    .venv/bin/python bench/ratings.py [--players 30,100,300,1000,3000] [--old-max 400] [--repeat 3]

For each pool size N (300 games per player: N × 300 games in duplicate pairs between
random pairings, generated as ``bench/tournament.py``'s ``fit_time`` does), in one run:

- ``fit``: the full fit with cluster-robust intervals (``arena.ratings.fit``), wall and
  CPU seconds, and its peak memory (a fresh process per fit: peak resident memory
  minus the memory before the fit);
- the baseline: the former pure-Python fit (``tests/ratings/legacy_ratings.py``, the
  tests' oracle) on the same games, and the ratio. It is cubic in the players: pools
  above ``--old-max`` (400) skip it, and the output says so;
- the ladder's running fit (``arena.ratings.running.RunningFit``, what a ladder's
  leaderboard keeps): counting every game once, then a fit after 100 new games
  (warm-started from the last one, exact intervals) and how far it is from a full fit.

Goal (issue 28): 1,000 players × 300,000 games, full fit ≤ 2 s; the ladder's fit after
100 new games ≤ 0.2 s. The machine is shared: the load average is printed, and CPU
seconds beside wall seconds (on a busy machine the wall time is mostly waiting).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "ratings"))  # the pure-Python oracle lives with the tests

import legacy_ratings

from arena.ratings import Result, fit
from arena.ratings.linalg import blas_threads
from arena.ratings.running import RunningFit

GAMES_PER_PLAYER = 300


def synthetic_games(players: int, games: int, *, seed: int = 1, prefix: str = "c") -> list[Result]:
    """``games`` games in duplicate pairs between random pairings (``fit_time``'s generator).

    The strengths are always those of seed 1; another ``seed`` draws other games between
    the same players (the ladder's new games).
    """
    rng = random.Random(1)
    strength = [rng.gauss(0, 1) for _ in range(players)]
    if seed != 1:
        rng = random.Random(seed)
    results = []
    for g in range(games // 2):
        a, b = rng.sample(range(players), 2)
        p = 1 / (1 + 2.718281828 ** (strength[b] - strength[a]))
        for swap in (False, True):
            x, y = (b, a) if swap else (a, b)
            win = rng.random() < (1 - p if swap else p)
            results.append(Result(f"bot{x}", f"bot{y}", 1.0 if win else 0.0, f"{prefix}{g}"))
    return results


def timed(call: Callable[[], Any]) -> tuple[Any, float, float]:
    """``(result, wall seconds, CPU seconds of this process)``."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def rss_mb() -> float:
    """This process's resident memory now (MB, Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def memory_child(players: int, impl: str) -> None:
    """The ``--role memory`` process: make the games, fit once, print the fit's peak memory.

    Peak resident memory (the kernel's high-water mark) minus the memory before the fit:
    everything the fit allocated, numpy's and BLAS's included, without tracemalloc's cost
    (it slows the pure-Python fit tenfold).
    """
    results = synthetic_games(players, GAMES_PER_PLAYER * players)
    gc.collect()
    before = rss_mb()
    (legacy_ratings.fit if impl == "old" else fit)(results)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # kB on Linux
    print(json.dumps({"peak_mb": round(peak - before, 1), "before_mb": round(before, 1)}))


def peak_mb(players: int, impl: str) -> float:
    """The fit's peak memory (MB), measured in a fresh process."""
    out = subprocess.run(
        [sys.executable, __file__, "--role", "memory", "--players", str(players), "--impl", impl],
        capture_output=True, text=True, timeout=3600, check=True,
    )  # fmt: skip
    return float(json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"])


def best_of(repeat: int, call: Callable[[], Any]) -> tuple[Any, float, float]:
    """:func:`timed`, ``repeat`` times: the fastest wall time (and its CPU time).

    The machine is shared: the fastest run is the one least slowed by the others.
    """
    runs = [timed(call) for _ in range(max(1, repeat))]
    return min(runs, key=lambda run: run[1])


def measure(players: int, old_max: int, memory: bool, repeat: int = 1) -> dict[str, Any]:
    games = GAMES_PER_PLAYER * players
    results = synthetic_games(players, games)
    row: dict[str, Any] = {"players": players, "games": games, "repeat": repeat}
    ratings, wall, cpu = best_of(repeat, lambda: fit(results))
    row.update(fit_s=round(wall, 3), fit_cpu_s=round(cpu, 3), method=ratings.error_method)
    if memory:
        row["fit_peak_mb"] = round(peak_mb(players, "new"), 1)
    if players <= old_max:
        old, wall_old, cpu_old = timed(lambda: legacy_ratings.fit(results))
        worst = max(abs(old[p.name].elo - p.elo) for p in ratings.players)
        worst_se = max(abs(old[p.name].se - p.se) for p in ratings.players)
        row.update(
            old_fit_s=round(wall_old, 3), old_fit_cpu_s=round(cpu_old, 3),
            ratio_old_to_new=round(wall_old / wall, 1), ratio_cpu_old_to_new=round(cpu_old / cpu, 1),
            max_elo_difference=worst, max_se_difference=worst_se,
        )  # fmt: skip
        if memory:
            row["old_fit_peak_mb"] = round(peak_mb(players, "old"), 1)
    else:
        row["old_fit_s"] = None  # skipped: cubic in the players
    row.update(running_measures(players, results, ratings.iterations, repeat))
    return row


def running_measures(players: int, results: list[Result], cold_iterations: int, repeat: int) -> dict[str, Any]:
    """The ladder's :class:`RunningFit`: every game counted once and a fit, then 100 new
    games and a fit again (each repetition on a fresh one: the fastest of each kept),
    against the baseline of :func:`fit` on all the games again."""
    new = synthetic_games(players, 100, seed=2, prefix="n")
    count_runs, fit_runs = [], []
    for _ in range(max(1, repeat)):
        running = RunningFit()
        count_runs.append(timed(lambda: running.extend((r.a, r.b, r.score, r.cluster) for r in results)))
        running.fit()
        running.extend((r.a, r.b, r.score, r.cluster) for r in new)
        fit_runs.append(timed(running.fit))
    _, wall_c, cpu_c = min(count_runs, key=lambda run: run[1])
    after, wall_f, cpu_f = min(fit_runs, key=lambda run: run[1])
    full, wall_full, cpu_full = best_of(repeat, lambda: fit(results + new))  # the baseline: fit them all again
    return dict(
        full_after_100_s=round(wall_full, 3), full_after_100_cpu_s=round(cpu_full, 3),
        ratio_full_to_running_cpu=round(cpu_full / max(cpu_f, 1e-9), 1),
        running_count_s=round(wall_c, 3), running_count_cpu_s=round(cpu_c, 3),
        running_after_100_s=round(wall_f, 3), running_after_100_cpu_s=round(cpu_f, 3),
        running_iterations=after.iterations, cold_iterations=cold_iterations,
        running_max_elo_error=max(abs(after.rated[p.name].elo - p.elo) for p in full.players),
        running_max_se_error=max(abs(after.rated[p.name].se - p.se) for p in full.players),
    )  # fmt: skip


def report(row: dict[str, Any]) -> str:
    n, g = row["players"], row["games"]
    lines = [
        f"{n:>5} players, {g:>7,} games: fit {row['fit_s']:7.3f} s wall ({row['fit_cpu_s']:.3f} s CPU)"
        + (f", peak {row['fit_peak_mb']:.0f} MB" if "fit_peak_mb" in row else "")
    ]
    if row.get("old_fit_s") is not None:
        lines.append(
            f"      pure-Python fit (baseline): {row['old_fit_s']:7.3f} s wall ({row['old_fit_cpu_s']:.3f} s CPU)"
            + (f", peak {row['old_fit_peak_mb']:.0f} MB" if "old_fit_peak_mb" in row else "")
            + f"; ratio old/new {row['ratio_old_to_new']:.1f}x wall, {row['ratio_cpu_old_to_new']:.1f}x CPU;"
            f" largest difference {row['max_elo_difference']:.2e} Elo, se {row['max_se_difference']:.2e}"
        )
    else:
        lines.append("      pure-Python fit: skipped (cubic in the players; above --old-max)")
    lines.append(
        f"      ladder's running fit: counting the games {row['running_count_s']:.3f} s "
        f"({row['running_count_cpu_s']:.3f} s CPU); a fit after 100 new games {row['running_after_100_s']:.3f} s "
        f"({row['running_after_100_cpu_s']:.3f} s CPU, {row['running_iterations']} Newton steps from the last "
        f"solution, {row['cold_iterations']} from zero; fit() on all the games {row['full_after_100_s']:.3f} s "
        f"({row['full_after_100_cpu_s']:.3f} s CPU): {row['ratio_full_to_running_cpu']:.1f}x the CPU; ratings within "
        f"{row['running_max_elo_error']:.1e} Elo of fit()'s, se within {row['running_max_se_error']:.1e})"
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--players", default="30,100,300,1000,3000", help="pool sizes, comma-separated"
    )
    parser.add_argument(
        "--old-max", type=int, default=400, help="largest pool the pure-Python fit runs on"
    )
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the memory runs (a process each)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="time the new fit and the ladder this many times and keep the fastest (a shared machine)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print only JSON")
    parser.add_argument(
        "--role", choices=("bench", "memory"), default="bench", help=argparse.SUPPRESS
    )
    parser.add_argument("--impl", choices=("new", "old"), default="new", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "memory":
        memory_child(int(args.players), args.impl)
        return 0
    try:
        sizes = [int(x) for x in args.players.split(",") if x.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 2:
        raise SystemExit(f"--players: whole numbers >= 2, e.g. 30,100 (got {args.players!r})")
    head = {
        "benchmark": "ratings", "cores": os.cpu_count(), "blas_threads": blas_threads(),
        "load_average_before": round(os.getloadavg()[0], 1), "games_per_player": GAMES_PER_PLAYER,
    }  # fmt: skip
    if not args.json:
        print(
            f"ratings fit, {GAMES_PER_PLAYER} games per player; {head['cores']} cores, load average "
            f"{head['load_average_before']}, BLAS threads {head['blas_threads']} (ARENA_RATINGS_THREADS)",
            flush=True,
        )
    rows = []
    for n in sizes:
        row = measure(n, args.old_max, not args.no_memory, args.repeat)
        row["load_average"] = round(os.getloadavg()[0], 1)
        rows.append(row)
        if not args.json:
            print(report(row), flush=True)
    goal = next((r for r in rows if r["players"] == 1000), None)
    if goal and not args.json:
        print(
            f"goal, 1,000 players x 300,000 games: full fit {goal['fit_s']:.2f} s wall "
            f"({goal['fit_cpu_s']:.2f} s CPU; bar 2 s); the ladder's fit after 100 new games "
            f"{goal['running_after_100_s']:.3f} s ({goal['running_after_100_cpu_s']:.3f} s CPU; bar 0.2 s)"
        )
    print(json.dumps({**head, "runs": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
