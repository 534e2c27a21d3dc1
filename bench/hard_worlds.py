#!/usr/bin/env python
"""Hard's search speed: sampled worlds per CPU-second over the play decisions of real games.

The views are Hard's own play decisions with a choice (hand 1 of ``--games``
pagat games against Medium, Hard searching 20 worlds); each is then searched
again by a fresh ``HardBot(worlds=--worlds)`` (the exact endgame of the last
two tricks included, as Hard plays it), and the process's CPU time is
divided among the worlds searched.  It uses only the SDK's public bots, so it
measures any SDK: this one (compiled core), ``ARENA_SDK_PURE=1`` (its pure
core), or an older checkout's (``PYTHONPATH=/path/to/old/sdk``: today's Hard).
``bench/engine.py`` runs it all three ways and prints the ratios.

Run: ``python bench/hard_worlds.py [--seed 1] [--worlds 200] [--games 3]`` (one JSON line).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from arena_sdk.bots import HardBot, MediumBot
from arena_sdk.testing import play_game


def measure(seed: int, worlds: int, games: int) -> dict[str, Any]:
    views: list[Any] = []

    class Recording(HardBot):
        def play(self, view: Any) -> Any:
            if len(view.legal_cards()) > 1:
                views.append(view)
            return super().play(view)

    for game in range(games):
        play_game([lambda: Recording(worlds=20), MediumBot], "pagat", seed + game, max_hands=1,
                  move_ms=600_000, bank_ms=6_000_000)  # fmt: skip
    bot = HardBot(worlds=worlds)
    bot.game_seed = seed
    started = time.process_time()
    cards = []
    for view in views:
        view.received_at = time.monotonic()
        cards.append(int(bot.play(view)))
    cpu = time.process_time() - started
    searched = sum(bot.searched)
    try:
        from arena_sdk.engine import core

        engine = core.REASON
    except ImportError:
        engine = "an SDK without arena_sdk.engine.core (before the compiled core)"
    return {"engine": engine, "decisions": len(views), "worlds": searched, "cpu_s": round(cpu, 3),
            "worlds_per_cpu_s": round(searched / cpu, 1), "cards": cards}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=200)
    parser.add_argument("--games", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(measure(args.seed, args.worlds, args.games)))


if __name__ == "__main__":
    main()
