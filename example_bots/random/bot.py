"""The random example bot: random legal decisions, drawn from ``self.rng``.

What it does:

- bid: nil one time in twenty, otherwise 1, 2, 3 or 4 with equal chance
  (uniform over 0-13 would be absurd: a random bid of 11 sets the team every time);
- play: a uniformly random legal card;
- blind nil: never;
- two-player draw: keeps the offered card half of the time;
- two-player blind-nil exchange: returns a random 0-3 of its cards (only
  reached if a ruleset forces blind nil on it; it never bids it itself).

``self.rng`` is reseeded by the SDK at the start of every game from the
referee's per-game seed, so the bot plays a replayed game the same way.

Run it against a referee with ``python example_bots/random/bot.py`` (the arena
sets ``ARENA_ADDRESS`` and ``ARENA_TOKEN``), or locally with
``python -m arena_sdk.testing example_bots/random/bot.py:RandomBot``.
"""

from __future__ import annotations

from arena_sdk import Bot, Card, View, run


class RandomBot(Bot):
    """Random legal decisions; bids 1-4 (nil one time in twenty)."""

    name = "random"
    version = "1"

    def bid(self, view: View) -> int:
        if self.rng.random() < 0.05:
            return 0
        return self.rng.randint(1, 4)

    def play(self, view: View) -> Card:
        return self.rng.choice(view.legal_cards())

    def blind_nil(self, view: View) -> bool:
        return False

    def draw(self, view: View) -> bool:
        return self.rng.random() < 0.5

    def exchange(self, view: View) -> list[Card]:
        return self.rng.sample(view.hand, self.rng.randint(0, 3))


if __name__ == "__main__":
    run(RandomBot())
