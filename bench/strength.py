#!/usr/bin/env python
"""Strength of the built-in bots: duplicate games in-process.

Each *game pair* deals the same cards twice (the deal of hand k is a function
of the game seed and k): once with bot A as N/S (or A) and once with A as E/W
(or B).  Every hand number played at both tables is one *duplicate deal*.

Printed per pairing:

- points per table-hand: A's hand points minus B's at the same table,
  averaged over the two tables of each duplicate deal (mean, 95% interval
  over hands, and the wider one "by pair" with each pair's hands as one
  independent cluster);
- share of duplicate game-pair points: a won game is 1, a draw 1/2; A's share
  of the pair's 2 points (mean over pairs, 95% interval);
- nil bids made/attempted and contracts set, per bot;
- time per decision, per bot: p50, p99, max (wall time);
- CPU per decision, per bot: mean, p50, max (the thread's CPU time, so a
  loaded machine does not inflate it): "equal CPU" is shown, not assumed.

Intervals are normal approximations (1.96 standard errors).  Hands of one
game are not independent, so the per-hand interval is a little optimistic;
the by-pair and game-pair intervals are not.

Run: ``python bench/strength.py hard medium --pairs 200 [--budget 0.05]
[--worlds N] [--preset pagat] [--minutes 30] [--max-hands N] [--jobs 2]``.
``--minutes`` stops starting new pairs after that long and reports what was
played; a progress line is printed every ``--every`` pairs; ``--jobs N`` plays
N pairs at once in worker processes (one core each).

Bots: easy, medium, hard, random, flatmc (the flat Monte Carlo reference in
bench/bots/flat_mc.py).  A bot may carry its own settings after a colon:
``hard:budget=0.03``, ``hard:worlds=40`` (Hard's budget in seconds or in
sampled worlds per decision; otherwise ``--budget``/``--worlds`` apply; also
``z=`` the margin over Medium's card, ``exact=`` the tricks solved exactly,
``bidmargin=`` the points per world another bid must gain over Medium's and
``bidz=`` the standard errors it must gain by, ``stop=`` (play: stop once every
other card is that many standard errors below Medium's) and ``stretch=`` (play:
up to that many times the worlds while the best card is ahead but not clearly),
``raise=0`` (bidding: never try one more than Medium's bid),
for experiments; settings are joined with commas) and
``flatmc:5x5`` (deals x rollouts per card, default 30x30).

Paired comparisons: ``--per-pair FILE`` writes one JSON line per finished pair
(``seed``, ``deals``, ``points``: the sum of its per-table-hand differences,
``share``).  Two runs from the same ``--seed`` play the same deals, so
``python bench/strength.py compare A.jsonl B.jsonl`` prints A's per-table-hand
mean minus B's over the seeds both played, with a 95% interval that treats
each pair as one cluster: two settings of a bot against the same opponent are
compared on the same cards, which separates them with far fewer pairs than two
independent intervals.  Each row also keeps the bots and settings, the pair's
per-deal differences and both sides' CPU seconds and decisions, so
``--resume`` continues an interrupted run in the same file (the seeds already
there are skipped; a file of another run, or of another version of a bot, is
refused) and
``python bench/strength.py summary FILE...`` prints a run's points per
table-hand with the by-pair 95% interval and CPU per decision of both sides
from the file alone.

Bags charged: every figure of points per table-hand is also given with each
bag a side added charged its long-run cost, its share of the penalty (10
points in pagat; rows keep the per-deal bag differences).  A game cut short
by ``--max-hands`` ends before its bags are paid for, so by points alone a
bag is worth +1 there while a full game charges it about 10: the charged
figure is closer to what the hands are worth inside a full game.  (The bots
see the cap in their rules, so they may play the last hand for its points.)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena_sdk.bot import Bot
from arena_sdk.bots import TIERS, HardBot
from arena_sdk.engine import core as engine_core
from arena_sdk.engine import resolve_ruleset
from arena_sdk.testing import RandomBot, play_game

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bots"))
from flat_mc import FlatMCBot, parse_size  # noqa: E402  (bench/bots is not a package)


@dataclass
class Tally:
    """What one bot did over the run."""

    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    nil_tried: int = 0
    nil_made: int = 0
    contracts: int = 0
    contracts_set: int = 0
    opponents_set: int = 0
    #: Hard with a budget in worlds: decisions cut short by half the move time (machine too busy).
    cut_short: int = 0

    def merge(self, other: Tally) -> None:
        """Add another tally (of the same bot, from another pair) to this one."""
        self.times.extend(other.times)
        self.cpu.extend(other.cpu)
        self.nil_tried += other.nil_tried
        self.nil_made += other.nil_made
        self.contracts += other.contracts
        self.contracts_set += other.contracts_set
        self.opponents_set += other.opponents_set
        self.cut_short += other.cut_short


def timed(factory: Callable[[], Bot], tally: Tally) -> Callable[[], Bot]:
    """A factory whose bots record the wall and CPU time of each decision in ``tally``."""

    def make() -> Bot:
        bot = factory()
        for method in ("bid", "play", "blind_nil", "draw", "exchange"):
            inner = getattr(bot, method)

            def wrapper(view: Any, _inner: Any = inner) -> Any:
                timed_out = getattr(bot, "timed_out", 0)  # Hard: searches ended by the clock
                started = time.perf_counter()
                cpu = time.thread_time()
                try:
                    return _inner(view)
                finally:
                    tally.cpu.append(time.thread_time() - cpu)
                    tally.times.append(time.perf_counter() - started)
                    if getattr(bot, "worlds", None):
                        tally.cut_short += getattr(bot, "timed_out", 0) - timed_out

            setattr(bot, method, wrapper)
        return bot

    return make


def factory_for(spec: str, budget: float | None, worlds: int | None = None) -> Callable[[], Bot]:
    """A bot factory from a name with optional settings (see the module docstring)."""
    name, _, settings = spec.partition(":")
    if name == "flatmc":
        try:
            deals, rollouts = parse_size(settings) if settings else (None, None)
        except ValueError as exc:
            raise SystemExit(f"bot {spec!r}: {exc}") from None
        return lambda: FlatMCBot(deals, rollouts) if deals else FlatMCBot()
    if name == "hard":
        extra: dict[str, float] = {}
        for item in filter(None, settings.split(",")):
            key, _, value = item.partition("=")
            try:
                if key == "budget":
                    budget = float(value)
                elif key == "worlds":
                    worlds = int(value)
                elif key in ("z", "exact", "bidmargin", "bidz", "stop", "stretch", "raise"):
                    extra[key] = float(value)
                else:
                    raise ValueError(
                        f"unknown setting {key!r} (budget=S, worlds=N, z=Z, exact=TRICKS, bidmargin=POINTS, bidz=Z, stop=Z, stretch=F or raise=0/1)"
                    )
            except ValueError as exc:
                raise SystemExit(f"bot {spec!r}: {exc}") from None

        def hard() -> Bot:
            bot = HardBot(budget, worlds=worlds, exact_tricks=int(extra["exact"]) if "exact" in extra else None)
            if "z" in extra:
                bot.z = extra["z"]  # the margin over Medium's card, in standard errors
            if "bidmargin" in extra:
                bot.bid_margin = extra["bidmargin"]  # points per world another bid must gain over Medium's
            if "bidz" in extra:
                bot.bid_z = extra["bidz"]  # ...and in standard errors of the paired gain
            if "stop" in extra:
                bot.stop = extra["stop"]  # play: stop once Medium's card clearly stands
            if "raise" in extra:
                bot.bid_raise = bool(extra["raise"])  # bidding: try Medium's bid plus one too
            if "stretch" in extra:
                bot.stretch = extra["stretch"]  # play: up to this many times the worlds on a close call
            return bot

        return hard
    if settings:
        raise SystemExit(f"bot {spec!r}: only hard and flatmc take settings")
    if name == "random":
        return RandomBot
    if name not in TIERS:
        raise SystemExit(f"unknown bot {spec!r}: choose easy, medium, hard, flatmc or random")
    return TIERS[name]


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% interval."""
    if not values:
        return math.nan, math.nan
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan
    return mean, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def mean(values: list[float]) -> float:
    """The mean, NaN when empty."""
    return statistics.fmean(values) if values else math.nan


def pct(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def tally_hands(record: dict[str, Any], team_bot: dict[str, Tally], seats: list[str],
                bags: dict[int, float] | None = None) -> dict[int, float]:  # fmt: skip
    """Per hand number: team 0's points minus team 1's; nil and contract counts.

    ``bags`` (if given) gets, per hand number, the bags team 0 added to its
    count minus those team 1 added (net of a penalty's reset: ``bags_after -
    bags_before``).
    """
    names = list(record["hands"][0]["result"]["teams"]) if record["hands"] else []
    out: dict[int, float] = {}
    for hand in record["hands"]:
        res = hand["result"]
        teams = res["teams"]
        a, b = (teams[n] for n in names)
        out[hand["number"]] = a["points"] - b["points"]
        if bags is not None:
            bags[hand["number"]] = (a["bags_after"] - a["bags_before"]) - (b["bags_after"] - b["bags_before"])
        for t, name in enumerate(names):
            tally = team_bot[name]
            other = teams[names[1 - t]]
            team = teams[name]
            for nil in team["nil_results"]:
                tally.nil_tried += 1
                tally.nil_made += bool(nil["made"])
            if team["contract"]:
                tally.contracts += 1
                tally.contracts_set += not team["made"]
            if other["contract"] and not other["made"]:
                tally.opponents_set += 1
    return out


def paired_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> tuple[int, float, float]:
    """Two runs' per-pair rows (``--per-pair``) compared on the seeds both played.

    Returns the number of common pairs, A's per-table-hand mean minus B's (each
    pair's difference of means, weighted by its deals), and the 95% half-width
    with pairs as independent clusters (NaN with fewer than two pairs).
    ``ValueError`` when the runs share no seed.
    """
    by_seed = {row["seed"]: row for row in b}
    common = [(row, by_seed[row["seed"]]) for row in a if row["seed"] in by_seed and row["deals"] and by_seed[row["seed"]]["deals"]]
    if not common:
        raise ValueError("the two runs have no seed in common (run both with the same --seed)")
    diffs = [ra["points"] / ra["deals"] - rb["points"] / rb["deals"] for ra, rb in common]
    weights = [(ra["deals"] + rb["deals"]) / 2 for ra, rb in common]
    total = sum(weights)
    diff = sum(d * w for d, w in zip(diffs, weights)) / total
    k = len(common)
    if k < 2:
        return k, diff, math.nan
    resid = sum((w * (d - diff)) ** 2 for d, w in zip(diffs, weights))
    return k, diff, 1.96 * math.sqrt(k / (k - 1) * resid) / total


def compare(argv: list[str]) -> int:
    """``strength.py compare A.jsonl B.jsonl [--json]``: the paired difference of two runs."""
    parser = argparse.ArgumentParser(prog="strength.py compare", description="Paired difference of two --per-pair files.")
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line too")
    args = parser.parse_args(argv)
    rows = []
    for path in (args.a, args.b):
        try:
            rows.append(read_rows(path))
        except OSError as exc:
            parser.error(f"{path}: {exc}")
    try:
        pairs, diff, half = paired_difference(*rows)
    except (ValueError, KeyError, TypeError) as exc:
        parser.error(str(exc))
    print(f"{args.a} minus {args.b}: {diff:+.2f} ± {half:.2f} points per table-hand over {pairs} common pairs")
    if args.json:
        print(json.dumps({"pairs": pairs, "difference": diff, "halfwidth": half}))
    return 0


def run_key(spec: tuple[Any, ...]) -> dict[str, Any]:
    """What a per-pair row must share with a run to be part of it: the bots, their settings and versions.

    The versions (each bot class's ``version``) keep a run from being
    resumed by a changed bot of the same name: its pairs would measure
    another player.
    """
    a, b, budget, worlds, preset, max_hands, move_ms = spec
    versions = [factory_for(name, budget, worlds)().version for name in (a, b)]
    return {"a": a, "b": b, "budget": budget, "worlds": worlds, "preset": preset, "max_hands": max_hands,
            "move_ms": move_ms, "versions": versions}  # fmt: skip


#: The fields of a row that name its run (:func:`run_key`); rows written before versions were kept have none.
RUN_FIELDS = ("a", "b", "budget", "worlds", "preset", "max_hands", "move_ms", "versions")


def pair_row(spec: tuple[Any, ...], result: PairResult) -> dict[str, Any]:
    """One finished pair as a JSON-able row of a ``--per-pair`` file.

    ``points`` is the sum of its per-table-hand differences over ``deals``
    duplicate deals; ``bags`` the sum of its per-deal bag differences and
    ``per_bag`` a bag's long-run cost (so ``points - per_bag * bags`` is the
    figure with bags charged, :func:`charged`); ``cpu_a``/``cpu_b`` are each
    side's CPU seconds and decisions, so a file alone gives CPU per decision
    of both sides.
    """
    return {
        **run_key(spec), "seed": result.seed, "deals": len(result.per_hand),
        "points": float(sum(result.per_hand)), "share": result.share, "per_hand": result.per_hand,
        "cpu_a": [sum(result.a.cpu), len(result.a.cpu)], "cpu_b": [sum(result.b.cpu), len(result.b.cpu)],
        "tally_a": counts(result.a), "tally_b": counts(result.b),
        "bags": float(sum(result.per_hand_bags)), "per_hand_bags": result.per_hand_bags, "per_bag": result.per_bag,
    }  # fmt: skip


def counts(t: Tally) -> dict[str, int]:
    """A side's nil and contract counts over one pair (for a per-pair row)."""
    return {"nil_tried": t.nil_tried, "nil_made": t.nil_made, "contracts": t.contracts,
            "contracts_set": t.contracts_set, "opponents_set": t.opponents_set}  # fmt: skip


def read_rows(path: str) -> list[dict[str, Any]]:
    """The rows of a ``--per-pair`` file (a truncated last line, from a killed run, is skipped)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows


def ends_with_newline(path: str) -> bool:
    """True for an empty file or one whose last byte is a newline."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def seeds_done(path: str, key: dict[str, Any]) -> set[int]:
    """Seeds already in ``path`` for this run; ``ValueError`` if the file holds another run's rows."""
    if not os.path.exists(path):
        return set()
    done = set()
    for row in read_rows(path):
        theirs = {k: row.get(k) for k in key}
        if "a" in row and theirs != key:
            raise ValueError(f"{path} holds another run ({theirs}); --resume continues only the same run, "
                             f"the same bots at the same versions ({key})")  # fmt: skip
        done.add(row["seed"])
    return done


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Points per table-hand with the by-pair 95% interval, and CPU per decision of both sides."""
    deals = sum(r["deals"] for r in rows)
    k = len(rows)
    mean_pts, half = by_pair([(r["points"], r["deals"]) for r in rows])
    with_bags = None  # rows written before bags were kept have none: no charged figure then
    if rows and all("bags" in r for r in rows):
        with_bags = list(by_pair([(r["points"] - r["per_bag"] * r["bags"], r["deals"]) for r in rows]))
    cpu = []
    for side in ("cpu_a", "cpu_b"):
        spent = sum(r[side][0] for r in rows if side in r)
        count = sum(r[side][1] for r in rows if side in r)
        cpu.append(1000 * spent / count if count else math.nan)
    share, share_half = interval([r["share"] for r in rows])
    tallies = []
    for side in ("tally_a", "tally_b"):
        total: dict[str, int] = {}
        for r in rows:
            for key, value in r.get(side, {}).items():
                total[key] = total.get(key, 0) + value
        tallies.append(total)
    return {"pairs": k, "deals": deals, "points_per_table_hand": [mean_pts, half],
            "points_bags_charged": with_bags,
            "cpu_ms_per_decision": cpu, "pair_share": [share, share_half], "tallies": tallies}  # fmt: skip


def by_pair(sums: list[tuple[float, int]]) -> tuple[float, float]:
    """Per-deal mean of (pair's sum, pair's deals) and its 95% half-width with pairs as clusters."""
    deals = sum(n for _, n in sums)
    k = len(sums)
    mean_value = sum(v for v, _ in sums) / deals if deals else math.nan
    if k < 2 or not deals:
        return mean_value, math.nan
    resid = sum((v - mean_value * n) ** 2 for v, n in sums)
    return mean_value, 1.96 * math.sqrt(k / (k - 1) * resid) / deals


def summary(argv: list[str]) -> int:
    """``strength.py summary FILE... [--json]``: each run's result from its ``--per-pair`` rows."""
    parser = argparse.ArgumentParser(prog="strength.py summary", description="Summarise --per-pair files.")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--json", action="store_true", help="print each result as one JSON line too")
    args = parser.parse_args(argv)
    groups: dict[str, dict[int, dict[str, Any]]] = {}  # run -> seed -> row (a seed written twice counts once)
    for path in args.files:
        try:
            rows = read_rows(path)
        except OSError as exc:
            parser.error(f"{path}: {exc}")
        for row in rows:
            key = json.dumps({k: row.get(k) for k in RUN_FIELDS})
            groups.setdefault(key, {})[row["seed"]] = row
    for key, by_seed in groups.items():
        result = summarise(list(by_seed.values()))
        spec = json.loads(key)
        (m, h), (ca, cb) = result["points_per_table_hand"], result["cpu_ms_per_decision"]
        versions = "versions {} and {}, ".format(*spec["versions"]) if spec["versions"] else ""
        print(f"{spec['a']} vs {spec['b']} ({versions}{spec['preset']}, max_hands {spec['max_hands']}): "
              f"{result['pairs']} pairs, {result['deals']} duplicate deals, points/table-hand "
              f"{m:+.2f} ± {h:.2f} (95%, by pair), CPU per decision {ca:.1f} ms vs {cb:.1f} ms")  # fmt: skip
        if result["points_bags_charged"] is not None:
            mc, hc = result["points_bags_charged"]
            print(f"  with bags charged their share of the penalty: {mc:+.2f} ± {hc:.2f} points per table-hand")
        for name, t in zip((spec["a"], spec["b"]), result["tallies"]):
            if t:
                print(f"  {name}: nil made/attempted {t['nil_made']}/{t['nil_tried']}; contracts set "
                      f"{t['contracts_set']}/{t['contracts']}; set the opponents {t['opponents_set']}")  # fmt: skip
        if args.json:
            print(json.dumps({**spec, **result}))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:
        return compare(argv[1:])
    if argv[:1] == ["summary"]:
        return summary(argv[1:])
    parser = argparse.ArgumentParser(description="Duplicate-game strength of two bots (or: compare A.jsonl B.jsonl).")
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--pairs", type=int, default=100, help="game pairs (default 100)")
    parser.add_argument("--preset", default="pagat")
    parser.add_argument("--budget", type=float, default=None, help="Hard's seconds per move")
    parser.add_argument("--worlds", type=int, default=None, help="Hard's sampled worlds per decision")
    parser.add_argument("--max-hands", type=int, default=None, help="cap hands per game")
    parser.add_argument("--move-ms", type=int, default=1000,
                        help="the move time the bots are told (Hard stops at half of it, wall time; default 1000): "
                             "raise it so a budget in worlds is not cut short on a busy machine")
    parser.add_argument("--seed", type=int, default=1000, help="seed of the first pair")
    parser.add_argument("--minutes", type=float, default=None, help="stop starting pairs after this")
    parser.add_argument("--every", type=int, default=10, help="progress line every N pairs")
    parser.add_argument("--jobs", type=int, default=1, help="pairs played at once, one process each (default 1)")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON line too")
    parser.add_argument("--per-pair", metavar="FILE", help="write one JSON line per finished pair (see compare)")
    parser.add_argument("--resume", action="store_true",
                        help="append to --per-pair FILE, skipping the seeds it already holds (same bots and settings)")
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    for name in (args.a, args.b):  # an unknown name or a bad setting stops here, not in a worker
        try:
            factory_for(name, args.budget, args.worlds)()
        except ValueError as exc:
            parser.error(f"bot {name!r}: {exc}")
    if args.resume and not args.per_pair:
        parser.error("--resume needs --per-pair FILE")
    # Hard, its sampler and the flat MC reference run on the engine's compiled core when it is
    # built (ARENA_SDK_PURE=1: the pure one, today's speed); the same games either way.
    print(f"engine: {engine_core.REASON}", file=sys.stderr)
    ta, tb = Tally(), Tally()
    per_hand: list[float] = []
    per_pair: list[list[float]] = []
    per_pair_charged: list[list[float]] = []  # the same, bags charged
    pair_share: list[float] = []
    spec = (args.a, args.b, args.budget, args.worlds, args.preset, args.max_hands, args.move_ms)
    done: set[int] = set()
    if args.resume:
        try:
            done = seeds_done(args.per_pair, run_key(spec))
        except ValueError as exc:
            parser.error(str(exc))
    mode = "a" if args.resume else "w"
    per_pair_file = open(args.per_pair, mode, encoding="utf-8") if args.per_pair else None  # noqa: SIM115
    if per_pair_file is not None and args.resume and not ends_with_newline(args.per_pair):
        per_pair_file.write("\n")  # a line cut off by a killed run stays on its own (and is skipped)
    started = time.monotonic()
    stop_at = started + args.minutes * 60 if args.minutes else math.inf
    pairs = 0
    seeds = iter([s for s in range(args.seed, args.seed + args.pairs) if s not in done])
    # Pairs are independent: with --jobs N they are played N at a time in
    # worker processes (one core each) and tallied here as they finish.
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        running: set[concurrent.futures.Future[PairResult]] = set()

        def top_up() -> None:
            while len(running) < args.jobs and time.monotonic() <= stop_at:
                seed = next(seeds, None)
                if seed is None:
                    return
                running.add(pool.submit(play_pair, spec, seed))

        top_up()
        while running:
            done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                running.discard(future)
                result = future.result()
                per_hand.extend(result.per_hand)
                per_pair.append(result.per_hand)
                per_pair_charged.append(result.per_hand_charged)
                pair_share.append(result.share)
                if per_pair_file is not None:
                    per_pair_file.write(json.dumps(pair_row(spec, result)) + "\n")
                    per_pair_file.flush()  # a stopped run keeps the pairs it finished
                ta.merge(result.a)
                tb.merge(result.b)
                pairs += 1
                if pairs % args.every == 0:
                    elapsed = time.monotonic() - started
                    report(args, pairs, per_pair, pair_share, ta, tb, per_pair_charged, elapsed, progress=True)
            top_up()
    if per_pair_file is not None:
        per_pair_file.close()
    elapsed = time.monotonic() - started
    report(args, pairs, per_pair, pair_share, ta, tb, per_pair_charged, elapsed, progress=False)
    return 0


@dataclass
class PairResult:
    """One duplicate game pair: per-deal differences, A's share, both tallies."""

    per_hand: list[float]
    share: float
    a: Tally
    b: Tally
    seed: int = 0
    per_hand_bags: list[float] = field(default_factory=list)
    """Per deal: the bags A's side added minus B's (both tables' mean, like ``per_hand``)."""
    per_bag: float = 0.0
    """What a bag costs in the long run under the preset (:func:`bag_cost`)."""

    @property
    def per_hand_charged(self) -> list[float]:
        """``per_hand`` with bags charged their share of the penalty (:func:`charged`)."""
        return charged(self.per_hand, self.per_hand_bags, self.per_bag)


def play_pair(spec: tuple[str, str, float | None, int | None, str, int | None, int], seed: int) -> PairResult:
    """Play the two games of one pair (the same deals, sides swapped)."""
    name_a, name_b, budget, worlds, preset, max_hands, move_ms = spec
    ta, tb = Tally(), Tally()
    fa = timed(factory_for(name_a, budget, worlds), ta)
    fb = timed(factory_for(name_b, budget, worlds), tb)
    diffs, bag_diffs = [], []
    points = 0.0
    for swap in (False, True):
        bots = [fb, fa] if swap else [fa, fb]
        res = play_game(bots, preset, seed, max_hands=max_hands, move_ms=move_ms, match_id=f"strength-{seed}-{int(swap)}")
        team_a = 1 if swap else 0
        names = list(res.record["hands"][0]["result"]["teams"])
        by_team = {names[team_a]: ta, names[1 - team_a]: tb}
        bags: dict[int, float] = {}
        d = tally_hands(res.record, by_team, names, bags)
        diffs.append({k: (v if team_a == 0 else -v) for k, v in d.items()})
        bag_diffs.append({k: (v if team_a == 0 else -v) for k, v in bags.items()})
        if res.winner is None:
            points += 0.5
        elif res.winner == team_a:
            points += 1.0
    common = sorted(set(diffs[0]) & set(diffs[1]))
    per_hand = [(diffs[0][k] + diffs[1][k]) / 2 for k in common]
    per_hand_bags = [(bag_diffs[0][k] + bag_diffs[1][k]) / 2 for k in common]
    return PairResult(per_hand, points / 2, ta, tb, seed, per_hand_bags, bag_cost(preset))


def bag_cost(preset: str) -> float:
    """Points a bag costs in the long run under ``preset``: its share of the penalty (0 without one)."""
    rules = resolve_ruleset(preset)
    return rules.bag_penalty / rules.bag_threshold if rules.bag_penalty else 0.0


def charged(per_hand: list[float], per_hand_bags: list[float], per_bag: float) -> list[float]:
    """Per-deal differences with the bags each side added charged ``per_bag`` points each.

    A game cut short (``--max-hands``) stops before the bags it carries are
    paid for: scored by points alone, a bag is worth +1 in it, while a full
    game charges it its share of the penalty (10 points in pagat) in the long
    run.  Charging it here brings a short game's figure closer to what its
    hands are worth in a full game; over a whole game the two figures differ
    by the bags left when it ended.
    """
    return [p - per_bag * b for p, b in zip(per_hand, per_hand_bags)]


def clustered(per_pair: list[list[float]]) -> float:
    """Half-width of the 95% interval of the per-hand mean with pairs as independent clusters.

    Hands of one game share its scores and bags, so they are not independent;
    pairs are.  The ratio estimator's standard error over pairs is the honest one.
    """
    return by_pair([(sum(p), len(p)) for p in per_pair])[1]


def report(args: argparse.Namespace, pairs: int, per_pair: list[list[float]], share: list[float],
           ta: Tally, tb: Tally, per_pair_charged: list[list[float]], elapsed: float, *, progress: bool) -> None:
    """Print the summary (or a one-line progress note)."""
    per_hand = [d for p in per_pair for d in p]
    m, h = interval(per_hand)
    hc = clustered(per_pair)
    mc = mean([d for p in per_pair_charged for d in p])
    hcc = clustered(per_pair_charged)
    s, sh = interval(share)
    line = (
        f"{args.a} vs {args.b} ({args.preset}, budget {args.budget}, worlds {args.worlds}): {pairs} pairs, "
        f"{len(per_hand)} duplicate deals, points/table-hand {m:+.2f} ± {h:.2f} (± {hc:.2f} by pair), "
        f"with bags charged {mc:+.2f} ± {hcc:.2f} by pair, "
        f"game-pair share {100 * s:.1f}% ± {100 * sh:.1f}%, CPU per decision "
        f"{args.a} {1000 * mean(ta.cpu):.1f} ms / {args.b} {1000 * mean(tb.cpu):.1f} ms, {elapsed / 60:.1f} min"
    )
    if progress:
        print("progress: " + line, flush=True)
        return
    print(line)
    for name, t in ((args.a, ta), (args.b, tb)):
        print(
            f"  {name:7} nil made/attempted {t.nil_made}/{t.nil_tried}; contracts set "
            f"{t.contracts_set}/{t.contracts}; set the opponents {t.opponents_set}; "
            f"time per decision p50 {1000 * pct(t.times, 0.5):.1f} ms, p99 "
            f"{1000 * pct(t.times, 0.99):.1f} ms, max {1000 * max(t.times, default=math.nan):.1f} ms "
            f"({len(t.times)} decisions); CPU per decision mean {1000 * mean(t.cpu):.1f} ms, "
            f"p50 {1000 * pct(t.cpu, 0.5):.1f} ms, max {1000 * max(t.cpu, default=math.nan):.1f} ms"
            + (f"; {t.cut_short} searches cut short by the move time" if t.cut_short else "")
        )
    if args.json:
        print(json.dumps({
            "a": args.a, "b": args.b, "preset": args.preset, "budget": args.budget, "pairs": pairs,
            "deals": len(per_hand), "points_per_table_hand": [m, h], "by_pair_halfwidth": hc, "pair_share": [s, sh],
            "points_bags_charged": [mc, hcc],
            "worlds": args.worlds, "cpu_ms_per_decision": [1000 * mean(ta.cpu), 1000 * mean(tb.cpu)],
        }))  # fmt: skip
    sys.stdout.flush()


if __name__ == "__main__":
    raise SystemExit(main())
