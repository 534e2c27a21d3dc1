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

``--course``: the grades of a course with clones (issue 46: three identical bots got A, B
and C).  Ten versions: three identical ones (the clones) placed across the B/C band of
``[[10, "A"], [35, "B"], [70, "C"], [100, "D"]]``, a near-clone 15 Elo below them, the rest
100 Elo apart.  After the term, the final evaluation plays ``--tables`` pairs at once (each
round, a pick for every free table, then all of them played) until settled or ``--budget``
pairs (``final_until``), and the table is graded.  Per scheduler: how often the three clones
got one grade (under today's rule, and under the former one: declared ties only), how
often the evaluation settled, the pairs spent, wrong verdicts, and how many teams a course
were graded otherwise than their true strength's place gives (the clones share theirs).
Schedulers: ``final`` (today's: open pairs in turn, those straddling a band first, a pick
for every free table, an open pair graded as tied) and ``lowest-los`` (before: the open
pair with the lowest LOS, one pair a round, only declared ties share a place).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable

from arena.ladder.course.final import OPEN, SEPARATED, TIED, final_pairing, final_table, settled, straddling, verdicts
from arena.ladder.course.grades import GradeBands
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


#: The course's bands (docs/ladder.md's example) and the true strengths: t03-t05 are clones across the B/C band.
BANDS = GradeBands(((10, "A"), (35, "B"), (70, "C"), (100, "D")))
COURSE = {"t00": 500.0, "t01": 400.0, "t02": 300.0, "t03": 200.0, "t04": 200.0, "t05": 200.0, "t06": 185.0,
          "t07": 100.0, "t08": 0.0, "t09": -100.0}  # fmt: skip
CLONES = ("t03", "t04", "t05")


def lowest_los(rows: list, found: list, busy: set[str], played: dict) -> tuple[str, str] | None:
    """The former pick (before issue 46): an unrated version first, else the open pair with the lowest LOS."""
    free = [r for r in rows if r.entry not in busy]
    for newcomer in sorted((r for r in free if r.elo is None), key=lambda r: (r.pairs, r.entry)):
        others = [r.entry for r in free if r.entry != newcomer.entry]
        if others:
            other = min(others, key=lambda o: (played.get(frozenset((newcomer.entry, o)), 0), o))
            return min(newcomer.entry, other), max(newcomer.entry, other)
    open_pairs = [v for v in found if v.state == OPEN and v.upper not in busy and v.lower not in busy]
    if not open_pairs:
        return None
    best = min(open_pairs, key=lambda v: (v.los, played.get(frozenset((v.upper, v.lower)), 0), v.upper))
    return min(best.upper, best.lower), max(best.upper, best.lower)


def grades_of(rows: list, found: list, open_as_tied: bool, played: dict) -> dict[str, str]:
    """Each version's grade: by today's final table (open pairs graded as tied) or, before, declared ties only."""
    if open_as_tied:
        table = final_table(rows, "t", LOS, RESOLUTION, played)
        ranked = sum(1 for r in table.rows if r.rank is not None)
        return {r.entry.split("@")[0]: BANDS.grade(r.rank, ranked) for r in table.rows}
    place: dict[str, int] = {}
    for i, r in enumerate(rows, 1):
        place[r.entry] = i
    for v in found:  # a declared tie shares the better place (the rule before)
        if v.state == TIED:
            place[v.lower] = place[v.upper]
    return {e.split("@")[0]: BANDS.grade(p, len(rows)) for e, p in place.items()}


def course_run(scheduler: str, seed: int, args: argparse.Namespace) -> tuple[bool, bool, bool, int, int, int]:
    """(clones got one grade with open pairs graded as tied, with declared ties only, settled, pairs spent,
    wrong verdicts, teams graded otherwise than their true strength's place) of one course."""
    rng = random.Random(seed)
    names = [f"{t}@1" for t in COURSE]
    strength = {f"{t}@1": e for t, e in COURSE.items()}
    book = StandingsBook()
    seq = 0

    def play(a: str, b: str) -> None:
        nonlocal seq
        seq += 1
        p = 1.0 / (1.0 + 10 ** (-(strength[a] - strength[b]) / 400.0))
        for g in pair_games(seq, a, b, p, args.rho, rng):
            book.add(g)

    for _ in range(args.term * len(names) // 2):
        play(*rng.sample(names, 2))
    spent: Counter[frozenset[str]] = Counter()
    total = 0
    while True:
        rows = book.standings(names)
        found = verdicts(rows, LOS, RESOLUTION, book.pairs_played())
        if settled(rows, found) or total >= args.budget:
            break
        busy: set[str] = set()
        picks = []
        for _ in range(args.tables if scheduler == "final" else 1):
            if scheduler == "final":
                pick = final_pairing(rows, found, busy, book.pairs_played(), straddling(rows, BANDS), spent)
            else:
                pick = lowest_los(rows, found, busy, book.pairs_played())
            if pick is None or total + len(picks) >= args.budget:
                break
            picks.append(pick)
            busy.update(pick)
            spent[frozenset(pick)] += 1
        if not picks:
            break
        for pick in picks:
            play(*pick)
        total += len(picks)
    one = [len({grades_of(rows, found, rule, book.pairs_played())[c] for c in CLONES}) == 1 for rule in (True, False)]
    graded = grades_of(rows, found, True, book.pairs_played())
    truth = {t: BANDS.grade(1 + sum(1 for e in COURSE.values() if e > COURSE[t]), len(COURSE)) for t in COURSE}
    off = sum(1 for t in COURSE if graded[t] != truth[t])
    wrong = sum(1 for v in found if (v.state == SEPARATED and strength[v.upper] < strength[v.lower])
                or (v.state == TIED and abs(strength[v.upper] - strength[v.lower]) > RESOLUTION))  # fmt: skip
    return one[0], one[1], settled(rows, found), total, wrong, off


def course_main(args: argparse.Namespace) -> None:
    """The ``--course`` figures (the module docstring), one line per scheduler."""
    for scheduler in args.schedulers.split(","):
        runs = [course_run(scheduler, seed, args) for seed in range(args.seeds)]
        n = len(runs)
        print(f"{scheduler:11s} tables {args.tables if scheduler == 'final' else 1}  budget {args.budget}: clones in one band "
              f"{sum(r[0] for r in runs)}/{n} (open graded as tied), {sum(r[1] for r in runs)}/{n} (declared ties only)  "
              f"settled {sum(r[2] for r in runs)}/{n}  pairs median {statistics.median(r[3] for r in runs):.0f} "
              f"({min(r[3] for r in runs)}-{max(r[3] for r in runs)})  wrong verdicts {sum(r[4] for r in runs)}  "
              f"grades off the truth {sum(r[5] for r in runs) / n:.1f} a course", flush=True)  # fmt: skip


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
    parser.add_argument("--course", action="store_true", help="the course with clones: grades, not pairs to settle")
    parser.add_argument("--budget", type=int, default=120, help="--course: pairs before final_until")
    parser.add_argument("--tables", type=int, default=3, help="--course: pairs at once (the ladder's concurrency)")
    args = parser.parse_args()
    started = time.monotonic()
    if args.course:
        if args.schedulers == parser.get_default("schedulers"):
            args.schedulers = "final,lowest-los"
        course_main(args)
        print(f"({time.monotonic() - started:.0f} s)")
        return
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
