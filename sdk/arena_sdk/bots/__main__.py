"""``python -m arena_sdk.bots TIER``: run a built-in bot against the referee.

It connects like any SDK bot, through ``ARENA_ADDRESS`` and ``ARENA_TOKEN``.
``--budget SECONDS`` (or the environment variable ``ARENA_HARD_BUDGET_S``)
sets Hard's per-move budget; ``--worlds N`` (or ``ARENA_HARD_WORLDS``) its
budget in sampled worlds per decision instead (deterministic given the
game's seed; half the move time still caps it).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from arena_sdk.bots import TIERS, HardBot, make_bot
from arena_sdk.client import run


BUDGET_ENV = "ARENA_HARD_BUDGET_S"
WORLDS_ENV = "ARENA_HARD_WORLDS"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m arena_sdk.bots", description=__doc__.splitlines()[0], allow_abbrev=False
    )
    parser.add_argument("tier", help=f"one of: {', '.join(TIERS)}")
    parser.add_argument("--budget", type=float, default=None, help="Hard: seconds per move")
    parser.add_argument("--worlds", type=int, default=None, help="Hard: sampled worlds per move")
    parser.add_argument("--address", help="referee address (env ARENA_ADDRESS)")
    parser.add_argument("--token", help="this seat's token (env ARENA_TOKEN or ARENA_TOKEN_FILE)")
    # Strict: a built-in bot takes no arguments of its own, so a typo
    # (``--budgte 0.1``) is an error, not an option silently ignored.
    args = parser.parse_args(argv)
    rest = [f"--{name}={value}" for name in ("address", "token") if (value := getattr(args, name)) is not None]
    try:
        bot = make_bot(args.tier)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.budget is None and isinstance(bot, HardBot) and os.environ.get(BUDGET_ENV):
        try:
            args.budget = float(os.environ[BUDGET_ENV])
        except ValueError:
            print(f"error: {BUDGET_ENV} must be seconds, got {os.environ[BUDGET_ENV]!r}", file=sys.stderr)
            return 2
    if args.budget is not None:
        if not isinstance(bot, HardBot) or args.budget <= 0:
            print("error: --budget takes seconds > 0 and applies to hard only", file=sys.stderr)
            return 2
        bot.budget_s = args.budget
    if args.worlds is None and isinstance(bot, HardBot) and os.environ.get(WORLDS_ENV):
        args.worlds = int(os.environ[WORLDS_ENV]) if os.environ[WORLDS_ENV].isdigit() else 0
    if args.worlds is not None:
        if not isinstance(bot, HardBot) or args.worlds < 1:
            print("error: --worlds (or ARENA_HARD_WORLDS) takes a whole number >= 1 and applies to hard only", file=sys.stderr)
            return 2
        bot.worlds = args.worlds
        if args.budget is None:
            bot.budget_s = None  # worlds alone: deterministic, capped by half the move time
    run(bot, rest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
