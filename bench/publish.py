"""Publishing N games with replay pages: time and size (issue: the viewer stays usable at 10,000).

    .venv/bin/python bench/publish.py --games 10000 --workers 2

A pool of distinct four-player games (random legal play, ``--hands`` hands each) is
written as records once; N games of a duplicate round robin point at them, so the
publishing work per game is real (each game is replayed by the engine and written as
its own page) without writing N record files.  Prints, in the same process:

- the baseline: checking every record with the engine (what ``arena replay`` does);
- ``ratings publish`` without replays (leaderboard files only);
- ``ratings publish`` with replay pages (games.html, a page per game and per pair);
- publishing again with nothing new (pages kept);
- sizes: the whole site, per game page, per pair page, games.html, and the records.

The ratio of the replay publish to the baseline is the viewer's cost per game over
the engine's own replay.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from arena.publish import GameRow, Standings, results_from_games, write_outputs
from arena.ratings import fit
from arena_sdk.engine import GameState, record_from_state, replay_record, resolve_ruleset


def random_game(seed: int, hands: int) -> dict:
    """A record of random legal play (blind nil off: pagat)."""
    state = GameState.new(resolve_ruleset("pagat", {"max_hands": str(hands)}), seed)
    rng = random.Random(seed)
    while not state.is_over:
        state.apply(rng.choice(state.legal_actions()))
    return record_from_state(state, game_id=f"pool-{seed}")


def make_tournament(root: Path, games: int, pool: int, hands: int) -> Standings:
    records = root / "records"
    records.mkdir(parents=True)
    for k in range(pool):
        (records / f"pool-{k}.json").write_text(json.dumps(random_game(k, hands)))
    entries = [f"bot-{k:02d}" for k in range(20)]
    pairings = [(a, b) for i, a in enumerate(entries) for b in entries[i + 1 :]]
    rows: list[GameRow] = []
    rng = random.Random(1)
    deal = 0
    while len(rows) < games:
        for p, (a, b) in enumerate(pairings):
            if len(rows) >= games:
                break
            for table, (s0, s1) in enumerate(((a, b), (b, a)), 1):
                k = rng.randrange(pool)
                score = rng.choice((0.0, 1.0))
                rows.append(GameRow(f"p{p:03d}-d{deal:03d}-t{table}", s0, s1, score, "max_hands",
                                    f"p{p:03d}-d{deal:03d}", 300, 200, pairing=p, deal=deal,
                                    table=table, record=f"records/pool-{k}.json"))  # fmt: skip
        deal += 1
    rows = rows[:games]
    return Standings("bench", "pagat", "0" * 16, entries, results_from_games(rows), rows)


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--pool", type=int, default=40, help="distinct games to draw records from")
    parser.add_argument("--hands", type=int, default=10, help="hands per game (about a real game)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="copy the site here to look at it")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-publish-"))
    try:
        standings = make_tournament(tmp / "tournament", args.games, args.pool, args.hands)
        ratings = fit(standings.results)
        src = tmp / "tournament"

        t = time.perf_counter()
        for g in standings.games:
            replay_record(json.loads((src / g.record).read_text()))  # type: ignore[operator]
        baseline = time.perf_counter() - t

        t = time.perf_counter()
        write_outputs(standings, ratings, tmp / "plain")
        plain = time.perf_counter() - t

        site = tmp / "site"
        t = time.perf_counter()
        paths = write_outputs(standings, ratings, site, records_dir=src)
        full = time.perf_counter() - t

        t = time.perf_counter()
        write_outputs(standings, ratings, site, records_dir=src)
        again = time.perf_counter() - t

        games_dir = site / "games"
        pages = [p for p in games_dir.glob("*.html") if not p.name.startswith("pair-")]
        pairs = list(games_dir.glob("pair-*.html"))
        record_bytes = sum((src / g.record).stat().st_size for g in standings.games)  # type: ignore[operator]
        n = args.games
        print(f"games {n} ({args.hands} hands each, {args.pool} distinct deals), workers {args.workers}, "
              f"python {sys.version.split()[0]}")  # fmt: skip
        print(f"baseline: replay_record of every record   {baseline:8.1f} s  ({1000 * baseline / n:.1f} ms/game)")
        print(f"publish without replays                   {plain:8.1f} s")
        print(f"publish with replay pages                 {full:8.1f} s  ({1000 * full / n:.1f} ms/game)"
              f"  ratio to baseline {full / baseline:.2f}")  # fmt: skip
        print(f"publish again, nothing new                {again:8.1f} s")
        print(f"site {size(site) / 1e6:.1f} MB: {len(pages)} game pages "
              f"(mean {sum(p.stat().st_size for p in pages) / max(1, len(pages)) / 1e3:.1f} kB), "
              f"{len(pairs)} pair pages (mean {sum(p.stat().st_size for p in pairs) / max(1, len(pairs)):.0f} B), "
              f"games.html {paths['games'].stat().st_size / 1e6:.2f} MB; "
              f"the same games' records {record_bytes / 1e6:.1f} MB")  # fmt: skip
        if args.keep:
            shutil.copytree(site, args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
