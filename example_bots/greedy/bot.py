"""A greedy example bot: bids its high cards, always tries to win the trick.

Stronger than random, weaker than the heuristic bot: it never ducks, so it
collects bags, and never bids nil.  A third opponent for the demo tournament.
"""

from __future__ import annotations

from arena_sdk import Bot, Card, Suit, View, run


class GreedyBot(Bot):
    name = "greedy"
    version = "1"

    def bid(self, view: View) -> int:
        tricks = sum(1 for c in view.hand if c.rank >= Card.CK.rank or (c.suit == Suit.S and c.rank >= Card.CT.rank))
        return max(1, min(13, tricks))

    def play(self, view: View) -> Card:
        legal = view.legal_cards()
        best = view.winning_play()
        if best is None:
            return max(legal, key=lambda c: (c.suit != Suit.S, c.rank))  # lead the highest non-spade
        top = best[1]
        winners = [c for c in legal if (c.suit == top.suit and c > top) or (c.suit == Suit.S and top.suit != Suit.S)]
        if winners:
            return min(winners)  # win as cheaply as possible
        return min(legal, key=lambda c: c.rank)  # cannot win: throw the lowest

    def draw(self, view: View) -> bool:
        card = view.offered_card
        assert card is not None
        return card.rank >= Card.CT.rank or card.suit == Suit.S


if __name__ == "__main__":
    run(GreedyBot())
