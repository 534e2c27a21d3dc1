"""Easy: simple rules with noise.

Bids its aces, kings and spades beyond three (rounded, with a little noise);
follows with its lowest card unless it can win the trick with its highest,
leads high cards first; one decision in five is a random legal one, and
one blind-nil question in ten is answered yes.
Clearly better than random, clearly worse than Medium.
"""

from __future__ import annotations

from arena_sdk.bot import Bot
from arena_sdk.engine import Card, Suit
from arena_sdk.sampling import quick_tricks
from arena_sdk.view import View

#: Share of play decisions made at random.
NOISE = 0.2
#: Chance of a (reckless) blind nil where one is allowed.
BLIND_NIL_RATE = 0.1


class EasyBot(Bot):
    """Rules with noise; see the module docstring."""

    name = "builtin-easy"
    version = "1"

    def bid(self, view: View) -> int:
        estimate = quick_tricks([int(c) for c in view.hand], view.players)
        return max(1, min(13, round(estimate + self.rng.uniform(-0.7, 0.7))))

    def blind_nil(self, view: View) -> bool:
        return self.rng.random() < BLIND_NIL_RATE

    def play(self, view: View) -> Card:
        legal = view.legal_cards()
        if len(legal) == 1 or self.rng.random() < NOISE:
            return self.rng.choice(legal)
        win = view.winning_play()
        if win is None:  # lead: the highest side card, else the highest card
            side = [c for c in legal if c.suit != Suit.S]
            return max(side or legal, key=lambda c: c.rank)
        top = win[1]
        winners = [c for c in legal if (c.suit == top.suit and c > top) or (c.suit == Suit.S and top.suit != Suit.S)]
        partner_winning = view.partner is not None and win[0] == view.partner
        if winners and not partner_winning:
            return max(winners, key=lambda c: c.rank) if winners[0].suit == top.suit else min(winners)
        return min(legal, key=lambda c: (c.suit == Suit.S, c.rank))
