"""Benchmark bot: uniformly random legal decisions drawn from ``self.rng``.

Bids are a random legal bid, plays a random legal card, blind nil and the
two-player draw a coin flip; the exchange returns a random 0-3 of its cards.
Started by bench/referee.py with ARENA_ADDRESS and ARENA_TOKEN in the environment.
"""

from __future__ import annotations

import _hooks

from arena_sdk import Bot, Card, View, run


class RandomBot(Bot):
    name = "bench-random"
    version = "1"

    def bid(self, view: View) -> int:
        return self.rng.choice(view.legal)

    def play(self, view: View) -> Card:
        return self.rng.choice(view.legal)

    def blind_nil(self, view: View) -> bool:
        return self.rng.random() < 0.5

    def draw(self, view: View) -> bool:
        return self.rng.random() < 0.5

    def exchange(self, view: View) -> list[Card]:
        return self.rng.sample(view.hand, self.rng.randint(0, 3))


if __name__ == "__main__":
    _hooks.install()
    run(RandomBot(), [])
