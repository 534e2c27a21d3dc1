"""Tournament throughput, and the rating fit's speed.

Measured in one run:

1. games per second of a four-entry round robin of the example bots (random,
   greedy, heuristic, and a second random) as local processes, through the
   whole platform (referee, gRPC, SDK, SQLite), at concurrency 1, 2 and this
   machine's usable cores (``--levels``; each table in its own process), and
   the ratios to concurrency 1.  A four-entry round robin has 12 tables: on a
   machine with more cores, ``--entries N`` gives N(N-1) tables;
2. decisions per second, and CPU per decision: the platform's (coordinator
   and table processes: referee, match loop, gRPC server) and the bots'
   (sampled from /proc for every process the run started);
3. the same games played in-process through the engine and the SDK's local
   harness (no gRPC, no processes): the baseline, and the ratio;
4. the Bradley-Terry fit for 30 bots and 10,000 games.

Every process uses the gRPC transport the referee and the SDK use (the polling
I/O manager, ``arena_sdk.transport``); ``GRPC_EXPERIMENTS= python
bench/tournament.py`` measures gRPC's default transport instead.

Usage: python bench/tournament.py [--deals N] [--max-hands H] [--entries N] [--levels 1,2,8] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BOTS = REPO / "example_bots"
#: The four entries of the headline run; more (``--entries``) cycle over the same bots.
ENTRIES = [("heuristic", "heuristic"), ("greedy", "greedy"), ("random", "random"), ("random2", "random")]


def entries_for(count: int) -> list[tuple[str, str]]:
    """``count`` entries (name, example bot): the four of the headline run, then heuristic-4, greedy-5, ..."""
    out = ENTRIES[:count]
    for i in range(len(out), count):
        bot = ENTRIES[i % len(ENTRIES)][1]
        out.append((f"{bot}-{i}", bot))
    return out


def tournament_file(
    directory: Path, deals: int, max_hands: int, concurrency: int, entries: list[tuple[str, str]]
) -> Path:
    listed = "\n".join(
        f'[[entry]]\nname = "{name}"\nbot = "cmd:python {BOTS / bot / "bot.py"}"\n' for name, bot in entries
    )
    text = (
        f'[tournament]\nname = "bench{concurrency}"\nseed = "bench"\ndeals_per_pairing = {deals}\n'
        f'concurrency = {concurrency}\noutput = "{directory / f"out{concurrency}"}"\n\n'
        f"[rules]\npreset = \"pagat\"\nset = {{ max_hands = {max_hands} }}\n\n{listed}"
    )
    path = directory / f"bench{concurrency}.toml"
    path.write_text(text)
    return path


class CpuSampler:
    """CPU seconds of every process descended from this one, split into bots and the rest (Linux /proc)."""

    def __init__(self, every: float = 0.05) -> None:
        self.every = every
        self.cpu: dict[int, tuple[bool, float]] = {}
        self.own = 0.0
        self.stop = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self._sample()
        self._sample()
        self.own = time.thread_time()

    def _sample(self) -> None:
        parents: dict[int, int] = {}
        stats: dict[int, list[str]] = {}
        for proc in os.listdir("/proc"):
            if proc.isdigit():
                try:
                    with open(f"/proc/{proc}/stat") as f:
                        text = f.read()
                except OSError:
                    continue
                fields = text[text.rindex(")") + 2 :].split()
                parents[int(proc)] = int(fields[1])
                stats[int(proc)] = fields
        me = os.getpid()
        for pid, fields in stats.items():
            p, depth = pid, 0
            while p not in (me, 0, 1) and depth < 20:
                p, depth = parents.get(p, 0), depth + 1
            if p != me or pid == me:
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    is_bot = b"bot.py" in f.read()
            except OSError:
                continue
            cpu = (int(fields[11]) + int(fields[12])) / self.tick
            self.cpu[pid] = (is_bot, max(cpu, self.cpu.get(pid, (is_bot, 0.0))[1]))

    def split(self) -> tuple[float, float]:
        """CPU seconds of (the bots, the other descendants)."""
        bots = sum(c for is_bot, c in self.cpu.values() if is_bot)
        return bots, sum(c for is_bot, c in self.cpu.values() if not is_bot)


def platform_rate(
    directory: Path, deals: int, max_hands: int, concurrency: int, entries: list[tuple[str, str]]
) -> dict[str, float]:
    """Games per second through the platform; games, decisions and CPU seconds (platform, bots)."""
    from arena.tournament import load_config, run_tournament
    from arena.tournament.store import ResultsStore

    config = load_config(tournament_file(directory, deals, max_hands, concurrency, entries))
    sampler = CpuSampler()
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    sampler.thread.start()
    start = time.perf_counter()
    report = run_tournament(config)
    elapsed = time.perf_counter() - start
    sampler.stop.set()
    sampler.thread.join()
    self_after = resource.getrusage(resource.RUSAGE_SELF)
    coordinator = (self_after.ru_utime + self_after.ru_stime - self_before.ru_utime - self_before.ru_stime) - sampler.own
    bots, tables = sampler.split()
    store = ResultsStore(config.output / "results.sqlite")
    decisions = sum(r.decisions for r in store.games())
    store.close()
    return {
        "rate": report.played / elapsed, "games": report.played, "decisions": decisions, "seconds": elapsed,
        "platform_cpu": coordinator + tables, "bots_cpu": bots,
    }  # fmt: skip


def load_bot(name: str) -> Any:
    path = BOTS / name / "bot.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from arena_sdk import Bot

    return next(
        v for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Bot) and v.__module__ == module.__name__
    )  # fmt: skip


def in_process_rate(deals: int, max_hands: int, entries: list[tuple[str, str]]) -> tuple[float, int]:
    """The same schedule played in-process (engine + SDK harness, no gRPC)."""
    from arena.tournament.schedule import deal_seed
    from arena_sdk.testing import play_game

    classes = {bot: load_bot(bot) for _, bot in entries}
    names = [name for name, _ in entries]
    bots = dict(entries)
    games = 0
    start = time.perf_counter()
    pairing = 0
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for deal in range(deals):
                seed = deal_seed("bench", a, b, deal)
                for side0, side1 in ((a, b), (b, a)):
                    play_game([classes[bots[side0]], classes[bots[side1]]], "pagat", seed=seed, max_hands=max_hands)
                    games += 1
            pairing += 1
    return games / (time.perf_counter() - start), games


def fit_time(players: int = 30, games: int = 10_000) -> float:
    """Seconds for one Bradley-Terry fit with cluster-robust errors."""
    from arena.ratings import Result, fit

    rng = random.Random(1)
    strength = [rng.gauss(0, 1) for _ in range(players)]
    results = []
    for g in range(games // 2):
        a, b = rng.sample(range(players), 2)
        p = 1 / (1 + 2.718281828 ** (strength[b] - strength[a]))
        for swap in (False, True):
            x, y = (b, a) if swap else (a, b)
            win = rng.random() < (1 - p if swap else p)
            results.append(Result(f"bot{x}", f"bot{y}", 1.0 if win else 0.0, f"c{g}"))
    start = time.perf_counter()
    fit(results)
    return time.perf_counter() - start


def concurrency_levels(text: str | None) -> list[int]:
    """The concurrencies to measure: as given (``1,2,8``), else 1, 2 and this machine's usable cores."""
    if text:
        levels = sorted({int(x) for x in text.split(",") if x.strip()})
        if not levels or levels[0] < 1:
            raise SystemExit("--levels: whole numbers >= 1, e.g. 1,2,8")
        return levels
    cores = len(os.sched_getaffinity(0))
    return sorted({1, 2, cores})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=6, help="deals per pairing (2 games each)")
    parser.add_argument("--max-hands", type=int, default=10, help="hand cap per game")
    parser.add_argument(
        "--entries", type=int, default=4,
        help="entries in the round robin (4: the headline run; more give more tables, 2 per pairing, "
        "for machines with more cores)",
    )  # fmt: skip
    parser.add_argument(
        "--levels", help="concurrencies to measure, e.g. 1,2,8 (default: 1, 2 and this machine's cores)"
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    args = parser.parse_args()
    entries = entries_for(max(2, args.entries))
    levels = concurrency_levels(args.levels)
    runs: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        base, base_games = in_process_rate(args.deals, args.max_hands, entries)
        for n in levels:
            runs[n] = platform_rate(Path(tmp), args.deals, args.max_hands, n, entries)
    fit_s = fit_time()
    one = runs[levels[0]]
    us = {
        f"c{n}_{kind}_cpu_us_per_decision": round(1e6 * run[f"{kind}_cpu"] / run["decisions"], 1)
        for n, run in runs.items() for kind in ("platform", "bots")
    }  # fmt: skip
    data: dict[str, Any] = {
        "benchmark": "tournament",
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "grpc_experiments": os.environ.get("GRPC_EXPERIMENTS", ""),
        "entries": len(entries),
        "tables": len(entries) * (len(entries) - 1),
        "games": one["games"],
        "decisions": one["decisions"],
        "in_process_games_per_s": round(base, 2),
    }
    for n, run in runs.items():
        data[f"concurrency{n}_games_per_s"] = round(run["rate"], 2)
        data[f"concurrency{n}_decisions_per_s"] = round(run["decisions"] / run["seconds"], 1)
        data[f"ratio_c{n}_to_in_process"] = round(run["rate"] / base, 3)
        if n != levels[0]:
            data[f"ratio_c{n}_to_c{levels[0]}"] = round(run["rate"] / one["rate"], 3)
    data.update(us)
    data["fit_30_bots_10000_games_s"] = round(fit_s, 3)
    if not args.json:
        transport = "polling" if os.environ.get("GRPC_EXPERIMENTS") else "default (EventEngine)"
        print(
            f"{len(entries)}-entry round robin ({data['tables']} tables), {one['games']} games of at most "
            f"{args.max_hands} hands ({one['decisions']} decisions), {data['usable_cores']} usable cores, "
            f"gRPC transport: {transport}"
        )
        print(f"  in-process (engine + SDK harness, no gRPC): {base:8.2f} games/s  ({base_games} games)")
        for n, run in runs.items():
            print(
                f"  platform, concurrency {n}: {run['rate']:8.2f} games/s "
                f"{run['decisions'] / run['seconds']:8.0f} decisions/s  ratio to in-process {run['rate'] / base:.2f}x  "
                f"CPU per decision: platform {us[f'c{n}_platform_cpu_us_per_decision']:.0f} us, "
                f"bots {us[f'c{n}_bots_cpu_us_per_decision']:.0f} us"
            )
        for n, run in runs.items():
            if n != levels[0]:
                goal = "  (goal on 2 free cores: >= 1.6x)" if n == 2 and levels[0] == 1 else ""
                print(f"  concurrency {n} / concurrency {levels[0]}: {run['rate'] / one['rate']:.2f}x{goal}")
        print(f"rating fit, 30 bots, 10,000 games: {fit_s * 1000:.0f} ms (bar: under 1 s)")
    print(json.dumps(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
