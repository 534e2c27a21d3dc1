#!/usr/bin/env python
"""Learning environments' speed: steps per second, against the bare engine in the same run.

Contenders, each playing uniformly random legal decisions of full pagat games
(or ``--preset``), one core, one process:

- ``engine`` (the baseline): ``state.apply(rng.choice(state.legal_actions()))``,
  the plain loop of the public API, no observation at all;
- ``aec``: ``SpadesAECEnv``, PettingZoo's loop (``agent_iter``, ``last()``,
  an action drawn from the observation's mask, ``step``): one step is one
  decision, with its 750-float observation and mask built from the seat's view;
- ``seat-easy``: ``SpadesSeatEnv`` with the three other seats played by the
  built-in Easy bot through the SDK's driver; one step is one learner
  decision (the bots' decisions in between are counted beside it);
- ``observe``: building one observation and mask alone (``Table.observe``).

Timing: CPU time of this process (``time.process_time``), so a shared,
loaded machine reports what one idle core would do; rounds interleave the
contenders (A, B, C, A, B, C...) and the best round counts (noise only slows
a round down), the median is shown too.  Ratios are against ``engine``.

The compiled core: the environments drive the engine through its public API
(``GameState.apply``, ``GameState.view``), so when the SDK was built with its
compiled core they use it with no change; the header says which engine ran.

Run: ``python bench/envs.py [--seconds 20] [--rounds 5] [--preset pagat] [--json]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from arena_sdk.engine import GameState, resolve_ruleset  # noqa: E402
from arena_sdk.envs import SpadesAECEnv, SpadesSeatEnv  # noqa: E402
from arena_sdk.envs.table import Table  # noqa: E402

#: A contender plays for a while and returns (its steps, extra decisions made by bots).
Contender = Callable[[float], tuple[int, int]]


def engine_loop(preset: str, seed: int) -> Contender:
    rules = resolve_ruleset(preset)
    rng = random.Random(seed)
    games = iter(range(seed, 10**9))

    def run(seconds: float) -> tuple[int, int]:
        steps, end = 0, time.process_time() + seconds
        state = GameState.new(rules, next(games))
        while time.process_time() < end:
            for _ in range(200):
                if state.is_over:
                    state = GameState.new(rules, next(games))
                state.apply(rng.choice(state.legal_actions()))
                steps += 1
        return steps, 0

    return run


def _sample(mask: np.ndarray, rng: random.Random) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.randrange(len(legal))])


def aec_loop(preset: str, seed: int) -> Contender:
    env = SpadesAECEnv(preset)
    env.reset(seed=seed)
    rng = random.Random(seed)

    def run(seconds: float) -> tuple[int, int]:
        steps, end = 0, time.process_time() + seconds
        while time.process_time() < end:
            for _ in range(200):
                if not env.agents:
                    env.reset()
                obs, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                env.step(_sample(obs["action_mask"], rng))
                steps += 1
        return steps, 0

    return run


def seat_loop(preset: str, seed: int) -> Contender:
    env = SpadesSeatEnv(preset, others="easy")
    obs, _ = env.reset(seed=seed)
    rng = random.Random(seed)
    state: dict[str, object] = {"obs": obs}

    def run(seconds: float) -> tuple[int, int]:
        steps, end = 0, time.process_time() + seconds
        before = _bot_decisions(env)
        while time.process_time() < end:
            for _ in range(50):
                obs, _, terminated, _, _ = env.step(_sample(state["obs"]["action_mask"], rng))  # type: ignore[index]
                steps += 1
                if terminated:
                    obs, _ = env.reset()
                state["obs"] = obs
        return steps, _bot_decisions(env) - before

    return run


def _bot_decisions(env: SpadesSeatEnv) -> int:
    return sum(seat.request_id for seat in env.bots.values())


def observe_loop(preset: str, seed: int) -> Contender:
    rules = resolve_ruleset(preset)
    table = Table(rules)
    rng = random.Random(seed)
    # Snapshots of one random game, so every decision point of a game is observed in turn.
    snapshots: list[GameState] = []
    table.reset(seed)
    while not table.over:
        snapshots.append(table.state.clone())  # type: ignore[union-attr]
        table.step(_sample(table.observe(table.to_move)["action_mask"], rng))  # type: ignore[arg-type]

    def run(seconds: float) -> tuple[int, int]:
        steps, end = 0, time.process_time() + seconds
        while time.process_time() < end:
            for state in snapshots:
                table.state = state
                table.observe(state.to_move)  # type: ignore[arg-type]
                steps += 1
        return steps, 0

    return run


def engine_description() -> str:
    """Which engine ran: the pure-Python one, or compiled modules found beside it."""
    engine = importlib.import_module("arena_sdk.engine")
    folder = Path(engine.__file__).parent
    compiled = sorted(p.name for p in folder.iterdir() if p.suffix in (".so", ".pyd"))
    return "compiled core: " + ", ".join(compiled) if compiled else "pure-Python engine (no compiled core built)"


def measure(contenders: dict[str, Contender], seconds: float, rounds: int) -> dict[str, dict[str, float]]:
    for run in contenders.values():
        run(min(0.5, seconds / 4))  # warm up
    rates: dict[str, list[float]] = {name: [] for name in contenders}
    extra: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            started = time.process_time()
            steps, others = run(seconds / rounds)
            spent = time.process_time() - started
            rates[name].append(steps / spent)
            extra[name].append(others / spent)
    return {
        name: {
            "best": max(rates[name]),
            "median": statistics.median(rates[name]),
            "bot_decisions_per_s": statistics.median(extra[name]),
        }
        for name in contenders
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU seconds per contender in all")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--preset", default="pagat")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    contenders = {
        "engine": engine_loop(args.preset, args.seed),
        "aec": aec_loop(args.preset, args.seed),
        "seat-easy": seat_loop(args.preset, args.seed),
        "observe": observe_loop(args.preset, args.seed),
    }
    figures = measure(contenders, args.seconds, args.rounds)
    base = figures["engine"]
    for f in figures.values():
        f["ratio_best"] = f["best"] / base["best"]
        f["ratio_median"] = f["median"] / base["median"]
    data = {
        "preset": args.preset,
        "engine": engine_description(),
        "load": os.getloadavg()[0],
        "contenders": figures,
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"{args.preset}: {data['engine']}; load average {data['load']:.1f}; steps per CPU second")
    for name, f in figures.items():
        bots = f"  (+{f['bot_decisions_per_s']:,.0f} bot decisions/s)" if f["bot_decisions_per_s"] else ""
        print(
            f"  {name:<10} best {f['best']:>9,.0f}  median {f['median']:>9,.0f}  "
            f"x{f['ratio_best']:.3f} best, x{f['ratio_median']:.3f} median of engine{bots}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
