#!/usr/bin/env python
"""The compiled core against the pure engine over many hands (issue 48): every state compared.

Twin games, one on each core, from the same seeds and twin generators, in
every preset with a rotation of options (nil and blind nil values and modes,
failed-nil tricks, the three spade-lead rules, bag thresholds and penalties
including none, low targets and floors so that games end every way, the
two-player draw and exchange).  Hands are played with ``play_random_hand``
and compared attribute by attribute after every hand (history, tricks, bids,
scores, bags, the next hand's set-up, the result); one hand in 64 (the 64th, 128th, ... of a game) is played
with the plain ``apply(rng.choice(legal_actions()))`` loop and compared after
every action, and before it a Hard rollout from the position is compared too.
A difference stops the run and prints where.  ``tests/engine/test_core_equivalence.py``
runs the same comparison, shorter, in the suite.

Run: ``python bench/core_equivalence.py --hands 1000000 [--json] [--progress 50000]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from pathlib import Path

from arena_sdk.bots.simulate import Position, rollout
from arena_sdk.engine import Decision, core, resolve_ruleset
from arena_sdk.engine.playout import play_random_hand

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine"))
from core_support import CompiledGameState, PureGameState, assert_same  # noqa: E402

#: The rotation of rulesets: every preset, then option sets that reach every scoring branch.
RULESETS = [
    ("pagat", {"max_hands": 70}), ("wikipedia", {}), ("cards4", {}), ("two-player", {}),
    ("pagat", {"failed_nil_tricks": "contract", "spade_lead": "always", "bag_threshold": 3}),
    ("wikipedia", {"target": 150, "lose_floor": -50, "bag_penalty": 0}),
    ("cards4", {"blind_nil_min_deficit": 30, "nil_value": 50, "bag_threshold": 1, "bag_penalty": 50}),
    ("two-player", {"target": 200, "spade_lead": "trumped", "blind_nil_value": 0}),
    ("two-player", {"blind_nil": "off", "bag_threshold": 2}),
    ("pagat", {"blind_nil": "any", "max_hands": 3}),
]  # fmt: skip


def play_pair(number: int, hands_left: int, checked: dict[str, int]) -> int:
    preset, options = RULESETS[number % len(RULESETS)]
    rules = resolve_ruleset(preset, options)
    seed = f"eq-{number}"
    pure, fast = PureGameState.new(rules, seed), CompiledGameState.new(rules, seed)
    rp, rf = random.Random(number), random.Random(number)
    played = 0
    while not pure.is_over and played < hands_left:
        where = f"game {number} ({preset} {options}) hand {pure.hand_number}"
        if pure.hand_number % 64 == 0:
            hand = pure.hand_number
            while pure.decision is not None and pure.hand_number == hand:
                if pure.decision is Decision.PLAY and len(pure.tricks) == 6 and not pure.trick:
                    luck = [rp.random() for _ in range(104)]
                    for _ in range(104):
                        rf.random()
                    bids = [b if b is not None else 0 for b in pure.bids]
                    want = rollout(Position.of(pure), bids, itertools.cycle(luck).__next__)
                    assert core.compiled.rollout(Position.of(fast), bids, luck) == want, where
                    checked["rollouts"] += 1
                pure.apply(rp.choice(pure.legal_actions()))
                fast.apply(rf.choice(fast.legal_actions()))
                assert_same(pure, fast, where)
                checked["states"] += 1
        else:
            play_random_hand(pure, rp)
            play_random_hand(fast, rf)
            assert_same(pure, fast, where)
            checked["states"] += 1
        played += 1
    assert pure.result == fast.result
    return played


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1_000_000, help="hands to compare (default 1,000,000)")
    parser.add_argument("--progress", type=int, default=100_000, help="print a line every so many hands")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    if CompiledGameState is None:
        print(f"no compiled core to compare: {core.REASON}", file=sys.stderr)
        return 2
    started, cpu = time.monotonic(), time.process_time()
    checked = {"hands": 0, "games": 0, "states": 0, "rollouts": 0}
    next_line = args.progress
    while checked["hands"] < args.hands:
        checked["hands"] += play_pair(checked["games"], args.hands - checked["hands"], checked)
        checked["games"] += 1
        if checked["hands"] >= next_line and not args.json:
            print(f"{checked['hands']:,} hands, {checked['games']:,} games, {checked['states']:,} states equal", flush=True)
            next_line += args.progress
    result = {**checked, "equal": True, "wall_s": round(time.monotonic() - started, 1),
              "cpu_s": round(time.process_time() - cpu, 1)}  # fmt: skip
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
