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
   (sampled from /proc for every process the run started); the coordinator's
   own CPU per game (scheduling, storing results and records);
3. the same games played in-process through the engine and the SDK's local
   harness (no gRPC, no processes): the baseline, and the ratio;
4. the Bradley-Terry fit for 30 bots and 10,000 games.

Each platform run is a fresh process (its coordinator, its table processes and
bots) on one gRPC transport: the platform's polling I/O manager
(``arena_sdk.transport``), and with ``--transports polling,default`` also
gRPC's default, interleaved, with the ratio between them.

Usage: python bench/tournament.py [--deals N] [--max-hands H] [--entries N] [--levels 1,2,8]
       [--transports polling,default] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from arena.tables.cores import usable_cores
from arena_sdk.transport import TUNED_EXPERIMENTS

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
        self.stop = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self._sample()
        self._sample()

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

    def split(self, leave_out: int = 0) -> tuple[float, float]:
        """CPU seconds of (the bots, the other descendants but ``leave_out``)."""
        bots = sum(c for is_bot, c in self.cpu.values() if is_bot)
        return bots, sum(c for pid, (is_bot, c) in self.cpu.items() if not is_bot and pid != leave_out)


#: The gRPC transports a run can measure (arena_sdk.transport): the value of GRPC_EXPERIMENTS.
TRANSPORTS = {"polling": TUNED_EXPERIMENTS, "default": ""}


def platform_rate(
    directory: Path, deals: int, max_hands: int, concurrency: int, entries: list[tuple[str, str]], transport: str
) -> dict[str, float]:
    """Games per second through the platform; games, decisions and CPU seconds (platform, bots).

    The tournament is run by a fresh process on ``transport`` (gRPC reads its
    transport once, at import, so each setting needs its own coordinator and
    table processes); every process it starts is sampled for CPU.
    """
    path = tournament_file(directory, deals, max_hands, concurrency, entries)
    env = {**os.environ, "GRPC_EXPERIMENTS": TRANSPORTS[transport]}
    sampler = CpuSampler()
    sampler.thread.start()
    child = subprocess.Popen(
        [sys.executable, __file__, "--role", "platform", str(path)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out, err = child.communicate(timeout=6 * 3600)
    sampler.stop.set()
    sampler.thread.join()
    if child.returncode != 0:
        raise SystemExit(f"the {transport} run failed:\n{err[-3000:]}")
    run = json.loads(out.strip().splitlines()[-1])
    # The coordinator counts its own CPU (exact, without its start-up); the sampler the rest.
    bots, tables = sampler.split(leave_out=child.pid)
    return {
        "rate": run["played"] / run["seconds"], "games": run["played"], "decisions": run["decisions"],
        "seconds": run["seconds"], "platform_cpu": tables + run["coordinator_cpu"], "bots_cpu": bots,
        "coordinator_cpu": run["coordinator_cpu"],
    }  # fmt: skip


def platform_child(path: Path) -> None:
    """The ``--role platform`` process: run the tournament file, print what it played as JSON."""
    from arena.tournament import load_config, run_tournament
    from arena.results.store import ResultsStore

    config = load_config(path)
    startup_cpu = time.process_time()  # imports and parsing: not the tournament's
    start = time.perf_counter()
    report = run_tournament(config)
    seconds = time.perf_counter() - start
    coordinator_cpu = time.process_time() - startup_cpu  # this process alone: scheduling, storing
    store = ResultsStore(config.output / "results.sqlite")
    decisions = sum(r.decisions for r in store.games())
    store.close()
    print(json.dumps({
        "played": report.played, "seconds": seconds, "decisions": decisions, "coordinator_cpu": coordinator_cpu,
    }))  # fmt: skip


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
        try:
            levels = sorted({int(x) for x in text.split(",") if x.strip()})
        except ValueError:
            levels = []
        if not levels or levels[0] < 1:
            raise SystemExit(f"--levels: whole numbers >= 1, e.g. 1,2,8 (got {text!r})")
        return levels
    return sorted({1, 2, usable_cores()})


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
    parser.add_argument(
        "--transports", default="polling",
        help="gRPC transports to measure, interleaved: polling (the platform's), default (gRPC's own), "
        "or polling,default for the ratio between them",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print only JSON")
    parser.add_argument("--role", choices=("bench", "platform"), default="bench", help=argparse.SUPPRESS)
    parser.add_argument("file", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "platform":
        platform_child(Path(args.file))
        return 0
    entries = entries_for(max(2, args.entries))
    levels = concurrency_levels(args.levels)
    transports = [t.strip() for t in args.transports.split(",") if t.strip()]
    if not transports or any(t not in TRANSPORTS for t in transports):
        raise SystemExit(f"--transports: one or more of {', '.join(TRANSPORTS)}")
    runs: dict[tuple[str, int], dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        base, base_games = in_process_rate(args.deals, args.max_hands, entries)
        for n in levels:
            for transport in transports:
                work = Path(tmp) / transport
                work.mkdir(exist_ok=True)
                runs[transport, n] = platform_rate(work, args.deals, args.max_hands, n, entries, transport)
    fit_s = fit_time()
    first = runs[transports[0], levels[0]]
    data: dict[str, Any] = {
        "benchmark": "tournament",
        "cores": os.cpu_count(),
        "usable_cores": usable_cores(),
        "transports": transports,
        "entries": len(entries),
        "tables": len(entries) * (len(entries) - 1),
        "games": first["games"],
        "decisions": first["decisions"],
        "in_process_games_per_s": round(base, 2),
    }
    for (transport, n), run in runs.items():
        key = "" if transport == "polling" else f"{transport}_"
        one = runs[transport, levels[0]]
        data[f"{key}concurrency{n}_games_per_s"] = round(run["rate"], 2)
        data[f"{key}concurrency{n}_decisions_per_s"] = round(run["decisions"] / run["seconds"], 1)
        data[f"{key}ratio_c{n}_to_in_process"] = round(run["rate"] / base, 3)
        if n != levels[0]:
            data[f"{key}ratio_c{n}_to_c{levels[0]}"] = round(run["rate"] / one["rate"], 3)
        for kind in ("platform", "bots"):
            data[f"{key}c{n}_{kind}_cpu_us_per_decision"] = round(1e6 * run[f"{kind}_cpu"] / run["decisions"], 1)
        data[f"{key}c{n}_coordinator_cpu_ms_per_game"] = round(1e3 * run["coordinator_cpu"] / run["games"], 2)
        if transport != "polling" and ("polling", n) in runs:
            data[f"ratio_polling_to_{transport}_c{n}"] = round(runs["polling", n]["rate"] / run["rate"], 3)
    data["fit_30_bots_10000_games_s"] = round(fit_s, 3)
    if not args.json:
        print(
            f"{len(entries)}-entry round robin ({data['tables']} tables), {first['games']} games of at most "
            f"{args.max_hands} hands ({first['decisions']} decisions), {data['usable_cores']} usable cores"
        )
        print(f"  in-process (engine + SDK harness, no gRPC): {base:8.2f} games/s  ({base_games} games)")
        for (transport, n), run in runs.items():
            key = "" if transport == "polling" else f"{transport}_"
            print(
                f"  platform ({transport} gRPC), concurrency {n}: {run['rate']:6.2f} games/s "
                f"{run['decisions'] / run['seconds']:6.0f} decisions/s  ratio to in-process {run['rate'] / base:.2f}x  "
                f"CPU per decision: platform {data[f'{key}c{n}_platform_cpu_us_per_decision']:.0f} us, "
                f"bots {data[f'{key}c{n}_bots_cpu_us_per_decision']:.0f} us; coordinator "
                f"{data[f'{key}c{n}_coordinator_cpu_ms_per_game']:.1f} ms per game"
            )
        for transport, n in runs:
            key = "" if transport == "polling" else f"{transport}_"
            if n != levels[0]:
                goal = "  (goal on 2 free cores: >= 1.6x)" if n == 2 and levels[0] == 1 else ""
                ratio = data[f"{key}ratio_c{n}_to_c{levels[0]}"]
                print(f"  {transport} gRPC, concurrency {n} / concurrency {levels[0]}: {ratio:.2f}x{goal}")
            if f"ratio_polling_to_{transport}_c{n}" in data:
                print(f"  concurrency {n}, polling / {transport} gRPC: {data[f'ratio_polling_to_{transport}_c{n}']:.2f}x")
        print(f"rating fit, 30 bots, 10,000 games: {fit_s * 1000:.0f} ms (bar: under 1 s)")
    print(json.dumps(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
