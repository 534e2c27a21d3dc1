#!/usr/bin/env python
"""Engine speed: random full hands of Spades per second, ours against OpenSpiel.

What is measured
----------------
One *hand* is everything from an unplayed deck to a scored hand: the deal (or,
in the two-player game, the draw), every bid, the 52 card plays (26 with two
players) and the scoring.  Each contender plays uniformly random legal
decisions, on one core, in one process, and we count hands per second.

Ours (``arena_sdk.engine``), always one hand per fresh game:
``GameState.new(resolve_ruleset(preset), seed)`` (seeded first dealer and
seeded shuffle), then the first hand is played until it is scored.  The
engine runs on to the next decision (hand 2's first bid); a four-player hand
is dealt when its cards are first needed, so hand 2's shuffle is not inside
our figure (hand 1's always is: its first card play needs the cards).  In the
two-player game the draw needs the stock at once, so hand 2 is shuffled there.

- ``playout``: :func:`arena_sdk.engine.playout.play_random_hand`, which picks
  cards from the legal-play bitmask instead of building a list.
- ``plain``: the way any caller drives the public API,
  ``state.apply(rng.choice(state.legal_actions()))`` until the hand is scored.
- ``games``: for information, whole games with ``play_random_game``, counting
  every hand played (steady state: one deal per hand, no game set-up).

Both four-player (``pagat``) and two-player (``two-player``) presets are run;
OpenSpiel has no two-player Spades, so only ``pagat`` has ratios.

OpenSpiel (``open_spiel==2.0.2``, ``import pyspiel``, optional: ``pip install
-e '.[bench]'``).  Its ``spades`` game is exactly one hand: 52 chance nodes
deal the cards, four bids, 52 plays, then ``ScoreUp`` and the state is
terminal; there is no multi-hand loop (its parameters, ``win_threshold``,
the mercy rule, ``win_or_loss_bonus`` and ``num_tricks``, only shape the
returns and the observation tensor, so the defaults are used).  So ``game.new_initial_state()`` played until
``state.is_terminal()`` is one hand, and we check that each one has the
expected 108 actions in its history.

- ``documented``: the loop of OpenSpiel's own examples.  At a chance node call
  ``state.chance_outcomes()`` and pick one weighted by probability; at a player
  node ``rng.choice(state.legal_actions())``; one ``state.apply_action`` per
  step.  The deal outcomes are uniform (checked before timing), so a plain
  ``rng.choice`` over the outcome list *is* the weighted choice; that is the
  fastest faithful way (the examples use ``numpy.random.choice(p=...)``, which
  is slower), so this baseline is as strong as we can make it.
- ``legal-actions``: chance nodes are driven with ``legal_actions()`` too,
  skipping the (action, probability) pairs: the fastest way we know to drive
  OpenSpiel from Python, so the hardest baseline.

How it is timed
---------------
These machines are shared and noisy.  The process pins itself to one core
(where ``os.sched_setaffinity`` exists), warms every contender up, then runs
``--rounds`` rounds; in each round every contender plays for
``--seconds / --rounds`` seconds of this process's CPU time (``--clock wall``:
wall time, as before issue 48; on a loaded machine the wall clock also counts
the time other processes held the core), in turn (A, B, C, A, B, C, ...), so
slow phases of the machine hit every contender alike.  Noise only ever slows
a run down, so the headline figure per contender is its best round; the
median is shown too.  Ratios are best against best.

The compiled core (issue 48)
----------------------------
Where the SDK's compiled core is built, ``ours`` runs on it and the pure
engine (``game_state_on(PureCore)``: the fallback, today's engine) is measured
beside it in the same run, with Hard's rollouts from mid-hand positions on
both.  Hard's worlds per CPU-second come from ``bench/hard_worlds.py`` in
child processes: this SDK compiled, this SDK pure (``ARENA_SDK_PURE=1``) and,
with ``--today-sdk DIR``, an older SDK (main's ``sdk/`` before the core).

The bars (median ratios): ours ``playout`` at least 15x the documented
OpenSpiel rate, the ``plain`` loop at least 3x, Hard's worlds per CPU-second
at least 10x today's.  The run ends with the cost of one ``clone()`` and of
one sampled world (``arena_sdk.sampling``) in µs.

Run: ``python bench/engine.py [--seconds 3] [--rounds 5] [--cpu N] [--clock cpu|wall] [--today-sdk DIR] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from arena_sdk.engine import core
from arena_sdk.engine.playout import play_random_game, play_random_hand
from arena_sdk.engine.pure import PureCore
from arena_sdk.engine.ruleset import Ruleset, resolve_ruleset
from arena_sdk.engine.state import Decision, GameState, game_state_on

#: The pure-Python engine (the fallback), measured beside the compiled one in the same process.
PureGameState = game_state_on(PureCore)

#: Plays some hands (usually one) starting from a fresh game; returns how many.
PlayHands = Callable[[int], int]

OPENSPIEL_VERSION = "2.0.2"
INSTALL_HINT = "pip install -e '.[bench]'"
#: An OpenSpiel spades hand: 52 deal outcomes, 4 bids, 52 plays.
OPENSPIEL_HAND_ACTIONS = 52 + 4 + 52
DESCRIPTION = "Random full Spades hands per second: our engine against OpenSpiel."
#: The bars this benchmark reports against (median ratio to OpenSpiel's documented loop).
BAR = 15.0
PLAIN_BAR = 3.0
#: Hard's worlds per CPU-second, compiled core against the pure one (issue 48's goal).
HARD_BAR = 10.0


@dataclass
class Contender:
    """One way of playing random hands, and its measured rounds."""

    key: str
    label: str
    play: PlayHands
    rates: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return max(self.rates)

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


# --------------------------------------------------------------------- ours


def ours_playout(rules: Ruleset, rng: random.Random, cls: type = GameState) -> PlayHands:
    """One hand per fresh game through :func:`play_random_hand`."""

    def play(seed: int) -> int:
        state = cls.new(rules, seed)
        play_random_hand(state, rng)
        return 1

    return play


def plain_random_hand(state: GameState, rng: random.Random) -> None:
    """Play the current hand the plain way: ``apply(rng.choice(legal_actions()))``."""
    hand = state.hand_number
    while state.decision is not None and state.hand_number == hand:
        state.apply(rng.choice(state.legal_actions()))


def ours_plain(rules: Ruleset, rng: random.Random, cls: type = GameState) -> PlayHands:
    """One hand per fresh game through :func:`plain_random_hand`."""

    def play(seed: int) -> int:
        state = cls.new(rules, seed)
        plain_random_hand(state, rng)
        return 1

    return play


def ours_games(rules: Ruleset, rng: random.Random) -> PlayHands:
    """Whole random games; returns the number of hands played."""

    def play(seed: int) -> int:
        state = GameState.new(rules, seed)
        play_random_game(state, rng)
        return len(state.hand_results)

    return play


def rollouts_mid_hand(rng: random.Random, compiled: bool) -> PlayHands:
    """Hard's rollouts (its bid-aware policy, 104 numbers of luck) from mid-hand positions.

    The positions: hand 1 of random pagat games after five tricks and a lead.
    ``compiled``: the core's ``rollout`` (C); else :func:`arena_sdk.bots.simulate.rollout`
    (pure Python).  Counted in rollouts, shown as "hands".
    """
    import itertools

    from arena_sdk.bots.simulate import Position, rollout

    starts = []
    for seed in range(50):
        state = GameState.new(resolve_ruleset("pagat"), f"mid-{seed}")
        while state.decision is not Decision.PLAY or len(state.tricks) < 5 or len(state.trick) != 1:
            state.apply(rng.choice(state.legal_actions()))
        starts.append((Position.of(state), [b if b is not None else 0 for b in state.bids]))
    luck = [rng.random() for _ in range(104)]
    fast = core.compiled

    def play(seed: int) -> int:
        start, bids = starts[seed % len(starts)]
        if compiled:
            fast.rollout(start.copy(), bids, luck)
        else:
            rollout(start.copy(), bids, itertools.cycle(luck).__next__)
        return 1

    return play


def check_ours(rules: Ruleset) -> None:
    """A fresh game played by either one-hand loop scores exactly one full hand."""
    for play_hand in (play_random_hand, plain_random_hand):
        for seed in range(20):
            state = GameState.new(rules, seed)
            hand = state.hand_number
            play_hand(state, random.Random(seed))
            plays = sum(1 for e in state.history if e.hand == hand and e.kind is Decision.PLAY)
            if len(state.hand_results) != 1 or plays != 13 * rules.players:
                raise AssertionError(
                    f"{rules.preset} seed {seed} ({play_hand.__name__}): "
                    f"{len(state.hand_results)} hands scored, {plays} plays"
                )


# --------------------------------------------------------------- openspiel


def load_openspiel() -> tuple[Any, str] | str:
    """``(spades game, version)``, or a message saying why OpenSpiel is unavailable."""
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError as exc:
        return (
            f"OpenSpiel is not installed ({exc}); only our figures are shown. "
            f"Install it with: {INSTALL_HINT}   (open_spiel=={OPENSPIEL_VERSION})"
        )
    try:
        version = metadata.version("open_spiel")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return pyspiel.load_game("spades"), version


def openspiel_parameters(game: Any) -> dict[str, Any]:
    """The game's parameters with their defaults filled in."""
    spec = dict(game.get_type().parameter_specification)
    spec.update(game.get_parameters())
    return spec


def openspiel_documented(game: Any, rng: random.Random) -> PlayHands:
    """One hand: ``chance_outcomes()`` at chance nodes, ``legal_actions()`` at players."""

    def play(_seed: int) -> int:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                action = rng.choice(state.chance_outcomes())[0]  # uniform: checked
            else:
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
        return 1

    return play


def openspiel_legal_actions(game: Any, rng: random.Random) -> PlayHands:
    """One hand, chance nodes driven with ``legal_actions()`` too."""

    def play(_seed: int) -> int:
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
        return 1

    return play


def check_openspiel(game: Any) -> None:
    """Deal outcomes are uniform, and a game to terminal is one hand of 108 actions."""
    rng = random.Random(0)
    for _ in range(20):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                probs = {p for _, p in outcomes}
                if max(probs) - min(probs) > 1e-12:
                    raise AssertionError(f"non-uniform chance outcomes: {sorted(probs)}")
                action = rng.choice(outcomes)[0]
            else:
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
        if len(state.history()) != OPENSPIEL_HAND_ACTIONS:
            raise AssertionError(f"an OpenSpiel spades game had {len(state.history())} actions")


# ------------------------------------------------------------------ timing


def pin_to_one_core(cpu: int | None) -> int | None:
    """Restrict this process to one core; returns it (None where unsupported)."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    chosen = allowed[0] if cpu is None else cpu
    if chosen not in allowed:
        raise SystemExit(f"--cpu {cpu}: this process may only use cores {allowed}")
    os.sched_setaffinity(0, {chosen})
    return chosen


#: What a round is timed by: this process's CPU time (``--clock cpu``, the default: on a shared,
#: loaded machine the wall clock also counts the time other processes held the core) or wall time.
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
_clock = CLOCKS["cpu"]


def run_for(play: PlayHands, seconds: float, first_seed: int) -> tuple[int, float]:
    """Play hands until ``seconds`` have passed on the chosen clock; returns (hands, elapsed seconds)."""
    clock = _clock
    hands = 0
    seed = first_seed
    start = clock()
    deadline = start + seconds
    while True:
        hands += play(seed)
        seed += 1
        now = clock()
        if now >= deadline:
            return hands, now - start


def measure(contenders: list[Contender], seconds: float, rounds: int, warmup: float) -> None:
    """Interleaved rounds: every contender once per round, rates appended in place."""
    for c in contenders:
        run_for(c.play, warmup, first_seed=10**9)
    slot = seconds / rounds
    for r in range(rounds):
        for c in contenders:
            hands, elapsed = run_for(c.play, slot, first_seed=r * 10**6)
            c.rates.append(hands / elapsed)


# ------------------------------------------------------------------ report


def build_contenders(seed: int, openspiel_game: Any | None) -> list[Contender]:
    """All contenders, each with its own generator."""
    pagat = resolve_ruleset("pagat")
    two = resolve_ruleset("two-player")
    check_ours(pagat)
    check_ours(two)
    tag = "compiled" if core.COMPILED else "pure"
    out = [
        Contender("ours_pagat_playout", f"ours  pagat  {tag:<8}  play_random_hand",
                  ours_playout(pagat, random.Random(seed))),
        Contender("ours_pagat_plain", f"ours  pagat  {tag:<8}  apply(choice(legal_actions()))",
                  ours_plain(pagat, random.Random(seed))),
    ]  # fmt: skip
    if core.COMPILED:
        out += [
            Contender("pure_pagat_playout", "ours  pagat  pure      play_random_hand",
                      ours_playout(pagat, random.Random(seed), PureGameState)),
            Contender("pure_pagat_plain", "ours  pagat  pure      apply(choice(legal_actions()))",
                      ours_plain(pagat, random.Random(seed), PureGameState)),
            Contender("rollouts_compiled", "Hard's rollouts from mid-hand, compiled",
                      rollouts_mid_hand(random.Random(seed), True)),
            Contender("rollouts_pure", "Hard's rollouts from mid-hand, pure",
                      rollouts_mid_hand(random.Random(seed), False)),
        ]  # fmt: skip
    if openspiel_game is not None:
        check_openspiel(openspiel_game)
        out += [
            Contender("openspiel_documented", "OpenSpiel spades  documented (chance_outcomes)",
                      openspiel_documented(openspiel_game, random.Random(seed))),
            Contender("openspiel_legal_actions", "OpenSpiel spades  legal_actions at chance",
                      openspiel_legal_actions(openspiel_game, random.Random(seed))),
        ]  # fmt: skip
    out += [
        Contender("ours_two_player_playout", f"ours  two-player {tag} play_random_hand",
                  ours_playout(two, random.Random(seed))),
        Contender("ours_two_player_plain", f"ours  two-player {tag} apply(choice(legal_actions()))",
                  ours_plain(two, random.Random(seed))),
        Contender("ours_pagat_games", "ours  pagat       whole games (info)",
                  ours_games(pagat, random.Random(seed))),
    ]  # fmt: skip
    return out


def ratios(by_key: dict[str, Contender], stat: str = "best") -> dict[str, float]:
    """Ours (pagat) against OpenSpiel, compiled against pure, by ``stat`` (what was measured)."""
    out: dict[str, float] = {}
    for ours in ("ours_pagat_playout", "ours_pagat_plain", "pure_pagat_playout", "pure_pagat_plain"):
        for theirs in ("openspiel_documented", "openspiel_legal_actions"):
            if theirs in by_key and ours in by_key:
                name = f"{ours.removeprefix('ours_pagat_').replace('_pagat_', '_')}/{theirs}"
                out[name] = getattr(by_key[ours], stat) / getattr(by_key[theirs], stat)
    for a, b, name in (("ours_pagat_playout", "pure_pagat_playout", "playout/pure"),
                       ("ours_pagat_plain", "pure_pagat_plain", "plain/pure"),
                       ("rollouts_compiled", "rollouts_pure", "rollouts/pure")):  # fmt: skip
        if a in by_key and b in by_key:
            out[name] = getattr(by_key[a], stat) / getattr(by_key[b], stat)
    return out


def report_json(
    contenders: list[Contender],
    args: argparse.Namespace,
    cpu: int | None,
    openspiel: str | None,
    openspiel_params: dict[str, Any] | None,
    missing: str | None,
) -> dict[str, Any]:
    """Everything measured, JSON-ready."""
    by_key = {c.key: c for c in contenders}
    rat = ratios(by_key)
    med = ratios(by_key, "median")
    headline = med.get("playout/openspiel_documented")
    plain = med.get("plain/openspiel_documented")
    return {
        "benchmark": "engine_random_hands_per_second",
        "unit": "hands/s",
        "hand": "deal/draw + bids + all plays + scoring; ours: one hand per fresh game",
        "seconds_per_contender": args.seconds,
        "clock": args.clock,
        "rounds": args.rounds,
        "cpu": cpu,
        "python": platform.python_version(),
        "open_spiel": openspiel,
        "open_spiel_parameters": openspiel_params,
        "open_spiel_missing": missing,
        "rates": {
            c.key: {"best": round(c.best, 1), "median": round(c.median, 1),
                    "rounds": [round(r, 1) for r in c.rates]}
            for c in contenders
        },  # fmt: skip
        "ratios": {k: round(v, 3) for k, v in rat.items()},
        "ratios_median": {k: round(v, 3) for k, v in ratios(by_key, "median").items()},
        "bar": BAR,
        "bar_met": None if headline is None else headline >= BAR,
        "plain_bar": PLAIN_BAR,
        "plain_bar_met": None if plain is None else plain >= PLAIN_BAR,
    }


def print_text(data: dict[str, Any], contenders: list[Contender]) -> None:
    """The human-readable table and ratios."""
    slot = data["seconds_per_contender"] / data["rounds"]
    print(
        f"Random full hands per second, one process, core {data['cpu']}, "
        f"{data['rounds']} interleaved rounds x {slot:.2f} s per contender ({data['clock']} time)"
    )
    print(f"python {data['python']}, open_spiel {data['open_spiel'] or 'not installed'}")
    if data["open_spiel_parameters"] is not None:
        print(f"OpenSpiel spades parameters: {data['open_spiel_parameters']}")
    print()
    print(f"  {'contender':<50} {'best':>9} {'median':>9}  hands/s")
    for c in contenders:
        print(f"  {c.label:<50} {c.best:>9,.0f} {c.median:>9,.0f}")
    print()
    if data["open_spiel_missing"]:
        print(data["open_spiel_missing"])
    else:
        print("Ratios, pagat against OpenSpiel spades:      best/best  median/median")
        for name, value in data["ratios"].items():
            print(f"  {name:<45} {value:6.2f}x {data['ratios_median'][name]:9.2f}x")
        verdict = "met" if data["bar_met"] else "NOT met"
        print(f"Bar: ours (play_random_hand) >= {BAR:.1f}x OpenSpiel documented (median): {verdict}")
        for name in ("playout/pure", "plain/pure", "rollouts/pure"):
            if name in data["ratios"]:
                print(f"  compiled {name:<40} {data['ratios'][name]:6.2f}x {data['ratios_median'][name]:9.2f}x")
        verdict = "met" if data["plain_bar_met"] else "NOT met"
        print(f"Bar: ours (plain loop) >= {PLAIN_BAR:.1f}x OpenSpiel documented (median): {verdict}")
    hard = data.get("hard_worlds")
    if hard:
        line = ", ".join(f"{k} {hard[k]['worlds_per_cpu_s']:,.0f}" for k in ("compiled", "pure", "today") if k in hard)
        print(f"Hard's worlds per CPU-second: {line}; compiled/{hard['ratio_against']} {hard['ratio']:.2f}x "
              f"(bar {HARD_BAR:.0f}x: {'met' if hard['bar_met'] else 'NOT met'})")
    costs = data.get("search_costs_us")
    if costs:
        print("Search costs (µs, best of 3): " + ", ".join(f"{k} {v:,.1f}" for k, v in costs.items()))
    print()
    print(json.dumps(data, separators=(",", ":")))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="total timed seconds per contender (default 3)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="interleaved rounds the seconds are split into (default 5)")
    parser.add_argument("--warmup", type=float, default=0.2,
                        help="untimed seconds per contender before measuring (default 0.2)")
    parser.add_argument("--cpu", type=int, default=None,
                        help="core to pin to (default: the first allowed core)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random players")
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    parser.add_argument("--no-hard", action="store_true", help="skip Hard's worlds per CPU-second")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="time rounds by this process's CPU time (default) or by wall time")
    parser.add_argument("--today-sdk", default=None,
                        help="Hard's baseline: the SDK directory of an older checkout (e.g. main's sdk/), run pure")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1:
        parser.error("--seconds must be > 0 and --rounds >= 1")
    return args


def search_costs(seed: int) -> dict[str, float]:
    """Microseconds (best of 3 runs) for what a search bot pays per world.

    ``clone``: one ``GameState.clone()`` mid-hand.  ``sampler``: building a
    :class:`~arena_sdk.sampling.DealSampler` from a seat's view;
    ``first_world``: its first sampled state (a replay of the hand);
    ``world``: each later sampled state.  Over every play decision of hand 1
    of ten random pagat games.
    """
    from arena_sdk.engine.playout import random_action
    from arena_sdk.sampling import DealSampler

    rng = random.Random(seed)
    views = []
    for game in range(10):
        state = GameState.new(resolve_ruleset("pagat"), game)
        while state.decision is not None and state.hand_number == 1:
            if state.decision is Decision.PLAY:
                views.append((state.view(state.to_move), state.clone()))
            state.apply(random_action(state, rng))

    def best(fn: Callable[[], int]) -> float:
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            count = fn()
            runs.append((time.perf_counter() - started) / count * 1e6)
        return min(runs)

    mid = views[len(views) // 2][1]
    out = {"clone": best(lambda: sum(1 for _ in range(20000) if mid.clone()))}
    out["sampler"] = best(lambda: sum(1 for v, _ in views if DealSampler(v)))
    samplers = [DealSampler(v) for v, _ in views]
    out["first_world"] = best(lambda: sum(1 for s in samplers if s._build(*_fresh(s, rng), rng)))
    for s in samplers:
        s.sample(rng)
    out["world"] = best(lambda: sum(1 for s in samplers for _ in range(10) if s.sample(rng)))
    return {k: round(v, 1) for k, v in out.items()}


def hard_worlds_both(seed: int, today_sdk: str | None = None) -> dict[str, Any]:
    """Hard's worlds per CPU-second (``bench/hard_worlds.py``), each in a child process, and the ratios.

    ``compiled``: this SDK; ``pure``: this SDK with ``ARENA_SDK_PURE=1``;
    ``today``: another SDK (``--today-sdk``, e.g. main's checkout before the
    compiled core) when given.  The same decisions and worlds in each.
    """
    import subprocess

    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hard_worlds.py")

    def run(extra_env: dict[str, str]) -> dict[str, Any]:
        env = {**os.environ, **extra_env}
        done = subprocess.run([sys.executable, script, "--seed", str(seed)], capture_output=True, text=True,
                              env=env, check=True)  # fmt: skip
        return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]

    out: dict[str, Any] = {"compiled": run({}), "pure": run({core.PURE_ENV: "1"})}
    if today_sdk:
        out["today"] = run({core.PURE_ENV: "1", "PYTHONPATH": today_sdk})
    base = out.get("today", out["pure"])
    out["ratio"] = round(out["compiled"]["worlds_per_cpu_s"] / base["worlds_per_cpu_s"], 2)
    out["ratio_against"] = "today" if "today" in out else "pure"
    out["bar"] = HARD_BAR
    out["bar_met"] = out["ratio"] >= HARD_BAR
    return out


def _fresh(sampler: Any, rng: random.Random) -> tuple[Any, Any]:
    alloc = sampler.sample_allocation(rng)
    return sampler._hands(alloc), alloc


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    global _clock
    _clock = CLOCKS[args.clock]
    cpu = pin_to_one_core(args.cpu)
    loaded = load_openspiel()
    if isinstance(loaded, str):
        game, version, params, missing = None, None, None, loaded
        if args.json:
            print(missing, file=sys.stderr)
    else:
        game, version = loaded
        params, missing = openspiel_parameters(game), None
    contenders = build_contenders(args.seed, game)
    measure(contenders, args.seconds, args.rounds, args.warmup)
    data = report_json(contenders, args, cpu, version, params, missing)
    data["search_costs_us"] = search_costs(args.seed)
    data["core"] = core.describe()
    if not args.no_hard:
        data["hard_worlds"] = hard_worlds_both(args.seed, args.today_sdk)
    if args.json:
        print(json.dumps(data, separators=(",", ":")))
    else:
        print_text(data, contenders)
    return 0


if __name__ == "__main__":
    sys.exit(main())
