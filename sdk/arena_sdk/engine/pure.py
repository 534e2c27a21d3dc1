"""The game's state machine in pure Python: dealing, bidding, the draw, play and scoring.

:class:`PureCore` is what :class:`~arena_sdk.engine.state.GameState` is built
on when the compiled core (``arena_sdk.engine._core``, Cython) is not there or
is turned off (``ARENA_SDK_PURE=1``; see :mod:`arena_sdk.engine.core`).  Both
implement the same methods over the same attributes and make the same random
choices from the same seeds and generators; ``tests/engine/test_core_equivalence.py``
plays both side by side and compares every state.  A change to the rules goes
into both.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any

from arena_sdk.engine.cards import CARDS, NON_SPADE_MASK, NUM_CARDS, SPADES, SUIT_MASKS, Card, cards_of
from arena_sdk.engine.chance import chance_int, chance_rng, shuffled_deck
from arena_sdk.engine.errors import IllegalActionError, MalformedInputError
from arena_sdk.engine.model import ActionEntry, Decision, GameResult, HandResult, Trick
from arena_sdk.engine.ruleset import Ruleset
from arena_sdk.engine.scoring import frozen, game_ending, score_team
from arena_sdk.engine.seats import team_members, team_of

MAX_BID = 13
_BIDS = tuple(range(MAX_BID + 1))
_BITS = tuple(1 << i for i in range(NUM_CARDS))
_FIRST_SPADE = SPADES * 13
#: ``_SUIT_OF_MASK[c]``: the mask of card ``c``'s suit.
_SUIT_OF_MASK = tuple(SUIT_MASKS[c // 13] for c in range(NUM_CARDS))
#: ``_BEATS[w][c]``: does card ``c`` played later take the trick from ``w``?
_BEATS = tuple(
    tuple(
        (c // 13 == w // 13 and c > w) or (c // 13 == SPADES and w // 13 != SPADES)
        for c in range(NUM_CARDS)
    )
    for w in range(NUM_CARDS)
)
_new_tuple = tuple.__new__  # builds a named tuple without its Python-level __new__
#: Per suit: the 13-bit pattern of a hand's cards in that suit -> those cards (filled on use).
_SUIT_CARDS: tuple[dict[int, tuple[Card, ...]], ...] = ({}, {}, {}, {})


def _suit_cards(suit: int, bits: int) -> tuple[Card, ...]:
    cards = tuple(CARDS[13 * suit + i] for i in range(13) if bits >> i & 1)
    _SUIT_CARDS[suit][bits] = cards
    return cards


def _cards_list(mask: int) -> list[Card]:
    """The cards of ``mask`` in canonical order, a suit at a time from a cache."""
    out: list[Card] = []
    for suit in range(4):
        bits = mask >> (13 * suit) & 0x1FFF
        if bits:
            got = _SUIT_CARDS[suit].get(bits)
            out += got if got is not None else _suit_cards(suit, bits)
    return out
MAX_EXCHANGE = 3
TRICKS_PER_HAND = 13
#: Per hand number: the history entries of card plays, at ``seat * 52 + card``
#: (filled on use).  Entries are immutable, so every game shares them; this
#: saves building a named tuple per card in the hot loops.
_PLAY_ENTRIES: list[list[ActionEntry | None]] = []
_CACHED_HANDS = 512


def _play_entries(hand: int) -> list[ActionEntry | None]:
    if hand < len(_PLAY_ENTRIES):
        return _PLAY_ENTRIES[hand]
    if hand > _CACHED_HANDS:  # an unusually long game: bounded memory, no sharing
        return [None] * (4 * NUM_CARDS)
    while len(_PLAY_ENTRIES) <= hand:
        _PLAY_ENTRIES.append([None] * (4 * NUM_CARDS))
    return _PLAY_ENTRIES[hand]



# Module constants: an enum member read as ``Decision.BID`` costs a class
# attribute lookup (about 0.1 µs in CPython 3.11), on every decision.
_PLAY = Decision.PLAY
_BID = Decision.BID
_BLIND_NIL = Decision.BLIND_NIL
_DRAW = Decision.DRAW
_EXCHANGE = Decision.EXCHANGE


def _all_exchanges(hand: Sequence[Card]) -> list[tuple[Card, ...]]:
    out: list[tuple[Card, ...]] = []
    for size in range(MAX_EXCHANGE + 1):
        out.extend(itertools.combinations(hand, size))
    return out



class PureCore:
    """The state machine of a game in pure Python: the fallback of the compiled core.

    :class:`~arena_sdk.engine.state.GameState` adds creation, views and the
    checks of bad input on top; see the module docstring.
    """

    __slots__ = (
        "rules", "seed", "players", "decks", "scores", "bags", "hand_number", "first",
        "_hands", "bids", "blind", "blind_decided", "blind_eligible", "tricks_won",
        "trick", "leader", "win_card", "win_seat", "spades_broken", "tricks",
        "to_move", "decision", "bid_order", "bid_pos", "stock", "stock_pos",
        "discards", "seen_discards", "exchange_queue", "exchanged", "draw_turn",
        "hand_results", "history", "result", "_deck_log", "start_scores",
        "start_bags", "first_of_game", "_undealt",
    )  # fmt: skip

    rules: Ruleset
    seed: object
    players: int
    decks: dict[int, list[int]]
    scores: list[int]
    bags: list[int]
    hand_number: int
    first: int
    _hands: list[int]
    bids: list[int | None]
    blind: list[bool]
    blind_decided: list[bool]
    blind_eligible: list[bool]
    tricks_won: list[int]
    trick: list[int]
    leader: int
    win_card: int
    win_seat: int
    spades_broken: bool
    tricks: list[Trick]
    to_move: int | None
    decision: Decision | None
    bid_order: list[int]
    bid_pos: int
    stock: list[int]
    stock_pos: int
    discards: list[int]
    seen_discards: list[int]
    exchange_queue: list[int]
    exchanged: list[int]
    draw_turn: int
    hand_results: list[HandResult]
    history: list[ActionEntry]
    result: GameResult | None
    _deck_log: dict[int, list[int]]
    start_scores: tuple[int, ...]
    start_bags: tuple[int, ...]
    first_of_game: int
    #: True while the four-player hand in progress is not dealt yet (see :attr:`hands`).
    _undealt: bool


    # ------------------------------------------------------------------ creation

    @classmethod
    def _create(cls, rules: Ruleset, seed: object, first: int | None, scores: list[int], bags: list[int],
                decks: dict[int, list[int]]) -> PureCore:  # fmt: skip
        """A new game of class ``cls`` from checked values (``first`` None: the seeded first dealer)."""
        self = cls.__new__(cls)
        if first is None:
            first = chance_int(seed, "first") % rules.players
        self._init_game(rules, seed, first, scores, bags, decks)
        return self

    def _init_game(self, rules: Ruleset, seed: object, first: int, scores: list[int], bags: list[int],
                   decks: dict[int, list[int]]) -> None:  # fmt: skip
        """Set up a game from checked values and run it up to the first decision."""
        self.rules = rules
        self.seed = seed
        self.players = rules.players
        self.first = self.first_of_game = first
        self.scores = scores
        self.bags = bags
        self.start_scores = tuple(scores)
        self.start_bags = tuple(bags)
        self.decks = decks
        self.hand_results = []
        self.history = []
        self.result = None
        self._deck_log = {}
        self._undealt = False
        self._hands = []
        self.hand_number = 0
        self._start_hand()

    def _random_hand(self, rng: random.Random) -> None:
        """Random legal decisions until the current hand is scored (or the game ends).

        See :func:`arena_sdk.engine.playout.play_random_hand`.
        """
        hand = self.hand_number
        while self.decision is not None and self.hand_number == hand:
            if self.decision is _PLAY:
                self.play_out_hand(None, rng)
            else:
                self.apply(rng.choice(self.legal_actions()))

    @property
    def hands(self) -> list[int]:
        """Each seat's cards as a bitmask (bit ``c`` is card index ``c``).

        A four-player hand is dealt the first time its cards are needed: by
        this attribute, a seat's view of its cards, or the end of bidding.  Its cards are a
        pure function of the seed (or the given deck), so dealing late changes
        nothing anybody can observe; it saves the shuffle of a next hand that a
        simulation never plays.
        """
        if self._undealt:
            self._deal()
        return self._hands

    @hands.setter
    def hands(self, value: list[int]) -> None:
        self._undealt = False
        self._hands = value

    @property
    def deck_log(self) -> dict[int, list[int]]:
        """The deck order of every hand dealt so far, by hand number."""
        if self._undealt:
            self._deal()
        return self._deck_log

    @deck_log.setter
    def deck_log(self, value: dict[int, list[int]]) -> None:
        self._deck_log = value

    def restore(self, saved: PureCore) -> None:
        """Make this state equal to ``saved`` in place (copies of its lists: ``saved`` is kept).

        For a holder of this object that must see a rewind (the match loop's undo).
        """
        copy = saved.clone()
        for name in PureCore.__slots__:
            setattr(self, name, getattr(copy, name))

    def clone(self) -> PureCore:
        """An independent copy (cheap: a few list copies)."""
        cls = type(self)
        other = cls.__new__(cls)
        other._undealt = self._undealt  # a pending deal stays pending: it is the same cards
        other.rules = self.rules
        other.seed = self.seed
        other.players = self.players
        other.decks = self.decks  # never mutated after new()
        other.scores = self.scores[:]
        other.bags = self.bags[:]
        other.hand_number = self.hand_number
        other.first = self.first
        other._hands = self._hands[:]
        other.bids = self.bids[:]
        other.blind = self.blind[:]
        other.blind_decided = self.blind_decided[:]
        other.blind_eligible = self.blind_eligible[:]
        other.tricks_won = self.tricks_won[:]
        other.trick = self.trick[:]
        other.leader = self.leader
        other.win_card = self.win_card
        other.win_seat = self.win_seat
        other.spades_broken = self.spades_broken
        other.tricks = self.tricks[:]
        other.to_move = self.to_move
        other.decision = self.decision
        other.bid_order = self.bid_order
        other.bid_pos = self.bid_pos
        other.stock = self.stock
        other.stock_pos = self.stock_pos
        other.discards = self.discards[:]
        other.seen_discards = self.seen_discards[:]
        other.exchange_queue = self.exchange_queue[:]
        other.exchanged = self.exchanged[:]
        other.draw_turn = self.draw_turn
        other.hand_results = self.hand_results[:]
        other.history = self.history[:]
        other.result = self.result
        other._deck_log = dict(self._deck_log)
        other.start_scores = self.start_scores
        other.start_bags = self.start_bags
        other.first_of_game = self.first_of_game
        return other


    def legal_actions(self) -> list[Any]:
        """The legal actions of the seat to move, in canonical order (empty when over)."""
        kind = self.decision
        if kind is _PLAY:
            mask = self._legal_play_mask()
            if self.trick:  # following suit: one suit's cards straight from the cache
                suit = self.trick[0] // 13
                bits = mask >> (13 * suit) & 0x1FFF
                if bits << (13 * suit) == mask:
                    got = _SUIT_CARDS[suit].get(bits)
                    return [*(got if got is not None else _suit_cards(suit, bits))]
            return _cards_list(mask)
        if kind is _BID:
            return [*_BIDS]
        if kind is _BLIND_NIL:
            return [False, True]
        if kind is _DRAW:
            return [True, False]
        if kind is _EXCHANGE:
            assert self.to_move is not None
            return _all_exchanges(cards_of(self._hands[self.to_move]))
        return []

    def legal_play_mask(self) -> int:
        """Bitmask of the cards the seat to move may play (0 outside the play phase)."""
        return self._legal_play_mask() if self.decision is _PLAY else 0

    def _legal_play_mask(self) -> int:
        hand = self._hands[self.to_move]  # type: ignore[index]
        if self.trick:
            follow = hand & SUIT_MASKS[self.trick[0] // 13]
            return follow or hand
        if (
            not self.spades_broken
            and self.rules.spade_lead != "always"
            and hand & NON_SPADE_MASK
        ):
            return hand & NON_SPADE_MASK
        return hand


    # ------------------------------------------------------------------ actions

    def apply(self, action: object) -> None:
        """Apply the decision of the seat to move and run on to the next decision.

        Raises :class:`MalformedInputError` for a value of the wrong type or
        shape and :class:`IllegalActionError` for a well-formed action that the
        rules do not allow now; the state is unchanged when either is raised.
        """
        kind = self.decision
        seat = self.to_move
        if kind is _PLAY:
            # Fast path (the hot loop of every simulation): a card the seat may
            # play.  Anything else goes through _check_play for its error.
            if not (
                (action.__class__ is Card or action.__class__ is int)
                and 0 <= action < NUM_CARDS  # type: ignore[operator]
                and self._legal_play_mask() >> action & 1  # type: ignore[operator]
            ):
                action = self._check_play(action)  # raises, or accepts an int subclass
            self.play_legal(seat, action)  # type: ignore[arg-type]
            return
        if kind is None or seat is None:
            raise IllegalActionError("the game is over: no action is expected")
        if kind is _BID:
            bid = _check_bid(action)
            self.history.append(_new_tuple(ActionEntry, (self.hand_number, seat, kind, bid)))
            self.bids[seat] = bid
            self.bid_pos += 1
            self._next_bidder()
        elif kind is _BLIND_NIL:
            choice = _check_bool(kind, action)
            self.history.append(ActionEntry(self.hand_number, seat, kind, choice))
            self._decide_blind(seat, choice)
        elif kind is _DRAW:
            keep = _check_bool(kind, action)
            self.history.append(ActionEntry(self.hand_number, seat, kind, keep))
            self._draw(seat, keep)
        else:
            returned = self._check_exchange(seat, action)
            self.history.append(ActionEntry(self.hand_number, seat, kind, returned))
            self._exchange(seat, returned)


    # ------------------------------------------------------------------ flow

    def _deck_for(self, number: int) -> list[int]:
        deck = self.decks.get(number)
        if deck is None:
            deck = shuffled_deck(self.seed, number)
        self._deck_log[number] = deck
        return deck

    def _start_hand(self) -> None:
        self.hand_number += 1
        n = self.players
        rules = self.rules
        self.bids = [None] * n
        self.blind = [False] * n
        self.blind_decided = [False] * n
        self.tricks_won = [0] * n
        self.trick = []
        self.tricks = []
        self.leader = -1  # set when play starts
        self.bid_order = []  # set when bidding starts
        self.bid_pos = 0
        self.spades_broken = False
        self.win_card = -1
        self.win_seat = -1
        self.exchanged = [0] * n
        self.exchange_queue = []
        self.discards = []
        self.seen_discards = [0] * n
        self.stock = []
        self.stock_pos = 0
        self.draw_turn = 0
        first = self.first
        if rules.blind_nil == "off":
            eligible = [False] * n
        else:
            deficit = rules.blind_nil_min_deficit  # 0 means no condition, even when leading
            eligible = [
                deficit == 0
                or self.scores[1 - team_of(n, s)] - self.scores[team_of(n, s)] >= deficit
                for s in range(n)
            ]
            if rules.blind_nil == "first-bidder":
                first_bidder = (first + 1) % n
                eligible = [s == first_bidder and eligible[s] for s in range(n)]
        self.blind_eligible = eligible
        if n == 4:
            # The cards are dealt when first looked at (the hands and deck_log
            # properties, a seat's view) or when bidding ends: bids need none.
            self._undealt = True
            self.bid_order = [(first + 1 + i) % 4 for i in range(4)]
            self.bid_pos = 0
            self._next_bidder()
        else:
            self._hands = [0] * n
            self.stock = self._deck_for(self.hand_number)
            self._next_draw()

    def _deal(self) -> None:
        """Deal the pending four-player hand: every fourth card, from the dealer's left."""
        self._undealt = False
        deck = self._deck_for(self.hand_number)
        first = self.first
        bit = _BITS.__getitem__
        hands = [0] * 4
        for k in range(4):
            hands[(first + 1 + k) % 4] = sum(map(bit, deck[k::4]))  # distinct bits: sum is or
        self._hands = hands

    def _next_bidder(self) -> None:
        """Ask the next bidder (blind nil first where eligible), or start play."""
        order = self.bid_order
        while self.bid_pos < len(order):
            seat = order[self.bid_pos]
            if self.bids[seat] is not None:  # a two-player blind nil: already its bid
                self.bid_pos += 1
                continue
            self.to_move = seat
            if self.blind_eligible[seat] and not self.blind_decided[seat]:
                self.decision = _BLIND_NIL
            else:
                self.decision = _BID
            return
        if self._undealt:
            self._deal()  # the play reads _hands directly
        self.leader = order[0]
        self.to_move = self.leader
        self.decision = _PLAY

    def _decide_blind(self, seat: int, blind: bool) -> None:
        self.blind_decided[seat] = True
        if blind:
            self.blind[seat] = True
            self.bids[seat] = 0
        if self.players == 4:
            self._next_bidder()
        else:
            self._next_draw()

    def _next_draw(self) -> None:
        """Two-player draw: ask the next drawer, drawing for blind-nil players."""
        while self.stock_pos < NUM_CARDS:
            seat = (self.first + self.draw_turn) % 2
            if self.blind_eligible[seat] and not self.blind_decided[seat]:
                self.to_move = seat
                self.decision = _BLIND_NIL
                return
            if not self.blind[seat]:
                self.to_move = seat
                self.decision = _DRAW
                return
            # Blind nil: keep the first card unseen, the second goes out unseen.
            self._hands[seat] |= 1 << self.stock[self.stock_pos]
            self.discards.append(self.stock[self.stock_pos + 1])
            self.stock_pos += 2
            self.draw_turn += 1
        self.exchange_queue = [s for s in (self.first, 1 - self.first) if self.blind[s]]
        self._next_exchange()

    def _draw(self, seat: int, keep: bool) -> None:
        top = self.stock[self.stock_pos]
        below = self.stock[self.stock_pos + 1]
        kept, out = (top, below) if keep else (below, top)
        self._hands[seat] |= 1 << kept
        self.discards.append(out)
        self.seen_discards[seat] |= 1 << out
        self.stock_pos += 2
        self.draw_turn += 1
        self._next_draw()

    def _next_exchange(self) -> None:
        if self.exchange_queue:
            self.to_move = self.exchange_queue[0]
            self.decision = _EXCHANGE
            return
        second = 1 - self.first
        self.bid_order = [second, self.first]
        self.bid_pos = 0
        self._next_bidder()

    def _exchange(self, seat: int, returned: tuple[Card, ...]) -> None:
        self.exchange_queue.pop(0)
        k = len(returned)
        self.exchanged[seat] = k
        if k:
            pool = sorted(self.discards)
            drawn = chance_rng(self.seed, "exchange", self.hand_number, seat).sample(pool, k)
            for c in returned:
                self._hands[seat] &= ~(1 << c)
            for c in drawn:
                self._hands[seat] |= 1 << c
                self.discards.remove(c)
            self.discards.extend(int(c) for c in returned)
            for c in returned:
                self.seen_discards[seat] |= 1 << c
        self._next_exchange()

    def play_legal(self, seat: int, card: int) -> None:
        """Play ``card`` for ``seat`` without checking it: for playouts that pick
        from :meth:`legal_play_mask` themselves.  Anything else must use :meth:`apply`.
        """
        number = self.hand_number
        entries = _play_entries(number)
        key = seat * NUM_CARDS + card
        entry = entries[key]
        if entry is None:
            entry = entries[key] = _new_tuple(ActionEntry, (number, seat, _PLAY, CARDS[card]))
        self.history.append(entry)
        self._hands[seat] ^= _BITS[card]
        trick = self.trick
        if not trick:
            self.win_card = card
            self.win_seat = seat
            if card >= _FIRST_SPADE and self.rules.spade_lead == "broken":
                self.spades_broken = True
        else:
            if _BEATS[self.win_card][card]:
                self.win_card = card
                self.win_seat = seat
            if card >= _FIRST_SPADE and trick[0] < _FIRST_SPADE:
                self.spades_broken = True
        trick.append(card)
        n = self.players
        if len(trick) < n:
            self.to_move = seat + 1 if seat + 1 < n else 0
            return
        self._end_trick()

    def _end_trick(self) -> None:
        winner = self.win_seat
        self.tricks.append(
            _new_tuple(Trick, (self.leader, tuple(map(CARDS.__getitem__, self.trick)), winner))
        )
        self.tricks_won[winner] += 1
        self.trick = []
        self.leader = winner
        self.to_move = winner
        if len(self.tricks) == TRICKS_PER_HAND:
            self._finish_hand()

    def play_out_hand(
        self, pick: Callable[[int, int], int] | None, rng: random.Random | None = None
    ) -> None:
        """Play every remaining card of the hand, each chosen by ``pick(seat, legal_mask)``.

        ``pick`` must return the index of a card in the mask (unchecked); with
        ``pick=None`` each card is drawn uniformly from the legal ones with
        ``rng`` (inlined: the hot loop of random playouts).  It
        is the play phase of :meth:`play_legal` with every attribute in a
        local, for random playouts and rollouts; the state ends the same as
        after the same plays through :meth:`apply`.  Call only when
        :attr:`decision` is ``PLAY``.
        """
        hands = self._hands
        trick = self.trick
        tricks = self.tricks
        tricks_won = self.tricks_won
        n = self.players
        lead_breaks = self.rules.spade_lead == "broken"
        lead_anything = self.rules.spade_lead == "always"
        broken = self.spades_broken
        seat = self.to_move
        leader = self.leader
        win_card = self.win_card
        win_seat = self.win_seat
        append = self.history.append
        entries = _play_entries(self.hand_number)
        # Counters instead of len() calls, and the led suit's mask kept at hand.
        pos = len(trick)
        played = len(tricks)
        lead_mask = _SUIT_OF_MASK[trick[0]] if trick else 0
        led_spade = bool(trick) and trick[0] >= _FIRST_SPADE
        # random() is one C call; randrange() is several Python frames per card.
        # For at most 13 choices, floor(random() * count) is uniform to within 2**-49.
        uniform = None if pick is not None else rng.random  # type: ignore[union-attr]
        while True:
            hand = hands[seat]  # type: ignore[index]
            if pos:
                legal = hand & lead_mask or hand
            elif broken or lead_anything or not hand & NON_SPADE_MASK:
                legal = hand
            else:
                legal = hand & NON_SPADE_MASK
            if uniform is None:
                card = pick(seat, legal)  # type: ignore[arg-type,misc]
            else:
                count = legal.bit_count()
                if count > 1:  # the k-th set bit: cheaper than a list of cards
                    k = int(uniform() * count)
                    while k:  # (a counted while: no range object per card)
                        legal &= legal - 1
                        k -= 1
                card = (legal & -legal).bit_length() - 1
            key = seat * NUM_CARDS + card  # type: ignore[operator]
            entry = entries[key]
            if entry is None:
                entry = entries[key] = _new_tuple(
                    ActionEntry, (self.hand_number, seat, _PLAY, CARDS[card])
                )
            append(entry)
            hands[seat] = hand ^ _BITS[card]  # type: ignore[index]
            trick.append(card)
            if not pos:
                win_card = card
                win_seat = seat
                lead_mask = _SUIT_OF_MASK[card]
                led_spade = card >= _FIRST_SPADE
                if led_spade and lead_breaks:
                    broken = True
            else:
                if _BEATS[win_card][card]:
                    win_card = card
                    win_seat = seat
                if card >= _FIRST_SPADE and not led_spade:
                    broken = True
            pos += 1
            if pos < n:
                seat = seat + 1 if seat + 1 < n else 0  # type: ignore[operator]
                continue
            tricks.append(_new_tuple(Trick, (leader, tuple(map(CARDS.__getitem__, trick)), win_seat)))
            tricks_won[win_seat] += 1
            trick.clear()
            pos = 0
            leader = seat = win_seat
            played += 1
            if played == TRICKS_PER_HAND:
                break
        self.spades_broken = broken
        self.win_card = win_card
        self.win_seat = win_seat
        self.trick = []
        self.leader = leader
        self.to_move = leader
        self._finish_hand()

    def _finish_hand(self) -> None:
        n = self.players
        bids = [b if b is not None else 0 for b in self.bids]
        teams = tuple(
            score_team(
                self.rules,
                team_members(n, t),
                bids,
                self.blind,
                self.tricks_won,
                self.scores[t],
                self.bags[t],
            )
            for t in range(2)
        )
        self.hand_results.append(
            frozen(
                HandResult,
                number=self.hand_number,
                first=self.first,
                bids=tuple(bids),
                blind=tuple(self.blind),
                tricks=tuple(self.tricks_won),
                teams=teams,
                exchanged=tuple(self.exchanged) if n == 2 else (),
                played=tuple(self.tricks),
            )
        )
        self.scores = [t.score_after for t in teams]
        self.bags = [t.bags_after for t in teams]
        ending = game_ending(self.rules, self.scores, self.hand_number)
        if ending is None:
            self.first = (self.first + 1) % n
            self._start_hand()
            return
        s0, s1 = self.scores
        winner = None if s0 == s1 else (0 if s0 > s1 else 1)
        self.result = GameResult(ending, winner, tuple(self.scores), tuple(self.bags), self.hand_number)
        self.to_move = None
        self.decision = None



def _check_bid(action: object) -> int:
    if action.__class__ is int and 0 <= action <= MAX_BID:  # type: ignore[operator]
        return action  # type: ignore[return-value]
    if not isinstance(action, int) or isinstance(action, bool):
        raise MalformedInputError(f"a bid must be a whole number 0-{MAX_BID}, got {action!r}")
    if not 0 <= action <= MAX_BID:
        raise IllegalActionError(f"bid {action} is out of range: bids are 0-{MAX_BID}")
    return action


def _check_bool(kind: Decision, action: object) -> bool:
    if not isinstance(action, bool):
        raise MalformedInputError(f"a {kind.value} decision must be true or false, got {action!r}")
    return action

