"""Tournament throughput, and the rating fit's speed.

Measured in one run:

1. games per second of a four-entry round robin of the example bots (random,
   greedy, heuristic, and a second random) as local processes, through the
   whole platform (referee, gRPC, SDK, SQLite), at concurrency 1 and 2;
2. the same games played in-process through the engine and the SDK's local
   harness (no gRPC, no processes): the baseline, and the ratio;
3. the Bradley-Terry fit for 30 bots and 10,000 games.

Usage: python bench/tournament.py [--deals N] [--max-hands H] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BOTS = REPO / "example_bots"
ENTRIES = [("heuristic", "heuristic"), ("greedy", "greedy"), ("random", "random"), ("random2", "random")]


def tournament_file(directory: Path, deals: int, max_hands: int, concurrency: int) -> Path:
    entries = "\n".join(
        f'[[entry]]\nname = "{name}"\nbot = "cmd:python {BOTS / bot / "bot.py"}"\n' for name, bot in ENTRIES
    )
    text = (
        f'[tournament]\nname = "bench{concurrency}"\nseed = "bench"\ndeals_per_pairing = {deals}\n'
        f'concurrency = {concurrency}\noutput = "{directory / f"out{concurrency}"}"\n\n'
        f"[rules]\npreset = \"pagat\"\nset = {{ max_hands = {max_hands} }}\n\n{entries}"
    )
    path = directory / f"bench{concurrency}.toml"
    path.write_text(text)
    return path


def platform_rate(directory: Path, deals: int, max_hands: int, concurrency: int) -> tuple[float, int, int]:
    """Games per second through the platform; also games and decisions played."""
    from arena.tournament import load_config, run_tournament
    from arena.tournament.store import ResultsStore

    config = load_config(tournament_file(directory, deals, max_hands, concurrency))
    start = time.perf_counter()
    report = run_tournament(config)
    elapsed = time.perf_counter() - start
    store = ResultsStore(config.output / "results.sqlite")
    decisions = sum(r.decisions for r in store.games())
    store.close()
    return report.played / elapsed, report.played, decisions


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


def in_process_rate(deals: int, max_hands: int) -> tuple[float, int]:
    """The same schedule played in-process (engine + SDK harness, no gRPC)."""
    from arena.tournament.schedule import deal_seed
    from arena_sdk.testing import play_game

    classes = {bot: load_bot(bot) for _, bot in ENTRIES}
    names = [name for name, _ in ENTRIES]
    bots = dict(ENTRIES)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=2, help="deals per pairing (2 games each)")
    parser.add_argument("--max-hands", type=int, default=10, help="hand cap per game")
    parser.add_argument("--json", action="store_true", help="print only JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        base, base_games = in_process_rate(args.deals, args.max_hands)
        c1, games1, decisions1 = platform_rate(Path(tmp), args.deals, args.max_hands, 1)
        c2, games2, _ = platform_rate(Path(tmp), args.deals, args.max_hands, 2)
    fit_s = fit_time()
    data = {
        "benchmark": "tournament",
        "games": games1,
        "decisions": decisions1,
        "in_process_games_per_s": round(base, 2),
        "concurrency1_games_per_s": round(c1, 2),
        "concurrency2_games_per_s": round(c2, 2),
        "ratio_c1_to_in_process": round(c1 / base, 3),
        "ratio_c2_to_in_process": round(c2 / base, 3),
        "fit_30_bots_10000_games_s": round(fit_s, 3),
    }
    if not args.json:
        print(f"four-entry round robin, {games1} games of at most {args.max_hands} hands ({decisions1} decisions)")
        print(f"  in-process (engine + SDK harness, no gRPC): {base:8.2f} games/s  ({base_games} games)")
        print(f"  platform, concurrency 1:                    {c1:8.2f} games/s  ratio {c1 / base:.2f}x")
        print(f"  platform, concurrency 2:                    {c2:8.2f} games/s  ratio {c2 / base:.2f}x")
        print(f"rating fit, 30 bots, 10,000 games: {fit_s * 1000:.0f} ms (bar: under 1 s)")
    print(json.dumps(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
