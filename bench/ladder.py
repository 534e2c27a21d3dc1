#!/usr/bin/env python
"""Ladder matchmaking: pairs played until the ranking is established, ours against two baselines.

A simulation with no games (issue 25): N bots of known strength; each scheduler picks
duplicate pairs one at a time, every pair's outcome is drawn from the true strengths,
and the ratings are refitted with the real :func:`arena.ratings.fit` (each pair is one
cluster, so the intervals are the pair-robust ones the ladder shows) every ``--refit``
pairs (default N/2; every 2% of the pairs so far once that is more, since a fit's cost
grows with the games: the counts are within 2%). A run ends when every adjacent pair of
the TRUE ranking is *separated at 95%* in the right order, checked at each refit, or at
``--cap`` pairs ("not separated by the cap"). ``--criterion``:

- ``order`` (default): the 95% interval of the two ratings' difference excludes 0 on
  the right side (the fit's likelihood of superiority of the stronger is at least 97.5%);
- ``intervals``: the stronger one's own 95% interval lies wholly above the weaker one's
  (the two intervals the leaderboard shows do not overlap).

The model
---------
- Strengths: evenly spaced, ``--gap`` Elo apart (default 40: N = 16 spans 0..600 Elo,
  N = 8 0..280, N = 32 0..1240), given to the bot names in a random order per seed (so
  no scheduler gains from name order). Even spacing because the goal needs every
  neighbour separated: two bots 3 Elo apart would take any scheduler forever.
- A game is draw-free: the stronger side wins with the Elo probability
  ``p = 1 / (1 + 10^(−d/400))``.
- A duplicate pair is two games on the same deal with the seats swapped; its score is
  0, 1 or 2 (no draws). The two tables' results (from one side) have correlation
  ``--rho`` (default −0.3: the deal's luck favours the same cards at both tables, so
  the results tend to split 1–1; this is why duplicate pairs are cheaper than
  independent games): ``P(2) = p² + ρ·p(1−p)``, ``P(0) = (1−p)² + ρ·p(1−p)``,
  ``P(1) = 2p(1−p)(1−ρ)``, each game still won with probability ``p``. (ρ is clamped where
  ``p`` is so extreme that the law would go negative.)

The schedulers
--------------
- ``ours``: :func:`arena.ladder.games.matchmaking.next_pairing` with default settings, called
  with the standings of the latest fit (a version not yet fitted: Elo 1500, infinite
  interval), the pairs played so far, and as busy the versions at the other tables in
  flight (the server runs ``--tables`` pairs at once, default 2).
- ``random``: a uniformly random pairing each time.
- ``round-robin``: the circle method's rounds (every bot plays once per round), cycled.

Printed per N: for each scheduler the median pairs over the seeds, the spread (min–max),
how many runs hit the cap; then the ratios round-robin/ours and random/ours (medians;
``>=`` when a baseline's median is the cap). Goal: round-robin/ours >= 2 at N = 16.
``ours-intervals`` (``--schedulers``) is ours working towards the ``intervals`` criterion.

Run: ``.venv/bin/python bench/ladder.py [--sizes 8,16,32] [--seeds 5] [--gap 40]
[--rho -0.3] [--criterion order|intervals] [--schedulers ours,random,round-robin]
[--tables 2] [--refit K] [--cap PAIRS] [--quick] [--json]`` (minutes; ``--quick``: N = 8,
3 seeds, ours and round robin only, well under a minute on an idle machine).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.ladder.games.matchmaking import INTERVALS, ORDER, Settings, Standing, next_pairing
from arena.ratings import Ratings, Result, fit

#: The ratings' intervals: 95%.
INTERVAL = 0.95
#: Our matchmaking, by what its settled phase works towards.
OURS = {"ours": Settings(), "ours-intervals": Settings(separation=INTERVALS)}

#: The goal of issue 25: round robin needs at least this many times our pairs at N = 16.
GOAL = 2.0
SCHEDULERS = ("ours", "random", "round-robin")
#: Every scheduler ``--schedulers`` accepts.
KNOWN = (*SCHEDULERS, "ours-intervals")


def true_strengths(n: int, gap: float, rng: random.Random) -> dict[str, float]:
    """``n`` bots ``gap`` Elo apart (weakest at 0), names shuffled."""
    names = [f"bot{i:02d}" for i in range(n)]
    rng.shuffle(names)
    return {name: i * gap for i, name in enumerate(names)}


def pair_games(rng: random.Random, elo_a: float, elo_b: float, rho: float) -> tuple[float, float]:
    """``a``'s results at the two tables of one duplicate pair (1 win, 0 loss)."""
    p = 1.0 / (1.0 + 10.0 ** (-(elo_a - elo_b) / 400.0))
    q = p * (1.0 - p)
    rho = max(rho, -min(p, 1.0 - p) / max(p, 1.0 - p))
    both = p * p + rho * q
    neither = (1.0 - p) * (1.0 - p) + rho * q
    u = rng.random()
    if u < both:
        return 1.0, 1.0
    if u < both + neither:
        return 0.0, 0.0
    return (1.0, 0.0) if rng.random() < 0.5 else (0.0, 1.0)


def circle_rounds(names: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Round robin by the circle method, cycled forever (a bye when ``len(names)`` is odd)."""
    players: list[str | None] = list(names) + ([None] if len(names) % 2 else [])
    k = len(players)
    while True:
        for _ in range(k - 1):
            for x in range(k // 2):
                a, b = players[x], players[k - 1 - x]
                if a is not None and b is not None:
                    yield a, b
            players = [players[0], players[-1], *players[1:-1]]


@dataclass
class Run:
    """One scheduler on one pool: the results so far and the latest fit."""

    strengths: dict[str, float]
    rho: float
    rng: random.Random
    results: list[Result] = field(default_factory=list)
    played: dict[frozenset[str], int] = field(default_factory=dict)
    pairs_of: dict[str, int] = field(default_factory=dict)
    ratings: Ratings | None = None

    def play(self, a: str, b: str) -> None:
        """One duplicate pair between ``a`` and ``b``, drawn from the true strengths."""
        g1, g2 = pair_games(self.rng, self.strengths[a], self.strengths[b], self.rho)
        cluster = f"pair-{len(self.results) // 2}"
        self.results += [Result(a, b, g1, cluster), Result(a, b, g2, cluster)]
        key = frozenset((a, b))
        self.played[key] = self.played.get(key, 0) + 1
        for x in (a, b):
            self.pairs_of[x] = self.pairs_of.get(x, 0) + 1

    def refit(self) -> None:
        """Refit on every result so far (the ladder's fit); none while the graph is split."""
        try:
            self.ratings = fit(
                self.results,
                start={p.name: p.elo for p in self.ratings.players} if self.ratings else None,
            )
        except ValueError:  # some bots not linked yet: no comparable ratings
            self.ratings = None

    def standings(self) -> list[Standing]:
        """What the server hands the matchmaking: the latest fit, unfitted versions unknown."""
        rated = {p.name: p for p in self.ratings.players} if self.ratings else {}
        out = []
        for name in sorted(self.strengths):
            p = rated.get(name)
            if p is None:
                out.append(
                    Standing(name, 1500.0, -float("inf"), float("inf"), self.pairs_of.get(name, 0))
                )
            else:
                out.append(Standing(name, p.elo, p.lower, p.upper, self.pairs_of.get(name, 0)))
        return out

    def separated(self, criterion: str) -> bool:
        """Every adjacent pair of the true ranking separated at 95% by ``criterion``."""
        if self.ratings is None or len(self.ratings.players) < len(self.strengths):
            return False
        order = sorted(self.strengths, key=lambda n: -self.strengths[n])
        neighbours = list(itertools.pairwise(order))
        if criterion == INTERVALS:  # the intervals do not overlap, the right way round
            return all(self.ratings[hi].lower > self.ratings[lo].upper for hi, lo in neighbours)
        # ORDER: the difference's 95% interval excludes 0 on the right side (LOS >= 97.5%)
        return all(
            self.ratings.los[hi][lo] >= 1.0 - (1.0 - INTERVAL) / 2.0 for hi, lo in neighbours
        )


Picker = Callable[[Run, set[str]], tuple[str, str]]


def make_picker(kind: str, names: Sequence[str], rng: random.Random) -> Picker:
    """The scheduler ``kind`` as a function of the run and the versions at a table."""
    if kind in OURS:
        settings = OURS[kind]
        return lambda run, busy: _ours(run, busy, rng, settings)
    if kind == "random":
        return lambda run, busy: tuple(rng.sample(sorted(names), 2))  # type: ignore[return-value]
    if kind == "round-robin":
        order = sorted(names)
        rng.shuffle(order)
        cycle = circle_rounds(order)
        return lambda run, busy: next(cycle)
    raise ValueError(f"unknown scheduler {kind!r}")


def _ours(run: Run, busy: set[str], rng: random.Random, settings: Settings) -> tuple[str, str]:
    pick = next_pairing(run.standings(), run.played, busy, rng, settings)
    assert pick is not None
    return pick


def refit_due(pairs: int, last: int, every: int) -> bool:
    """Refit every ``every`` pairs, or every 2% of the pairs so far once that is more
    (the fit's cost grows with the games; the pairs reported are within 2%)."""
    return pairs - last >= max(every, pairs // 50)


def simulate(
    kind: str, n: int, seed: int, *, gap: float, rho: float, refit: int, cap: int, tables: int = 2,
    criteria: Sequence[str] = (ORDER,),
) -> dict[str, int | None]:  # fmt: skip
    """Pairs ``kind`` needed until the true ranking is separated by each criterion
    (``None``: not by ``cap``)."""
    strengths = true_strengths(n, gap, random.Random(seed))
    # The outcomes of a seed are one stream whatever the scheduler; the schedulers' own
    # randomness is another.
    run = Run(strengths, rho, random.Random(seed * 7919 + 1))
    picker = make_picker(kind, list(strengths), random.Random(seed * 104729 + 2))
    # The server runs ``tables`` pairs at once: the versions of the other tables are busy.
    in_flight: deque[tuple[str, str]] = deque(maxlen=max(tables - 1, 0))
    found: dict[str, int | None] = dict.fromkeys(criteria)
    pairs = last = 0
    while pairs < cap and None in found.values():
        busy = {x for pair in in_flight for x in pair} if tables > 1 else set()
        a, b = picker(run, busy)
        in_flight.append((a, b))
        run.play(a, b)
        pairs += 1
        if refit_due(pairs, last, refit) or pairs == cap:
            last = pairs
            run.refit()
            for c in criteria:
                if found[c] is None and run.separated(c):
                    found[c] = pairs
    return found


def summary(values: list[int | None], cap: int) -> dict[str, Any]:
    """Median and spread of a scheduler's runs (a capped run counts as the cap)."""
    as_int = [v if v is not None else cap for v in values]
    return {
        "median": statistics.median(as_int),
        "min": min(as_int),
        "max": max(as_int),
        "capped": sum(v is None for v in values),
        "runs": values,
    }


@dataclass(frozen=True)
class Plan:
    """What one bench run covers."""

    sizes: tuple[int, ...]
    seeds: int
    gap: float
    rho: float
    criterion: str
    schedulers: tuple[str, ...]
    tables: int
    refit: int | None  # None: N/2
    cap: int | None  # None: 500 N


def bench(plan: Plan, say: Callable[[str], None]) -> dict[str, Any]:
    """Every scheduler at every size over the seeds; the ratios of the baselines to ours."""
    out: dict[str, Any] = {}
    for n in plan.sizes:
        k = plan.refit or max(2, n // 2)
        limit = plan.cap or 500 * n
        row: dict[str, Any] = {"refit": k, "cap": limit}
        for kind in plan.schedulers:
            started = time.perf_counter()
            runs = [
                simulate(kind, n, s, gap=plan.gap, rho=plan.rho, refit=k, cap=limit, tables=plan.tables,
                         criteria=(plan.criterion,))[plan.criterion]
                for s in range(1, plan.seeds + 1)
            ]  # fmt: skip
            row[kind] = summary(runs, limit)
            row[kind]["seconds"] = round(time.perf_counter() - started, 1)
            say(f"  N={n:<3} {kind:<15}" + _describe(row[kind], limit))
        if "ours" in plan.schedulers:
            for base in ("round-robin", "random"):
                if base not in plan.schedulers:
                    continue
                ratio = row[base]["median"] / row["ours"]["median"]
                at_least = row[base]["capped"] * 2 > plan.seeds  # the baseline's median is the cap
                row[f"ratio_{base}_to_ours"] = {"value": round(ratio, 2), "at_least": at_least}
                say(f"  N={n:<3} {base}/ours = {'>= ' if at_least else ''}{ratio:.2f}x")
            if row["ours"]["capped"] * 2 > plan.seeds:
                say(f"  N={n:<3} note: ours' median is the cap, so the ratios are not meaningful")
        out[str(n)] = row
    return out


def _describe(s: dict[str, Any], cap: int) -> str:
    text = (
        f"median {s['median']:>7.0f} pairs  (min {s['min']}, max {s['max']})  {s['seconds']:6.1f} s"
    )
    if s["capped"]:
        text += f"  {s['capped']} run(s) not separated by the cap ({cap})"
    return text


def parse(argv: list[str] | None) -> tuple[Plan, bool]:
    """The command line as a :class:`Plan` and ``--json`` (one clear error for bad input)."""
    parser = argparse.ArgumentParser(
        description="Ladder matchmaking against random pairing and round robin."
    )
    parser.add_argument(
        "--sizes", default="8,16,32", help="numbers of bots, comma-separated (default 8,16,32)"
    )
    parser.add_argument(
        "--seeds", type=int, default=5, help="runs per scheduler and size (default 5)"
    )
    parser.add_argument(
        "--gap", type=float, default=40.0, help="Elo between neighbours (default 40)"
    )
    parser.add_argument(
        "--rho", type=float, default=-0.3, help="correlation of a pair's two tables (default -0.3)"
    )
    parser.add_argument("--criterion", choices=(ORDER, INTERVALS), default=ORDER,
                        help="separated at 95%%: the difference's interval excludes 0 (order, default) "
                             "or the two intervals do not overlap (intervals)")  # fmt: skip
    parser.add_argument("--schedulers", default=",".join(SCHEDULERS),
                        help=f"comma-separated, of {', '.join(KNOWN)} (default {','.join(SCHEDULERS)})")  # fmt: skip
    parser.add_argument("--tables", type=int, default=2, help="pairs played at once (default 2)")
    parser.add_argument(
        "--refit", type=int, default=None, help="pairs between refits at least (default N/2)"
    )
    parser.add_argument(
        "--cap", type=int, default=None, help="pairs per run at most (default 500 N)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="N = 8 only, 3 seeds, ours and round robin"
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    args = parser.parse_args(argv)
    try:
        sizes = tuple(int(x) for x in args.sizes.split(",") if x.strip())
    except ValueError:
        parser.error(f"--sizes: comma-separated integers, got {args.sizes!r}")
    schedulers = tuple(x.strip() for x in args.schedulers.split(",") if x.strip())
    unknown = [x for x in schedulers if x not in KNOWN]
    if unknown:
        parser.error(f"--schedulers: unknown {', '.join(unknown)} (known: {', '.join(KNOWN)})")
    if args.quick:
        sizes = (8,)
        args.seeds = min(args.seeds, 3)
        schedulers = tuple(x for x in schedulers if x != "random")
    if not sizes or any(n < 2 for n in sizes) or args.seeds < 1 or args.tables < 1:
        parser.error("need sizes >= 2, seeds >= 1 and tables >= 1")
    if not -1.0 <= args.rho <= 1.0 or args.gap <= 0 or (args.refit or 1) < 1 or (args.cap or 1) < 1:
        parser.error("need -1 <= rho <= 1, gap > 0, refit >= 1 and cap >= 1")
    plan = Plan(
        sizes,
        args.seeds,
        args.gap,
        args.rho,
        args.criterion,
        schedulers,
        args.tables,
        args.refit,
        args.cap,
    )
    return plan, bool(args.json)


def main(argv: list[str] | None = None) -> int:
    plan, as_json = parse(argv)

    def say(line: str) -> None:
        if not as_json:
            print(line, flush=True)

    say(f"ladder matchmaking: strengths {plan.gap:g} Elo apart, pair tables correlated rho={plan.rho:g}, "
        f"{plan.tables} table(s) at once, {plan.seeds} seed(s); pairs until every true neighbour is "
        f"separated at 95% ({plan.criterion})")  # fmt: skip
    started = time.perf_counter()
    data = bench(plan, say)
    result: dict[str, Any] = {
        "gap": plan.gap, "rho": plan.rho, "seeds": plan.seeds, "criterion": plan.criterion,
        "tables": plan.tables, "sizes": data, "goal": f"round-robin/ours >= {GOAL} at N=16",
    }  # fmt: skip
    ratio = data.get("16", {}).get("ratio_round-robin_to_ours")
    if ratio:
        result["meets_goal"] = ratio["value"] >= GOAL
        say(f"goal round-robin/ours >= {GOAL}x at N=16: {ratio['value']:.2f}x "
            f"{'PASS' if result['meets_goal'] else 'FAIL'}")  # fmt: skip
    result["seconds"] = round(time.perf_counter() - started, 1)
    say(f"total {result['seconds']} s")
    if as_json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
