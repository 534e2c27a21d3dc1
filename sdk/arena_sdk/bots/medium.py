"""Medium: a strong rule bot (the ``heuristic`` example, improved).

Bidding
    Counts the tricks the hand is likely to take: aces, kings with a guard,
    queens in long suits, spade honours, spade length beyond three, and ruffs
    in short side suits for spades it can spare.  Bids nil on a weak hand
    unless its partner already bid nil.  A bag budget: with the team's bags
    close to the threshold it shades its bid up (fewer overtricks); far
    behind near the end it bids what it needs to catch up.

Play, by what the hand needs
    - *Nil bidder*: plays the highest card that still loses the trick.
    - *Partner bid nil*: covers (beats the partner's card, plays high before it).
    - *Contract not made yet*: leads sure winners, else low from a short side
      suit; second hand low, third hand high; wins cheaply when last.
    - *Contract safe*: ducks to avoid bags.
    - An opponent's nil: keeps the nil bidder winning and plays low in front of it.
    Card counting (cards unseen) and the voids each seat has shown drive all of it.
"""

from __future__ import annotations

from collections.abc import Iterable

from arena_sdk.bot import Bot
from arena_sdk.engine import Card, Suit
from arena_sdk.view import View

SIDE_SUITS = (Suit.C, Suit.D, Suit.H)
ACE, KING, QUEEN, JACK, TEN, NINE = 12, 11, 10, 9, 8, 7


def beats(card: Card, top: Card) -> bool:
    """Does ``card`` beat ``top``, the card winning the trick so far?"""
    if card.suit == top.suit:
        return card > top
    return card.suit == Suit.S


def by_suit(cards: Iterable[Card]) -> dict[Suit, list[int]]:
    """Ranks held per suit, highest first."""
    out: dict[Suit, list[int]] = {s: [] for s in Suit}
    for c in cards:
        out[c.suit].append(c.rank)
    for ranks in out.values():
        ranks.sort(reverse=True)
    return out


def estimate_tricks(hand: Iterable[Card], players: int = 4) -> float:
    """How many tricks a hand is likely to take on its own."""
    suits = by_suit(hand)
    two = players == 2
    total = 0.0
    for suit in SIDE_SUITS:
        ranks = suits[suit]
        n = len(ranks)
        if ACE in ranks:
            total += 1.0 if n <= 5 else 0.8
        if KING in ranks:
            if n >= 2:
                total += 0.9 if ACE in ranks else 0.7
            else:
                total += 0.6 if two else 0.25
            if n >= 7:
                total -= 0.3
        if QUEEN in ranks:
            if n >= 3:
                total += 0.5 if (ACE in ranks or KING in ranks) else 0.3
            elif two and n >= 2:
                total += 0.3
        if two and JACK in ranks and n >= 3:
            total += 0.2
    spades = suits[Suit.S]
    ns = len(spades)
    honours = 0.0
    counted = 0
    for i, rank in enumerate(spades):  # highest first
        value = 0.0
        if rank == ACE:
            value = 1.0
        elif rank == KING:
            value = 1.0 if ns >= 2 else 0.5
        elif rank == QUEEN:
            value = 1.0 if ns >= 3 or i < 2 and spades[0] >= KING else 0.4
        elif rank == JACK and ns >= 4:
            value = 0.6
        elif two and rank >= NINE and ns >= 3:
            value = 0.5
        if value:
            honours += value
            counted += 1
    total += honours
    low = ns - counted
    length = min(max(0, ns - 3), low)
    total += 0.9 * length
    spare = low - length
    for suit in SIDE_SUITS:
        n = len(suits[suit])
        if spare <= 0:
            break
        if n == 0:
            use = min(spare, 2)
            total += 0.8 * use
            spare -= use
        elif n == 1:
            total += 0.6
            spare -= 1
        elif n == 2 and spare >= 2:
            total += 0.3
            spare -= 1
    return total


def nil_hand(hand: Iterable[Card]) -> bool:
    """A hand weak and low enough to bid nil."""
    suits = by_suit(hand)
    spades = suits[Suit.S]
    if len(spades) > 3 or (spades and spades[0] > (NINE if len(spades) <= 2 else 5)):
        return False
    for suit in SIDE_SUITS:
        ranks = suits[suit]
        if not ranks:
            continue
        if ranks[0] >= KING:
            return False
        if ranks[-1] > 4:  # no card of six or lower in this suit
            return False
        if ranks[0] == QUEEN and len(ranks) < 4:
            return False
        if len(ranks) >= 4 and ranks[-2] > 6:  # a long suit needs two low cards
            return False
    return True


class Facts:
    """What the bot works out about one play decision."""

    def __init__(self, view: View) -> None:
        self.view = view
        self.n = view.players
        self.me = view.seat
        self.partner = view.partner
        self.legal = view.legal_cards()
        self.hand = view.hand
        self.trick = view.current_trick
        self.win = view.winning_play()
        self.led = view.led_suit
        self.unseen = view.unseen_cards()
        self.remaining = 13 - len(view.tricks)
        # Seats still to play to this trick after me.
        self.after = [(self.me + k) % self.n for k in range(1, self.n - len(self.trick))]
        self.voids: dict[int, set[Suit]] = {s: set() for s in range(self.n)}
        for t in view.tricks:
            self._note_voids([((t.leader + i) % self.n, c) for i, c in enumerate(t.cards)])
        self._note_voids(self.trick)
        self.suits = by_suit(self.hand)

    def _note_voids(self, plays: list[tuple[int, Card]]) -> None:
        if not plays:
            return
        led = plays[0][1].suit
        for seat, card in plays[1:]:
            if card.suit != led:
                self.voids[seat].add(led)

    # -------------------------------------------------------- card knowledge

    def higher_unseen(self, card: Card) -> int:
        """Unseen cards of ``card``'s suit above it."""
        return sum(1 for c in self.unseen if c.suit == card.suit and c > card)

    def lower_unseen(self, card: Card) -> int:
        return sum(1 for c in self.unseen if c.suit == card.suit and c < card)

    def is_boss(self, card: Card) -> bool:
        return self.higher_unseen(card) == 0

    def beats_now(self, card: Card) -> bool:
        return self.win is None or beats(card, self.win[1])

    def may_beat(self, seat: int, card: Card, led: Suit) -> bool:
        """Could ``seat`` (playing later) beat ``card`` on a trick led in ``led``?"""
        voids = self.voids[seat]
        spades_out = any(c.suit == Suit.S and (card.suit != Suit.S or c > card) for c in self.unseen)
        if card.suit == Suit.S:
            if led != Suit.S and led not in voids:
                return False  # it must follow suit (as far as we know it can)
            return spades_out and Suit.S not in voids
        if card.suit != led:
            return False  # a discard never wins
        if led not in voids and self.higher_unseen(card):
            return True
        return led in voids and Suit.S not in voids and spades_out

    def safe_win(self, card: Card, ignore: Iterable[int] = ()) -> bool:
        """Would ``card`` win the trick whatever the seats after me (but ``ignore``) play?"""
        if not self.beats_now(card):
            return False
        led = self.led if self.led is not None else card.suit
        skip = set(ignore)
        return not any(self.may_beat(s, card, led) for s in self.after if s not in skip)

    # -------------------------------------------------------- score facts

    def counted(self, team: int) -> int:
        """Tricks a team has that count towards its contract."""
        v = self.view
        contract_mode = self.n == 4 and v.rules.failed_nil_tricks == "contract"
        return sum(
            v.tricks_won[s]
            for s in range(self.n)
            if s % 2 == team and (v.bids[s] != 0 or contract_mode)
        )

    def need(self, team: int) -> int:
        return self.view.team_contract(team) - self.counted(team)

    def live_nil(self, seat: int) -> bool:
        return self.view.is_nil(seat) and self.view.tricks_won[seat] == 0


def lowest(cards: Iterable[Card]) -> Card:
    """The cheapest card: lowest rank, side suits before spades."""
    return min(cards, key=lambda c: (c.suit == Suit.S, c.rank))


def danger(card: Card) -> int:
    """How likely a card is to win a trick later (spades most)."""
    return card.rank + (6 if card.suit == Suit.S else 0)


class MediumBot(Bot):
    """Trick counting, nil and nil cover, bag budget; see the module docstring."""

    name = "builtin-medium"
    version = "1"
    #: Near the bag threshold, bid a doubtful trick rather than bag it (the ``heuristic``
    #: example turns this off: it is Medium without the bag budget).
    bag_budget = True

    # ------------------------------------------------------------ bidding

    def bid(self, view: View) -> int:
        partner_bid = view.partner_bid
        estimate = estimate_tricks(view.hand, view.players)
        if partner_bid != 0 and estimate < 1.5 and nil_hand(view.hand):
            return 0
        bid = max(1, int(estimate + 0.35))
        bags = view.bags[view.team]
        threshold = view.rules.bag_threshold
        if self.bag_budget and view.rules.bag_penalty and bags >= threshold - 3 and estimate - int(estimate) > 0.5:
            bid += 1  # bag budget: near the threshold, bid the doubtful trick rather than bag it
        if partner_bid:
            bid = min(bid, 13 - partner_bid)
        return max(1, min(13, bid))

    def blind_nil(self, view: View) -> bool:
        """Only in despair: far behind and the other side close to winning."""
        if view.players == 2:
            return False  # the opponent sees it coming: it made 3 of 60 in self-play
        if view.partner_bid == 0:
            return False  # never two nils on one side
        mine = view.scores[view.team]
        theirs = view.scores[1 - view.team]
        return theirs - mine >= 200 and theirs >= view.rules.target - 120

    def draw(self, view: View) -> bool:
        card = view.offered_card
        assert card is not None
        return card.suit == Suit.S or card.rank >= JACK

    # ------------------------------------------------------------ play

    def play(self, view: View) -> Card:
        legal = view.legal_cards()
        if len(legal) == 1:
            return legal[0]
        f = Facts(view)
        if view.is_nil(view.seat):
            return self.play_nil(f)
        if f.partner is not None and f.live_nil(f.partner):
            return self.play_cover(f)
        return self.play_normal(f)

    def lose_trick(self, f: Facts) -> Card:
        """Following: shed the most dangerous card that still loses; if every card wins,
        win as cheaply as possible when others play after us, else with the most dangerous."""
        assert f.win is not None
        losers = [c for c in f.legal if not beats(c, f.win[1])]
        if losers:
            return max(losers, key=danger)
        if f.after:
            return min(f.legal, key=lambda c: (c.suit == Suit.S, c.rank))
        return max(f.legal, key=danger)

    def play_nil(self, f: Facts) -> Card:
        """Lose every trick."""
        if not f.trick:
            return min(
                f.legal,
                key=lambda c: (f.higher_unseen(c) == 0, c.suit == Suit.S, f.lower_unseen(c), c.rank),
            )
        return self.lose_trick(f)

    def play_cover(self, f: Facts) -> Card:
        """Partner bid nil: make sure someone else wins the trick."""
        partner = f.partner
        assert partner is not None
        if not f.trick:
            side = [c for c in f.legal if c.suit != Suit.S]
            pool = side or f.legal
            return max(pool, key=lambda c: (f.is_boss(c), c.rank))
        assert f.win is not None
        played = {s for s, _ in f.trick}
        top_seat, top = f.win
        if partner in played:
            if top_seat == partner:
                winners = [c for c in f.legal if beats(c, top)]
                if winners:
                    return min(winners, key=lambda c: (c.suit == Suit.S, c.rank))
                return lowest(f.legal)
            return self.play_normal(f)
        # Partner plays after me: raise the bar it must stay under.
        following = f.led is not None and any(c.suit == f.led for c in f.legal)
        if following:
            top_mine = max(f.legal)
            partner_safe = top.suit == Suit.S and f.led != Suit.S or (
                top.suit == f.led and f.is_boss(top)
            )
            if beats(top_mine, top) and not partner_safe:
                return top_mine
            return lowest(f.legal)
        trumps = [c for c in f.legal if c.suit == Suit.S and beats(c, top)]
        if trumps and f.led != Suit.S:
            return min(trumps)
        return self.discard(f)

    def play_normal(self, f: Facts) -> Card:
        v = f.view
        team = v.team
        need = f.need(team)
        opp_need = f.need(1 - team)
        remaining = f.remaining
        opp_nils = [s for s in v.opponents if f.live_nil(s)]
        if opp_nils:
            card = self.play_against_nil(f, opp_nils, need)
            if card is not None:
                return card
        take = need > 0 or (
            v.team_contract(1 - team) > 0 and 0 < opp_need and remaining - opp_need < 2
        )
        return self.play_take(f) if take else self.play_duck(f)

    def play_against_nil(self, f: Facts, nils: list[int], need: int) -> Card | None:
        """Keep an opponent's nil in trouble, when our own contract can spare it."""
        slack = f.remaining - max(need, 0)
        if slack < 2:
            return None
        if f.win is not None and f.win[0] in nils:
            losers = [c for c in f.legal if not beats(c, f.win[1])]
            if losers:
                return max(losers, key=danger)
            return None
        if any(s in f.after for s in nils):
            if not f.trick:
                side = [c for c in f.legal if c.suit != Suit.S and c.suit not in f.voids[nils[0]]]
                return lowest(side or f.legal)
            return lowest(f.legal)
        return None

    def play_take(self, f: Facts) -> Card:
        """Win tricks, cheaply."""
        partner = f.partner
        if not f.trick:
            return self.lead_to_win(f)
        assert f.win is not None
        top_seat, top = f.win
        winners = [c for c in f.legal if beats(c, top)]
        if top_seat == partner:
            partner_holds = not any(f.may_beat(s, top, f.led or top.suit) for s in f.after)
            if partner_holds or not winners:
                return self.discard(f)
        if not winners:
            return self.discard(f)
        if not f.after:
            return min(winners, key=lambda c: (c.suit == Suit.S, c.rank))
        friends = [partner] if partner is not None else []
        safe = [c for c in winners if f.safe_win(c, ignore=friends)]
        if safe:
            return min(safe, key=lambda c: (c.suit == Suit.S, c.rank))
        if f.led is not None and winners[0].suit == f.led:
            if len(f.trick) == 1 and f.n == 4:
                return self.discard(f)  # second hand low
            return max(winners)  # third hand high
        # Trumping: high if someone after me may overtrump, else as low as will do.
        cheapest = min(winners)
        if any(f.may_beat(s, cheapest, f.led or top.suit) for s in f.after):
            return max(winners)
        return cheapest

    def lead_to_win(self, f: Facts) -> Card:
        opponents = f.view.opponents

        def ruffed(suit: Suit) -> bool:
            return any(suit in f.voids[s] and Suit.S not in f.voids[s] for s in opponents)
        bosses = [c for c in f.legal if c.suit != Suit.S and f.is_boss(c) and not ruffed(c.suit)]
        if bosses:
            return max(bosses, key=lambda c: c.rank)
        spade_bosses = [c for c in f.legal if c.suit == Suit.S and f.is_boss(c)]
        if spade_bosses and len(f.suits[Suit.S]) >= 2:
            return max(spade_bosses)
        side = [c for c in f.legal if c.suit != Suit.S]
        if side:

            def key(c: Card) -> tuple[int, int, int]:
                ranks = f.suits[c.suit]
                bare_king = KING in ranks and ACE not in ranks and len(ranks) <= 2
                return (bare_king, len(ranks), c.rank)
            return min(side, key=key)
        return min(f.legal)

    def play_duck(self, f: Facts) -> Card:
        """Contract safe: stay out of tricks (bags cost 100 points per ten)."""
        if not f.trick:
            return min(
                f.legal,
                key=lambda c: (f.higher_unseen(c) == 0, c.suit == Suit.S, -f.higher_unseen(c), c.rank),
            )
        return self.lose_trick(f)

    def discard(self, f: Facts) -> Card:
        """A card that does not matter: the lowest of the suit led, or the cheapest side card."""
        if f.led is not None:
            follow = [c for c in f.legal if c.suit == f.led]
            if follow:
                return min(follow)
        return lowest(f.legal)


