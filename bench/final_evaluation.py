#!/usr/bin/env python
"""The final evaluation: pairs spent until every neighbour pair is separated or tied, against two baselines.

A simulation with no games (like ``bench/ladder.py``): N final versions of known strength,
evenly spaced ``--gap`` Elo apart, except the two in the middle, which are equally strong
(so the rule must find a tie).  Before the deadline the term played ``--term`` pairs per
version at random.  Then each scheduler picks duplicate pairs one at a time, each pair's
two games drawn from the true strengths (the stronger side wins a game with the Elo
probability; the two tables' results correlated by ``--rho``, as in bench/ladder.py), and
the standings are the ladder's own (:class:`arena.ladder.games.standings.StandingsBook`, refitted
after every pair).  A run ends when :func:`arena.ladder.course.final.settled` says every
neighbour pair is separated (LOS >= 0.95) or tied (within ±40 Elo), or at ``--cap`` pairs.

Schedulers: ``final`` (:func:`arena.ladder.course.final.final_pairing`, what the ladder plays
after the deadline), ``ladder`` (:func:`arena.ladder.games.matchmaking.next_pairing`, the term's
matchmaking), ``round-robin`` (the circle method's rounds, cycled).

Printed per N: the median pairs over the seeds and the spread, runs that hit the cap, and
*wrong verdicts* at the end (a neighbour pair separated in the wrong order, or tied though
the true gap is beyond the resolution).  Run: ``.venv/bin/python bench/final_evaluation.py
[--sizes 8,16] [--seeds 3] [--gap 60] [--term 3] [--cap 3000]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from arena.ladder.course.final import OPEN, SEPARATED, TIED, final_pairing, settled, verdicts
from arena.ladder.games.matchmaking import Settings, Standing, next_pairing
from arena.ladder.games.standings import StandingsBook
from arena.results.store import StoredGame

LOS, RESOLUTION = 0.95, 40.0


def pair_games(seq: int, a: str, b: str, p: float, rho: float, rng: random.Random) -> list[StoredGame]:
    """One duplicate pair's two games, ``a`` winning each with probability ``p`` (results correlated by ``rho``)."""
    q = 1.0 - p
    r = max(rho, -min(p * p, q * q) / (p * q)) if 0 < p < 1 else 0.0
    two, zero = p * p + r * p * q, q * q + r * p * q
    u = rng.random()
    wins = 2 if u < two else 0 if u < two + zero else 1
    first = wins == 2 or (wins == 1 and rng.random() < 0.5)
    out = []
    for table, (s0, s1) in enumerate(((a, b), (b, a)), 1):
        a_won = first if table == 1 else (wins - first == 1)
        winner = a if a_won else b
        out.append(StoredGame(
            game_id=f"S{seq:07d}-t{table}", pairing=seq, deal=seq, table_no=table, cluster=f"S{seq:07d}",
            side0=s0, side1=s1, deal_seed="0" * 16, ending="target", winner=winner,
            score0=100 if winner == s0 else 0, score1=100 if winner == s1 else 0, hands=8, forfeit_entry=None,
            forfeit_reason=None, forfeit_detail=None, strikes0=0, strikes1=0, decisions=1, think_seconds=0.0,
            ruleset_hash="r", engine_version="e", sdk_version="s", image0=None, image1=None, record=None,
            finished_at="2026-01-01T00:00:00Z",
        ))  # fmt: skip
    return out


def round_robin(names: list[str]) -> Callable[[], tuple[str, str]]:
    """The circle method's rounds, cycled."""
    order = list(names) + ([""] if len(names) % 2 else [])
    pairs: list[tuple[str, str]] = []

    def next_pair() -> tuple[str, str]:
        nonlocal order
        while not pairs:
            n = len(order)
            pairs.extend((order[i], order[n - 1 - i]) for i in range(n // 2) if order[i] and order[n - 1 - i])
            order = [order[0], order[-1], *order[1:-1]]
        return pairs.pop(0)

    return next_pair


def run(n: int, scheduler: str, seed: int, args: argparse.Namespace) -> tuple[int, bool, int]:
    """(pairs spent, hit the cap, wrong verdicts at the end) of one run."""
    rng = random.Random(seed)
    names = [f"t{i:02d}@1" for i in range(n)]
    strength = {name: args.gap * i for i, name in enumerate(names)}
    middle = n // 2
    strength[names[middle]] = strength[names[middle - 1]]  # two equally strong versions: a tie to find
    book = StandingsBook()
    seq = 0

    def play(a: str, b: str) -> None:
        nonlocal seq
        seq += 1
        p = 1.0 / (1.0 + 10 ** (-(strength[a] - strength[b]) / 400.0))
        for g in pair_games(seq, a, b, p, args.rho, rng):
            book.add(g)

    for _ in range(args.term * n // 2):  # the term: random pairings
        play(*rng.sample(names, 2))
    robin = round_robin(names)
    spent = 0
    while True:
        rows = book.standings(names)
        found = verdicts(rows, LOS, RESOLUTION, None if args.independent else book.pairs_played())
        if settled(rows, found) or spent >= args.cap:
            break
        if scheduler == "final":
            picked = final_pairing(rows, found, (), book.pairs_played())
        elif scheduler == "ladder":
            pool = [Standing(r.entry, r.elo if r.elo is not None else 1500.0, r.low if r.low is not None else float("-inf"),
                             r.high if r.high is not None else float("inf"), r.pairs) for r in rows]  # fmt: skip
            picked = next_pairing(pool, book.pairs_played(), (), rng, Settings())
        else:
            picked = robin()
        assert picked is not None
        play(*picked)
        spent += 1
    wrong = 0
    for v in found:
        gap = strength[v.upper] - strength[v.lower]
        if (v.state == SEPARATED and gap < 0) or (v.state == TIED and abs(gap) > RESOLUTION):
            wrong += 1
    assert all(v.state != OPEN for v in found) or spent >= args.cap
    return spent, spent >= args.cap, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,16")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--gap", type=float, default=60.0)
    parser.add_argument("--rho", type=float, default=-0.3)
    parser.add_argument("--term", type=int, default=3, help="random pairs per version before the deadline")
    parser.add_argument("--cap", type=int, default=3000)
    parser.add_argument("--schedulers", default="final,ladder,round-robin")
    parser.add_argument("--independent", action="store_true", help="verdicts from the two intervals as if independent")
    args = parser.parse_args()
    started = time.monotonic()
    for n in (int(s) for s in args.sizes.split(",")):
        medians = {}
        for scheduler in args.schedulers.split(","):
            runs = [run(n, scheduler, seed, args) for seed in range(args.seeds)]
            spent = [r[0] for r in runs]
            medians[scheduler] = statistics.median(spent)
            print(f"N={n:3d} {scheduler:12s} pairs median {statistics.median(spent):7.0f}  spread {min(spent)}-{max(spent)}  "
                  f"capped {sum(r[1] for r in runs)}/{len(runs)}  wrong verdicts {sum(r[2] for r in runs)}", flush=True)  # fmt: skip
        if "final" in medians:
            ratios = ", ".join(f"{k}/final {v / medians['final']:.2f}" for k, v in medians.items() if k != "final")
            print(f"N={n:3d} {ratios}")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
