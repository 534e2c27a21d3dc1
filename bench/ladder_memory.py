"""The ladder's standings book: memory against games, folding complete pairs against keeping every game.

For each size, duplicate pairs between random pairings of 40 versions are added
one by one to a :class:`StandingsBook` that folds complete pairs (the ladder's:
it can read a pair's games back from the store) and, as the baseline in the same
process, to one that keeps every game (what the book did before issue 44). The
memory each holds afterwards is traced (``tracemalloc``: Python's own
allocations, numpy's included), and so is the time to add a pair and read the
leaderboard. Prints a table (``--json`` for scripts).

    .venv/bin/python bench/ladder_memory.py [--games 4000,40000,200000]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "ladder"))

from standings_support import random_ladder

from arena.ladder.games.standings import StandingsBook

NAMES = [f"team{x:02d}@1" for x in range(40)]


def held(games: int, folding: bool) -> tuple[int, float]:
    """(bytes the book holds after ``games`` games, seconds per pair added), the games made as they are added."""
    strengths = {n: 10.0 * x for x, n in enumerate(NAMES)}
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        book = StandingsBook(cluster_games=(lambda cluster: []) if folding else None)
        started = time.perf_counter()
        for game in random_ladder(NAMES, games // 2, seed=1, strengths=strengths):
            book.add(game)
        per_pair = (time.perf_counter() - started) / (games // 2)
        book.standings(NAMES)
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert book.games == games
    return size, per_pair


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="4000,40000,200000", help="sizes, comma-separated")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    rows = []
    for games in (int(g) for g in args.games.split(",")):
        kept, kept_s = held(games, folding=False)
        folded, folded_s = held(games, folding=True)
        rows.append({"games": games, "folding_bytes": folded, "keeping_bytes": kept, "ratio": kept / folded,
                     "folding_add_us": folded_s * 1e6, "keeping_add_us": kept_s * 1e6})  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'games':>8} {'folding pairs':>14} {'keeping games':>14} {'ratio':>7} {'add (us, traced)':>18}")
    for r in rows:
        print(f"{r['games']:>8} {r['folding_bytes'] / 1024:>11.0f} KiB {r['keeping_bytes'] / 1024:>11.0f} KiB "
              f"{r['ratio']:>6.0f}x {r['folding_add_us']:>8.0f} / {r['keeping_add_us']:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
