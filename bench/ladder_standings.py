"""The ladder's standings after a pair: the incremental book against a refit from scratch.

For 4,000 and 40,000 stored games (40 versions, duplicate pairs between random
pairings): the time to add one pair's two games to a :class:`StandingsBook` and read the
leaderboard, against today's way (main's ``standings()``, loaded from git, refitting
every stored game) in the same process. Prints a table (``--json`` for scripts).

    .venv/bin/python bench/ladder_standings.py [--games 4000,40000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "ladder"))

from standings_support import pair, random_ladder

from arena.ladder.games.standings import StandingsBook


def main_standings():  # type: ignore[no-untyped-def]
    """main's ``arena/ladder/games/standings.py`` (the refit from scratch), or ``None`` outside git."""
    try:
        text = subprocess.run(
            ["git", "-C", str(REPO), "show", "main:arena/ladder/games/standings.py"],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "main_standings.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("main_standings", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["main_standings"] = module
    spec.loader.exec_module(module)
    return module.standings


def best(fn, repeat: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(wall, CPU) seconds of the fastest of ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.perf_counter() - w, time.process_time() - c))
    return min(runs)


def run(games: int, repeat: int, old) -> dict[str, float]:  # type: ignore[no-untyped-def]
    names = [f"team{x:02d}@1" for x in range(40)]
    strengths = {n: 10.0 * x for x, n in enumerate(names)}
    stored = list(random_ladder(names, games // 2, seed=1, strengths=strengths))
    t0 = time.perf_counter()
    book = StandingsBook(stored)
    book.standings(names)
    build = time.perf_counter() - t0
    seq = [games // 2]

    def book_step() -> None:
        seq[0] += 1
        for g in pair(seq[0], names[seq[0] % 40], names[(seq[0] * 7 + 1) % 40], seq[0] % 3):
            book.add(g)
        book.standings(names)

    out = {"games": games, "book_build_s": build}
    out["book_wall_s"], out["book_cpu_s"] = best(book_step, repeat)
    if old is not None:
        out["main_wall_s"], out["main_cpu_s"] = best(lambda: old(stored, names), max(1, repeat // 2))
    return out


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="4000,40000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    old = main_standings()
    rows = [run(int(n), args.repeat, old) for n in args.games.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| stored games | book: one pair added + standings, wall (CPU) | main: refit from scratch, wall (CPU) | ratio (CPU) |")
    print("| ---: | ---: | ---: | ---: |")
    for r in rows:
        main = f"{r['main_wall_s'] * 1e3:.0f} ms ({r['main_cpu_s'] * 1e3:.0f} ms)" if "main_wall_s" in r else "n/a"
        ratio = f"{r['main_cpu_s'] / max(r['book_cpu_s'], 1e-9):.0f}x" if "main_cpu_s" in r else ""
        print(f"| {r['games']:,} | {r['book_wall_s'] * 1e3:.1f} ms ({r['book_cpu_s'] * 1e3:.1f} ms) | {main} | {ratio} |")


if __name__ == "__main__":
    cli()
