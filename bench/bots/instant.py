"""Benchmark bot: answers at once (bid 3, the first legal card; SDK defaults otherwise).

Started by bench/referee.py with ARENA_ADDRESS and ARENA_TOKEN in the environment.
"""

from __future__ import annotations

import _hooks

from arena_sdk import Bot, Card, View, run


class InstantBot(Bot):
    name = "bench-instant"
    version = "1"

    def bid(self, view: View) -> int:
        return 3

    def play(self, view: View) -> Card:
        return view.legal[0]


if __name__ == "__main__":
    _hooks.install()
    run(InstantBot(), [])
