# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled core: the game's state machine, random playouts and Hard's rollouts in C.

:class:`CoreState` implements the same methods over the same attributes as
:class:`arena_sdk.engine.pure.PureCore` (the pure-Python fallback), and
:class:`~arena_sdk.engine.state.GameState` is built on whichever
:mod:`arena_sdk.engine.core` chose.  It keeps the public attributes as the
same Python lists (so code that reads or patches ``state.hands[s]`` or
``state.tricks_won`` sees what the pure engine would show) and works on C
copies inside the loops.

Random choices: a ``random.Random`` (exactly that class) is advanced in place
through its Mersenne Twister state, drawing the very numbers its methods would
(``random()``, ``choice`` by ``_randbelow``); the layout and the numbers are
checked against this interpreter at import (:data:`FAST_RANDOM`), and any other
generator is called through its methods.  The shuffles use the seeded SHA-256
digits of :mod:`arena_sdk.engine.chance`, computed in C.

Module functions for search (:func:`rollout_cards`, :func:`rollout`) play the
rollout policy of :mod:`arena_sdk.bots.rollout` on a
:class:`~arena_sdk.bots.simulate.Position`; :func:`sample_hidden`,
:func:`quick_tricks` and :func:`choose_weighted` serve the deal sampler.
"""

from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.list cimport PyList_New, PyList_SET_ITEM, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport uint64_t, uint32_t
from libc.math cimport exp, pow

import random as _random_module

from arena_sdk.engine.cards import CARDS as _CARDS
from arena_sdk.engine.chance import _RADIX_CHUNKS, chance_rng
from arena_sdk.engine.errors import IllegalActionError
from arena_sdk.engine.model import ActionEntry, Decision, GameResult, HandResult, Trick
from arena_sdk.engine.pure import _all_exchanges, _check_bid, _check_bool, _play_entries
from arena_sdk.engine.cards import Card, cards_of
from arena_sdk.engine.scoring import TeamHandScore

cdef extern from "_core_c.h":
    ctypedef struct arena_mt:
        int index
        uint32_t state[624]
    int arena_popcount(uint64_t x) nogil
    uint32_t arena_mt_next(arena_mt *self) nogil
    double arena_mt_random(arena_mt *self) nogil
    uint64_t arena_mt_bits(arena_mt *self, int k) nogil
    uint64_t arena_mt_below(arena_mt *self, uint64_t n) nogil
    void arena_sha256_words(const unsigned char *data, Py_ssize_t length, uint64_t out[4]) nogil
    uint64_t arena_divmod256(uint64_t x[4], uint64_t d) nogil
    object arena_subtuple(object cls, object items)
    object arena_named3(object cls, object a, object b, object c)
    object arena_frozen(object cls, object fields)

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil
    int __builtin_ctzll(unsigned long long) nogil
    int __builtin_clzll(unsigned long long) nogil

DEF NUM_CARDS = 52
DEF FIRST_SPADE = 39
DEF TRICKS_PER_HAND = 13
DEF LUCK_MAX = 4096
cdef uint64_t NON_SPADE = (1ULL << 39) - 1
cdef uint64_t SUIT13 = 0x1FFF

cdef object _PLAY = Decision.PLAY
cdef object _BID = Decision.BID
cdef object _BLIND_NIL = Decision.BLIND_NIL
cdef object _DRAW = Decision.DRAW
cdef object _EXCHANGE = Decision.EXCHANGE
cdef tuple CARDS = tuple(_CARDS)
cdef object _RandomType = _random_module.Random
cdef list _BID_LIST = list(range(14))

# The mixed-radix chunks of a shuffle (arena_sdk.engine.chance._RADIX_CHUNKS).
cdef int _n_chunks = len(_RADIX_CHUNKS)
cdef uint64_t _chunk_product[8]
cdef int _chunk_len[8]
cdef int _radices[52]
_k = 0
for _i, (_product, _rads) in enumerate(_RADIX_CHUNKS):
    _chunk_product[_i] = _product
    _chunk_len[_i] = len(_rads)
    for _r in _rads:
        _radices[_k] = _r
        _k += 1

# ------------------------------------------------------------------ bits


cdef inline int low_index(uint64_t m) noexcept nogil:
    return __builtin_ctzll(m)


cdef inline int high_index(uint64_t m) noexcept nogil:
    return 63 - __builtin_clzll(m)


cdef inline int popcount(uint64_t m) noexcept nogil:
    return arena_popcount(m)


cdef inline uint64_t suit_mask(int card) noexcept nogil:
    return SUIT13 << (13 * (card // 13))


cdef inline bint beats(int card, int top) noexcept nogil:
    return (card // 13 == top // 13 and card > top) or (card >= FIRST_SPADE and top < FIRST_SPADE)


cdef inline long pymod(long a, long n) noexcept nogil:
    cdef long r = a % n
    return r + n if r < 0 else r


cdef inline long long floordiv(long long a, long long b) nogil:
    cdef long long q = a // b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q -= 1
    return q


# ------------------------------------------------------------------ random numbers

#: True when random.Random is advanced in place (its layout and numbers checked at import).
FAST_RANDOM = False


cdef inline arena_mt* fast_rng(object rng):
    """The generator's state for in-place draws, or NULL to call its methods."""
    if FAST_RANDOM and type(rng) is _RandomType:
        return <arena_mt*><PyObject*>rng
    return NULL


def _check_fast_random():
    """Does the in-place Mersenne Twister draw what random.Random draws here?"""
    a = _random_module.Random(20261207)
    state = a.getstate()[1]
    cdef arena_mt* mt = <arena_mt*><PyObject*>a
    if len(state) != 625 or mt.index != state[624]:
        return False
    for i in range(624):
        if mt.state[i] != state[i]:
            return False
    b = _random_module.Random(20261207)
    for n in (1, 2, 3, 7, 13, 14, 52, 1000, 1 << 31, (1 << 32) + 5, (1 << 40) + 3, (1 << 62) + 11):
        for _ in range(50):
            if arena_mt_below(mt, n) != b._randbelow(n):
                return False
            if arena_mt_random(mt) != b.random():
                return False
    for _ in range(700):  # past a regeneration of the 624 words
        if arena_mt_bits(mt, 32) != b.getrandbits(32):
            return False
    c = _random_module.Random(5)
    d = _random_module.Random(5)
    mt = <arena_mt*><PyObject*>c
    seq = list(range(10))
    for _ in range(20):
        if seq[arena_mt_below(mt, 10)] != d.choice(seq):
            return False
    return True


FAST_RANDOM = _check_fast_random()


cdef inline double draw_random(arena_mt* mt, object rng) except? -1.0:
    if mt != NULL:
        return arena_mt_random(mt)
    return rng.random()


# ------------------------------------------------------------------ chance


cdef void digest_of(bytes text, uint64_t out[4]):
    arena_sha256_words(<const unsigned char*><char*>text, len(text), out)


def chance_int(seed, *tags):
    """:func:`arena_sdk.engine.chance.chance_int` in C (the same number)."""
    cdef uint64_t w[4]
    text = "/".join([str(seed), *map(str, tags)]).encode()
    digest_of(text, w)
    return (<object>w[0] << 192) | (<object>w[1] << 128) | (<object>w[2] << 64) | <object>w[3]


cdef bytes seed_text(object seed):
    """``str(seed).encode()``: the text every chance event of a game starts with."""
    return (<str>seed).encode() if type(seed) is str else str(seed).encode()


cdef long first_seat(object seed, long n):
    cdef uint64_t w[4]
    digest_of(seed_text(seed) + b"/first", w)
    return <long>arena_divmod256(w, <uint64_t>n)


cdef void shuffle_into(object seed, long hand, int deck[52]):
    cdef uint64_t x[4]
    cdef uint64_t r
    cdef int i, j, t, c, k = 0, ch
    digest_of(seed_text(seed) + b"/deck/" + str(hand).encode(), x)
    for i in range(52):
        deck[i] = i
    i = 51
    for ch in range(_n_chunks):
        r = arena_divmod256(x, _chunk_product[ch])
        for c in range(_chunk_len[ch]):
            j = <int>(r % <uint64_t>_radices[k])
            r = r // <uint64_t>_radices[k]
            k += 1
            t = deck[i]
            deck[i] = deck[j]
            deck[j] = t
            i -= 1


def shuffled_deck(seed, long hand):
    """:func:`arena_sdk.engine.chance.shuffled_deck` in C (the same order)."""
    cdef int deck[52]
    shuffle_into(seed, hand, deck)
    return [deck[i] for i in range(52)]


# ------------------------------------------------------------------ rules


cdef struct RulesC:
    long players
    long long target
    bint has_floor
    long long lose_floor
    long long nil_value
    long long blind_nil_value
    long long blind_nil_min_deficit
    int blind_nil  # 0 off, 1 any, 2 first-bidder
    bint failed_to_contract
    bint lead_breaks
    bint lead_any
    long long bag_threshold
    long long bag_penalty
    long long max_hands


cdef RulesC rules_c(object rules):
    cdef RulesC r
    r.players = rules.players
    r.target = rules.target
    r.has_floor = rules.lose_floor is not None
    r.lose_floor = rules.lose_floor if r.has_floor else 0
    r.nil_value = rules.nil_value
    r.blind_nil_value = rules.blind_nil_value
    r.blind_nil_min_deficit = rules.blind_nil_min_deficit
    r.blind_nil = {"off": 0, "any": 1, "first-bidder": 2}[rules.blind_nil]
    r.failed_to_contract = rules.failed_nil_tricks == "contract"
    r.lead_breaks = rules.spade_lead == "broken"
    r.lead_any = rules.spade_lead == "always"
    r.bag_threshold = rules.bag_threshold
    r.bag_penalty = rules.bag_penalty
    r.max_hands = rules.max_hands
    return r


# ------------------------------------------------------------------ history entries

cdef list _BID_ENTRIES = []
DEF CACHED_HANDS = 512


cdef object bid_entry(long hand, long seat, long bid):
    """The history entry of a bid, shared like the card plays' (entries are immutable)."""
    cdef list row
    if hand > CACHED_HANDS:
        return arena_subtuple(ActionEntry, (hand, seat, _BID, bid))
    while len(_BID_ENTRIES) <= hand:
        _BID_ENTRIES.append([None] * 56)
    row = <list>_BID_ENTRIES[hand]
    entry = row[seat * 14 + bid]
    if entry is None:
        entry = row[seat * 14 + bid] = arena_subtuple(ActionEntry, (hand, seat, _BID, bid))
    return entry


cdef inline object play_entry(list entries, long hand, long seat, int card):
    cdef long key = seat * NUM_CARDS + card
    entry = <object>PyList_GET_ITEM(entries, key)
    if entry is None:
        entry = arena_subtuple(ActionEntry, (hand, seat, _PLAY, CARDS[card]))
        entries[key] = entry
    return entry


cdef inline object card_list(uint64_t mask):
    """The cards of ``mask`` in canonical order, as a new list of Card."""
    cdef int count = popcount(mask), i = 0, c
    cdef list out = PyList_New(count)
    while mask:
        c = low_index(mask)
        mask &= mask - 1
        card = CARDS[c]
        Py_INCREF(card)
        PyList_SET_ITEM(out, i, card)
        i += 1
    return out


cdef object trick_of(long leader, int* cards, int n, long winner):
    cdef tuple played = PyTuple_New(n)
    cdef int i
    for i in range(n):
        card = CARDS[cards[i]]
        Py_INCREF(card)
        PyTuple_SET_ITEM(played, i, card)
    return arena_named3(Trick, leader, played, winner)


# ------------------------------------------------------------------ the state machine


cdef inline uint64_t legal_of(uint64_t hand, long pos, uint64_t lead_mask, bint any_lead) noexcept nogil:
    """The cards ``hand`` may play: follow the led suit if it can; lead a spade only when ``any_lead``
    (broken, or always allowed) or when it holds nothing else."""
    cdef uint64_t legal
    if pos:
        legal = hand & lead_mask
        return legal if legal else hand
    if any_lead or not hand & NON_SPADE:
        return hand
    return hand & NON_SPADE


cdef inline long draw_card(arena_mt* mt, object uniform, uint64_t legal) except -1:
    """A uniform legal card as the pure playout draws it: the k-th set bit, k = int(random() * count)."""
    cdef long count = popcount(legal), k
    if count > 1:
        if mt != NULL:
            k = <long>(arena_mt_random(mt) * count)
        else:
            k = <long>(<double>uniform() * count)
        while k:
            legal &= legal - 1
            k -= 1
    return low_index(legal)


cdef class CoreState:
    """The compiled state machine; see the module docstring and :class:`~arena_sdk.engine.pure.PureCore`."""

    cdef public object seed, decks, to_move, decision, result, start_scores, start_bags
    cdef public list scores, bags, _hands, bids, blind, blind_decided, blind_eligible, tricks_won
    cdef public list trick, tricks, bid_order, stock, discards, seen_discards, exchange_queue
    cdef public list exchanged, hand_results, history
    cdef public dict _deck_log
    cdef public long players, hand_number, first, leader, win_card, win_seat, bid_pos, stock_pos
    cdef public long draw_turn, first_of_game
    cdef public bint spades_broken, _undealt
    cdef object _rules
    cdef RulesC rc

    # -------------------------------------------------------------- creation

    @property
    def rules(self):
        return self._rules

    @rules.setter
    def rules(self, value):
        self.rc = rules_c(value)
        self._rules = value

    @classmethod
    def _create(cls, rules, seed, first, list scores, list bags, dict decks):
        """A new game of class ``cls`` from checked values (``first`` None: the seeded first dealer)."""
        cdef CoreState self = CoreState.__new__(cls)
        self.rules = rules
        self.c_init_game(rules, seed, first_seat(seed, self.rc.players) if first is None else first,
                         scores, bags, decks)
        return self

    def _init_game(self, rules, seed, long first, list scores, list bags, dict decks):
        """Set up a game from checked values and run it up to the first decision."""
        self.c_init_game(rules, seed, first, scores, bags, decks)

    cdef void c_init_game(self, rules, seed, long first, list scores, list bags, dict decks) except *:
        self.rules = rules
        self.seed = seed
        self.players = self.rc.players
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
        self.c_start_hand()

    @property
    def hands(self):
        """Each seat's cards as a bitmask; a pending four-player deal is dealt first."""
        if self._undealt:
            self.c_deal()
        return self._hands

    @hands.setter
    def hands(self, value):
        self._undealt = False
        self._hands = value

    @property
    def deck_log(self):
        """The deck order of every hand dealt so far, by hand number."""
        if self._undealt:
            self.c_deal()
        return self._deck_log

    @deck_log.setter
    def deck_log(self, value):
        self._deck_log = value

    def clone(self):
        """An independent copy (cheap: a few list copies)."""
        cdef CoreState other = CoreState.__new__(type(self))
        _assign(other, self)
        return other

    def restore(self, CoreState saved):
        """Make this state equal to ``saved`` in place (copies of its lists: ``saved`` is kept).

        For a holder of this object that must see a rewind (the match loop's undo).
        """
        _assign(self, saved)

    # -------------------------------------------------------------- queries

    def legal_actions(self):
        """The legal actions of the seat to move, in canonical order (empty when over)."""
        kind = self.decision
        if kind is _PLAY:
            return card_list(self.c_legal_mask())
        if kind is _BID:
            return _BID_LIST[:]
        if kind is _BLIND_NIL:
            return [False, True]
        if kind is _DRAW:
            return [True, False]
        if kind is _EXCHANGE:
            return _all_exchanges(cards_of(self._hands[self.to_move]))
        return []

    def legal_play_mask(self):
        """Bitmask of the cards the seat to move may play (0 outside the play phase)."""
        return self.c_legal_mask() if self.decision is _PLAY else 0

    def _legal_play_mask(self):
        return self.c_legal_mask()

    cdef uint64_t c_legal_mask(self) except? 0:
        cdef uint64_t hand = self._hands[self.to_move]
        cdef uint64_t follow
        if self.trick:
            follow = hand & suit_mask(<long>self.trick[0])
            return follow if follow else hand
        if not self.spades_broken and not self.rc.lead_any and hand & NON_SPADE:
            return hand & NON_SPADE
        return hand

    # -------------------------------------------------------------- actions

    def apply(self, action):
        """Apply the decision of the seat to move and run on to the next decision (see GameState)."""
        kind = self.decision
        seat = self.to_move
        cdef long c
        if kind is _PLAY:
            t = type(action)
            if (t is Card or t is int) and 0 <= action < NUM_CARDS:
                c = action
                if (self.c_legal_mask() >> c) & 1:
                    self.c_play(self.to_move, c)
                    return
            c = self._check_play(action)
            self.c_play(self.to_move, c)
            return
        if kind is None or seat is None:
            raise IllegalActionError("the game is over: no action is expected")
        if kind is _BID:
            bid = _check_bid(action)
            self.c_bid(seat, bid)
        elif kind is _BLIND_NIL:
            choice = _check_bool(kind, action)
            self.history.append(ActionEntry(self.hand_number, seat, kind, choice))
            self.c_decide_blind(seat, choice)
        elif kind is _DRAW:
            keep = _check_bool(kind, action)
            self.history.append(ActionEntry(self.hand_number, seat, kind, keep))
            self.c_draw(seat, keep)
        else:
            returned = self._check_exchange(seat, action)
            self.history.append(ActionEntry(self.hand_number, seat, kind, returned))
            self._exchange(seat, returned)

    cdef void c_bid(self, long seat, long bid) except *:
        self.history.append(bid_entry(self.hand_number, seat, bid))
        self.bids[seat] = bid
        self.bid_pos += 1
        self.c_next_bidder()

    def play_legal(self, long seat, long card):
        """Play ``card`` for ``seat`` without checking it (see PureCore.play_legal)."""
        self.c_play(seat, card)

    cdef void c_play(self, long seat, long card) except *:
        cdef list trick = self.trick
        cdef uint64_t hand = self._hands[seat]
        self.history.append(play_entry(_play_entries(self.hand_number), self.hand_number, seat, card))
        self._hands[seat] = hand ^ (1ULL << card)
        if not trick:
            self.win_card = card
            self.win_seat = seat
            if card >= FIRST_SPADE and self.rc.lead_breaks:
                self.spades_broken = True
        else:
            if beats(card, self.win_card):
                self.win_card = card
                self.win_seat = seat
            if card >= FIRST_SPADE and <long>trick[0] < FIRST_SPADE:
                self.spades_broken = True
        trick.append(card)
        if len(trick) < self.players:
            self.to_move = seat + 1 if seat + 1 < self.players else 0
            return
        self.c_end_trick()

    cdef void c_end_trick(self) except *:
        cdef long winner = self.win_seat
        cdef int cards[4]
        cdef int i, n = len(self.trick)
        for i in range(n):
            cards[i] = self.trick[i]
        self.tricks.append(trick_of(self.leader, cards, n, winner))
        self.tricks_won[winner] += 1
        self.trick = []
        self.leader = winner
        self.to_move = winner
        if len(self.tricks) == TRICKS_PER_HAND:
            self.c_finish_hand()

    # -------------------------------------------------------------- flow

    def _deck_for(self, long number):
        return self.c_deck_for(number)

    cdef list c_deck_for(self, long number):
        cdef int deck[52]
        cdef list out
        cdef int i
        got = self.decks.get(number) if self.decks else None
        if got is None:
            shuffle_into(self.seed, number, deck)
            out = PyList_New(52)
            for i in range(52):
                v = deck[i]
                Py_INCREF(v)
                PyList_SET_ITEM(out, i, v)
        else:
            out = got
        self._deck_log[number] = out
        return out

    def _start_hand(self):
        self.c_start_hand()

    cdef void c_start_hand(self) except *:
        cdef long n = self.players, first, s, team
        cdef long long deficit
        self.hand_number += 1
        self.bids = [None] * n
        self.blind = [False] * n
        self.blind_decided = [False] * n
        self.tricks_won = [0] * n
        self.trick = []
        self.tricks = []
        self.leader = -1
        self.bid_order = []
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
        if self.rc.blind_nil == 0:
            eligible = [False] * n
        else:
            deficit = self.rc.blind_nil_min_deficit
            eligible = []
            for s in range(n):
                team = s % 2
                eligible.append(deficit == 0 or self.scores[1 - team] - self.scores[team] >= deficit)
            if self.rc.blind_nil == 2:
                for s in range(n):
                    eligible[s] = s == (first + 1) % n and eligible[s]
        self.blind_eligible = eligible
        if n == 4:
            self._undealt = True
            self.bid_order = [(first + 1) % 4, (first + 2) % 4, (first + 3) % 4, first % 4]
            self.bid_pos = 0
            self.c_next_bidder()
        else:
            self._hands = [0] * n
            self.stock = self.c_deck_for(self.hand_number)
            self.c_next_draw()

    def _deal(self):
        self.c_deal()

    cdef void c_deal(self) except *:
        cdef list deck
        cdef uint64_t hands[4]
        cdef long first = self.first, k, i
        self._undealt = False
        deck = self.c_deck_for(self.hand_number)
        for k in range(4):
            hands[k] = 0
        for i in range(52):
            hands[(first + 1 + i % 4) % 4] |= 1ULL << <long>deck[i]
        self._hands = [hands[0], hands[1], hands[2], hands[3]]

    def _next_bidder(self):
        self.c_next_bidder()

    cdef void c_next_bidder(self) except *:
        cdef list order = self.bid_order
        cdef long seat
        while self.bid_pos < len(order):
            seat = order[self.bid_pos]
            if self.bids[seat] is not None:
                self.bid_pos += 1
                continue
            self.to_move = seat
            if self.blind_eligible[seat] and not self.blind_decided[seat]:
                self.decision = _BLIND_NIL
            else:
                self.decision = _BID
            return
        if self._undealt:
            self.c_deal()
        self.leader = order[0]
        self.to_move = self.leader
        self.decision = _PLAY

    def _decide_blind(self, long seat, blind):
        self.c_decide_blind(seat, blind)

    cdef void c_decide_blind(self, long seat, bint blind) except *:
        self.blind_decided[seat] = True
        if blind:
            self.blind[seat] = True
            self.bids[seat] = 0
        if self.players == 4:
            self.c_next_bidder()
        else:
            self.c_next_draw()

    def _next_draw(self):
        self.c_next_draw()

    cdef void c_next_draw(self) except *:
        cdef long seat
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
            self._hands[seat] = <uint64_t>self._hands[seat] | (1ULL << <long>self.stock[self.stock_pos])
            self.discards.append(self.stock[self.stock_pos + 1])
            self.stock_pos += 2
            self.draw_turn += 1
        self.exchange_queue = [s for s in (self.first, 1 - self.first) if self.blind[s]]
        self.c_next_exchange()

    def _draw(self, long seat, keep):
        self.c_draw(seat, keep)

    cdef void c_draw(self, long seat, bint keep) except *:
        cdef long top = self.stock[self.stock_pos], below = self.stock[self.stock_pos + 1], kept, out
        if keep:
            kept, out = top, below
        else:
            kept, out = below, top
        self._hands[seat] = <uint64_t>self._hands[seat] | (1ULL << kept)
        self.discards.append(out)
        self.seen_discards[seat] = <uint64_t>self.seen_discards[seat] | (1ULL << out)
        self.stock_pos += 2
        self.draw_turn += 1
        self.c_next_draw()

    def _next_exchange(self):
        self.c_next_exchange()

    cdef void c_next_exchange(self) except *:
        if self.exchange_queue:
            self.to_move = self.exchange_queue[0]
            self.decision = _EXCHANGE
            return
        second = 1 - self.first
        self.bid_order = [second, self.first]
        self.bid_pos = 0
        self.c_next_bidder()

    def _exchange(self, long seat, returned):
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
        self.c_next_exchange()

    # -------------------------------------------------------------- playouts

    def play_out_hand(self, pick, rng=None):
        """Play every remaining card of the hand (see PureCore.play_out_hand)."""
        self.c_play_out(pick, rng, fast_rng(rng) if pick is None else NULL)

    cdef void c_play_out(self, object pick, object rng, arena_mt* mt) except *:
        cdef uint64_t hands[4]
        cdef int cards[4]
        cdef long n = self.players, seat = self.to_move, leader = self.leader
        cdef long win_card = self.win_card, win_seat = self.win_seat, hand_no = self.hand_number
        cdef long pos, played, i, card
        cdef uint64_t hand, legal, lead_mask = 0
        cdef bint broken = self.spades_broken, lead_breaks = self.rc.lead_breaks, lead_any = self.rc.lead_any
        cdef bint led_spade = False, live = pick is not None
        cdef long won[4]
        cdef list history = self.history, tricks = self.tricks, tricks_won = self.tricks_won
        cdef list trick = self.trick
        cdef list entries = _play_entries(hand_no)
        cdef list hands_list = self._hands
        for i in range(n):
            hands[i] = hands_list[i]
            won[i] = 0
        pos = len(trick)
        for i in range(pos):
            cards[i] = trick[i]
        played = len(tricks)
        if pos:
            lead_mask = suit_mask(cards[0])
            led_spade = cards[0] >= FIRST_SPADE
        uniform = None if pick is not None or mt != NULL else rng.random
        while True:
            hand = hands[seat]
            legal = legal_of(hand, pos, lead_mask, broken or lead_any)
            card = pick(seat, legal) if live else draw_card(mt, uniform, legal)
            history.append(play_entry(entries, hand_no, seat, card))
            hands[seat] = hand ^ (1ULL << card)
            if live:  # a pick may read the live hands, trick and tricks won
                hands_list[seat] = hands[seat]
                trick.append(card)
            cards[pos] = card
            if not pos:
                win_card = card
                win_seat = seat
                lead_mask = suit_mask(card)
                led_spade = card >= FIRST_SPADE
                if led_spade and lead_breaks:
                    broken = True
            else:
                if beats(card, win_card):
                    win_card = card
                    win_seat = seat
                if card >= FIRST_SPADE and not led_spade:
                    broken = True
            pos += 1
            if pos < n:
                seat = seat + 1 if seat + 1 < n else 0
                continue
            tricks.append(trick_of(leader, cards, n, win_seat))
            if live:
                tricks_won[win_seat] = <long>tricks_won[win_seat] + 1
                del trick[:]
            else:
                won[win_seat] += 1
            pos = 0
            leader = seat = win_seat
            played += 1
            if played == TRICKS_PER_HAND:
                break
        for i in range(n):
            hands_list[i] = hands[i]
            if not live and won[i]:
                tricks_won[i] = <long>tricks_won[i] + won[i]
        self.spades_broken = broken
        self.win_card = win_card
        self.win_seat = win_seat
        self.trick = []
        self.leader = leader
        self.to_move = leader
        self.c_finish_hand()

    def _random_hand(self, rng):
        """Random legal decisions until the current hand is scored (see PureCore._random_hand)."""
        cdef long hand = self.hand_number
        cdef arena_mt* mt = fast_rng(rng)
        cdef long seat
        if mt == NULL:
            while self.decision is not None and self.hand_number == hand:
                if self.decision is _PLAY:
                    self.c_play_out(None, rng, NULL)
                else:
                    self.apply(rng.choice(self.legal_actions()))
            return
        while self.decision is not None and self.hand_number == hand:
            kind = self.decision
            if kind is _PLAY:
                self.c_play_out(None, rng, mt)
            elif kind is _BID:
                self.c_bid(self.to_move, <long>arena_mt_below(mt, 14))
            elif kind is _BLIND_NIL:
                seat = self.to_move
                choice = arena_mt_below(mt, 2) == 1
                self.history.append(ActionEntry(self.hand_number, seat, kind, choice))
                self.c_decide_blind(seat, choice)
            elif kind is _DRAW:
                seat = self.to_move
                keep = arena_mt_below(mt, 2) == 0
                self.history.append(ActionEntry(self.hand_number, seat, kind, keep))
                self.c_draw(seat, keep)
            else:
                options = self.legal_actions()
                self.apply(options[arena_mt_below(mt, len(options))])

    # -------------------------------------------------------------- scoring

    def _finish_hand(self):
        self.c_finish_hand()

    cdef object c_score_team(self, long team, list bids, long long score_before, long long bags_before,
                             long long* score_after, long long* bags_after):
        cdef long n = self.players, seat, i, m
        cdef long long contract = 0, counted = 0, nil_bags = 0, tricks, value, overtricks, bags
        cdef long long contract_points, nil_points = 0, running, penalties, penalty_points, points
        cdef bint made, made_nil, blind
        cdef list nil_results = []
        m = 2 if n == 4 else 1
        for i in range(m):
            seat = team + 2 * i
            tricks = self.tricks_won[seat]
            if <long>bids[seat] == 0:
                blind = self.blind[seat]
                value = self.rc.blind_nil_value if blind else self.rc.nil_value
                made_nil = tricks == 0
                nil_results.append((seat, "blind_nil" if blind else "nil", made_nil, value if made_nil else -value))
                nil_points += value if made_nil else -value
                if self.rc.failed_to_contract:
                    counted += tricks
                else:
                    nil_bags += tricks
            else:
                contract += <long>bids[seat]
                counted += tricks
        made = counted >= contract
        if made:
            contract_points = 10 * contract
            overtricks = counted - contract
        else:
            contract_points = -10 * contract
            overtricks = 0
        bags = overtricks + nil_bags
        running = bags_before + bags
        if self.rc.bag_penalty:
            penalties = floordiv(running, self.rc.bag_threshold)
            running -= penalties * self.rc.bag_threshold
        else:
            penalties = 0
        penalty_points = -penalties * self.rc.bag_penalty
        points = contract_points + bags + nil_points + penalty_points
        score_after[0] = score_before + points
        bags_after[0] = running
        return arena_frozen(TeamHandScore, {
            "contract": contract, "counted_tricks": counted, "made": made,
            "contract_points": contract_points, "bags": bags, "bag_points": bags,
            "nil_results": tuple(nil_results), "penalties": penalties,
            "penalty_points": penalty_points, "points": points, "score_before": score_before,
            "score_after": score_before + points, "bags_before": bags_before, "bags_after": running,
        })

    cdef void c_finish_hand(self) except *:
        cdef long n = self.players
        cdef long long s0, s1, b0, b1
        cdef list bids = [b if b is not None else 0 for b in self.bids]
        t0 = self.c_score_team(0, bids, self.scores[0], self.bags[0], &s0, &b0)
        t1 = self.c_score_team(1, bids, self.scores[1], self.bags[1], &s1, &b1)
        self.hand_results.append(arena_frozen(HandResult, {
            "number": self.hand_number, "first": self.first, "bids": tuple(bids),
            "blind": tuple(self.blind), "tricks": tuple(self.tricks_won), "teams": (t0, t1),
            "exchanged": tuple(self.exchanged) if n == 2 else (), "played": tuple(self.tricks),
        }))
        self.scores = [s0, s1]
        self.bags = [b0, b1]
        ending = None
        if s0 != s1:
            if (s0 if s0 > s1 else s1) >= self.rc.target:
                ending = "target"
            elif self.rc.has_floor and (s0 if s0 < s1 else s1) <= self.rc.lose_floor:
                ending = "floor"
        if ending is None and self.hand_number >= self.rc.max_hands:
            ending = "max_hands"
        if ending is None:
            self.first = (self.first + 1) % n
            self.c_start_hand()
            return
        winner = None if s0 == s1 else (0 if s0 > s1 else 1)
        self.result = GameResult(ending, winner, (s0, s1), (b0, b1), self.hand_number)
        self.to_move = None
        self.decision = None


def first_dealer(seed, long n):
    """``chance_int(seed, "first") % n`` in C."""
    return first_seat(seed, n)


# ------------------------------------------------------------------ rollouts (Hard)


cdef struct Pos:
    uint64_t hands[4]
    int trick[4]
    int k
    int seat
    int won[4]
    int n
    bint broken
    bint lead_breaks
    bint lead_any


cdef struct Policy:
    int bids[4]
    int contract[2]
    bint any_nil
    double noise
    double* luck
    int nluck
    int at


cdef inline double next_luck(Policy* p) noexcept nogil:
    cdef double v = p.luck[p.at]
    p.at += 1
    if p.at == p.nluck:
        p.at = 0
    return v


cdef inline int lowest(uint64_t mask) noexcept nogil:
    """The lowest card, side suits before spades (ties: the lowest suit)."""
    cdef uint64_t pool = mask & NON_SPADE
    cdef int r
    cdef uint64_t bit
    if not pool:
        pool = mask
    r = low_index((pool | pool >> 13 | pool >> 26 | pool >> 39) & SUIT13)
    bit = 1ULL << r
    while not pool & bit:
        bit <<= 13
        r += 13
    return r


cdef inline int highest(uint64_t mask) noexcept nogil:
    """The highest card of the highest rank (ties: the highest suit)."""
    cdef int r = high_index((mask | mask >> 13 | mask >> 26 | mask >> 39) & SUIT13) + 39
    cdef uint64_t bit = 1ULL << r
    while not mask & bit:
        bit >>= 13
        r -= 13
    return r


cdef int policy_pick(Pos* s, Policy* p, int seat, uint64_t legal) noexcept nogil:
    """arena_sdk.bots.rollout.make_pick's ``pick`` in C: the same card from the same numbers."""
    cdef int n = s.n, team, won, k, partner, target, top, top_pos, top_seat, i, c, o, d, steps
    cdef bint nil, need, partner_nil, played, four = n == 4
    cdef uint64_t winners, losers, follow
    if not legal & (legal - 1):
        return high_index(legal)
    if next_luck(p) < p.noise:
        steps = <int>(next_luck(p) * popcount(legal))
        while steps:
            legal &= legal - 1
            steps -= 1
        return low_index(legal)
    team = seat % 2
    nil = p.bids[seat] == 0 and s.won[seat] == 0
    won = s.won[team] + s.won[team + 2] if four else s.won[team]
    need = p.contract[team] - won > 0
    k = s.k
    partner = (seat + 2) % 4 if four else -1
    partner_nil = p.any_nil and partner >= 0 and p.bids[partner] == 0 and s.won[partner] == 0
    target = -1
    if p.any_nil and not nil and not partner_nil:
        d = 1
        while d < n:
            o = (seat + d) % n
            if p.bids[o] == 0 and s.won[o] == 0:
                target = o
                break
            d += 2
    if not k:
        if nil or target >= 0 or (not need and not partner_nil):
            return lowest(legal)
        return highest(legal & NON_SPADE if legal & NON_SPADE else legal)
    top = s.trick[0]
    top_pos = 0
    for i in range(1, k):
        c = s.trick[i]
        if (c > top and c // 13 == top // 13) or (c >= 39 and top < 39):
            top = c
            top_pos = i
    top_seat = ((seat - k + top_pos) % n + n) % n
    winners = legal & (SUIT13 << (13 * (top // 13))) & (0 - (2ULL << top))
    if top < 39:
        winners |= legal & ~NON_SPADE
    losers = legal & ~winners
    if nil:
        if losers:
            return highest(losers)
        return lowest(legal) if k < n - 1 else highest(legal)
    if partner_nil:
        played = ((partner - seat) % n + n) % n > n - 1 - k
        if not played or top_seat == partner:
            if winners:
                follow = winners & suit_mask(s.trick[0])
                if not played:
                    return highest(follow if follow else winners)
                return lowest(winners)
            return lowest(legal)
    if target >= 0:
        played = ((target - seat) % n + n) % n > n - 1 - k
        if played and top_seat == target:
            if losers:
                return highest(losers)
        elif not played:
            return lowest(legal)
    if not need:
        if losers:
            return highest(losers)
        return lowest(legal) if k < n - 1 else highest(legal)
    if n == 4 and top_seat == partner and not partner_nil:
        return lowest(legal)
    if winners:
        if k == n - 1:
            return lowest(winners)
        follow = winners & suit_mask(s.trick[0])
        return highest(follow) if follow else lowest(winners)
    return lowest(legal)


cdef void pos_play(Pos* s, int card) noexcept nogil:
    """arena_sdk.bots.simulate.Position.play in C."""
    cdef int seat = s.seat, n = s.n, top, at, i, winner
    s.hands[seat] ^= 1ULL << card
    if s.k:
        if card >= FIRST_SPADE and s.trick[0] < FIRST_SPADE:
            s.broken = True
    elif card >= FIRST_SPADE and s.lead_breaks:
        s.broken = True
    s.trick[s.k] = card
    s.k += 1
    if s.k < n:
        s.seat = seat + 1 if seat + 1 < n else 0
        return
    top = s.trick[0]
    at = 0
    for i in range(1, n):
        if beats(s.trick[i], top):
            top = s.trick[i]
            at = i
    winner = ((seat - (n - 1 - at)) % n + n) % n
    s.won[winner] += 1
    s.k = 0
    s.seat = winner


cdef void pos_rollout(Pos* s, Policy* p) noexcept nogil:
    """arena_sdk.bots.simulate.rollout with the policy, in C."""
    cdef int n = s.n, seat = s.seat, k = s.k, win_card = 0, win_seat = 0, win_pos = 0, i, card
    cdef uint64_t hand, legal, lead_mask = 0
    cdef bint broken = s.broken
    if k:
        lead_mask = suit_mask(s.trick[0])
        win_card = s.trick[0]
        for i in range(1, k):
            if beats(s.trick[i], win_card):
                win_card = s.trick[i]
                win_pos = i
        win_seat = ((seat - k + win_pos) % n + n) % n
    while True:
        hand = s.hands[seat]
        if not hand:
            break
        if k:
            legal = hand & lead_mask
            if not legal:
                legal = hand
        elif broken or s.lead_any or not hand & NON_SPADE:
            legal = hand
        else:
            legal = hand & NON_SPADE
        s.k = k
        card = policy_pick(s, p, seat, legal)
        s.hands[seat] = hand ^ (1ULL << card)
        s.trick[k] = card
        if not k:
            win_card = card
            win_seat = seat
            lead_mask = suit_mask(card)
            if card >= FIRST_SPADE and s.lead_breaks:
                broken = True
        else:
            if (card // 13 == win_card // 13 and card > win_card) or (card >= FIRST_SPADE and FIRST_SPADE > win_card):
                win_card = card
                win_seat = seat
            if card >= FIRST_SPADE and FIRST_SPADE > s.trick[0]:
                broken = True
        k += 1
        if k < n:
            seat = seat + 1 if seat + 1 < n else 0
            continue
        s.won[win_seat] += 1
        k = 0
        seat = win_seat
    s.k = k
    s.seat = seat
    s.broken = broken


cdef void load_pos(object pos, Pos* s) except *:
    cdef int i
    s.n = pos.n
    for i in range(4):
        s.hands[i] = 0
        s.won[i] = 0
    for i, h in enumerate(pos.hands):
        s.hands[i] = h
    for i, w in enumerate(pos.won):
        s.won[i] = w
    s.k = len(pos.trick)
    for i, c in enumerate(pos.trick):
        s.trick[i] = c
    s.seat = pos.seat
    s.broken = pos.broken
    s.lead_breaks = pos.lead_breaks
    s.lead_any = pos.lead_any


cdef void load_policy(Policy* p, object bids, int n, object luck, double* store, double noise) except *:
    cdef int i
    p.contract[0] = 0
    p.contract[1] = 0
    p.any_nil = False
    for i in range(4):
        p.bids[i] = 0
    for i in range(n):
        p.bids[i] = bids[i]
        p.contract[i % 2] += p.bids[i]
        if p.bids[i] == 0:
            p.any_nil = True
    p.nluck = len(luck)
    if p.nluck < 1 or p.nluck > LUCK_MAX:
        raise ValueError(f"luck must hold 1 to {LUCK_MAX} numbers, got {p.nluck}")
    for i in range(p.nluck):
        store[i] = luck[i]
    p.luck = store
    p.at = 0
    p.noise = noise


cdef tuple won_tuple(Pos* s):
    return tuple([s.won[i] for i in range(s.n)])


def rollout(pos, bids, luck, double noise=0.1):
    """``simulate.rollout(pos, bids, itertools.cycle(luck).__next__, noise)`` in C: the tricks won.

    ``pos`` (a :class:`~arena_sdk.bots.simulate.Position`) is played to the end
    of the hand and updated as the pure rollout leaves it.
    """
    cdef Pos s
    cdef Policy p
    cdef double store[LUCK_MAX]
    load_pos(pos, &s)
    load_policy(&p, bids, s.n, luck, store, noise)
    pos_rollout(&s, &p)
    pos.hands[:] = [s.hands[i] for i in range(s.n)]
    pos.won[:] = [s.won[i] for i in range(s.n)]
    del pos.trick[:]
    pos.seat = s.seat
    pos.broken = s.broken
    return won_tuple(&s)


def rollout_cards(pos, cards, bids, luck, double noise=0.1):
    """For each card: a copy of ``pos``, the card played, then :func:`rollout` (``pos`` is untouched).

    What Hard does per world, ``[rollout(copy-and-play(c), bids, cycle(luck)) for c in cards]``,
    in one call; each card's rollout replays ``luck`` from its start.
    """
    cdef Pos start, s
    cdef Policy p
    cdef double store[LUCK_MAX]
    load_pos(pos, &start)
    load_policy(&p, bids, start.n, luck, store, noise)
    out = []
    for c in cards:
        s = start
        pos_play(&s, c)
        p.at = 0
        pos_rollout(&s, &p)
        out.append(won_tuple(&s))
    return out


# ------------------------------------------------------------------ deal sampling


cdef double c_quick_tricks(uint64_t hand, int players) noexcept nogil:
    """arena_sdk.sampling.quick_tricks on a card mask (the same float operations in the same order)."""
    cdef double total = 0.0
    cdef int suit, n, hi, honours
    cdef uint64_t bits
    for suit in range(4):
        bits = (hand >> (13 * suit)) & SUIT13
        n = popcount(bits)
        if suit == 3:
            honours = popcount(bits >> 11)
            if (bits >> 10) & 1 and n >= 3:
                total += <double>honours + 0.6
            else:
                total += <double>honours
            hi = popcount(bits >> 10)
            if n - 3 - hi > 0:
                total += 0.8 * (n - 3 - hi)
            else:
                total += 0.8 * 0
            continue
        if (bits >> 12) & 1:
            total += 1.0 if n <= 5 else 0.7
        if (bits >> 11) & 1 and n >= 2:
            total += 0.7
        if (bits >> 10) & 1 and n >= 3:
            total += 0.3
    if players == 2:
        total *= 1.1
    return total


def quick_tricks(hand, int players=4):
    """:func:`arena_sdk.sampling.quick_tricks` in C (``hand``: card indices)."""
    cdef uint64_t mask = 0
    for c in hand:
        mask |= 1ULL << <int>c
    return c_quick_tricks(mask, players)


cdef inline double honour_likelihood(uint64_t hand, int players, int bid, double sigma) noexcept nogil:
    cdef double est = c_quick_tricks(hand, players)
    if bid == 0:
        return exp(-pow(est, 2.0) / (2 * pow(1.0, 2.0)))
    return exp(-pow(bid - est, 2.0) / (2 * pow(sigma, 2.0)))


def honour_weight(list hands, list bids, list skip, int players, double sigma):
    """The honour bid model's weight of a world: the product over bidders in seat order.

    ``hands[s]``: seat ``s``'s cards at the start of the hand as a mask;
    ``skip[s]``: leave the seat out (the sampling seat, no bid yet, blind nil).
    """
    cdef double w = 1.0
    cdef int s
    for s in range(players):
        if skip[s]:
            continue
        w *= honour_likelihood(<uint64_t>hands[s], players, bids[s], sigma)
    return w


def choose_weighted(rng, list weights):
    """``rng.choices(range(len(weights)), weights)[0]`` (random.Random's algorithm; a positive total)."""
    cdef arena_mt* mt = fast_rng(rng)
    cdef double total = 0.0, x
    cdef int n = len(weights), lo, hi, mid
    cdef double cum[64]
    if mt == NULL or n > 64:
        return rng.choices(range(n), weights)[0]
    for lo in range(n):
        total = total + <double>weights[lo] if lo else <double>weights[0]
        cum[lo] = total
    x = arena_mt_random(mt) * (total + 0.0)
    lo = 0
    hi = n - 1
    while lo < hi:  # bisect_right(cum, x, 0, n - 1)
        mid = (lo + hi) // 2
        if x < cum[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def randbelow(rng, n):
    """``rng._randbelow(n)`` (``rng.randrange(n)`` for n > 0), in place for random.Random."""
    cdef arena_mt* mt = fast_rng(rng)
    if mt != NULL and 0 < n < (1 << 64):
        return arena_mt_below(mt, n)
    return rng.randrange(n)


def shuffle(rng, list x):
    """``rng.shuffle(x)`` (random.Random's algorithm), in place for random.Random."""
    cdef arena_mt* mt = fast_rng(rng)
    cdef Py_ssize_t i, j
    if mt == NULL:
        rng.shuffle(x)
        return
    for i in range(len(x) - 1, 0, -1):
        j = <Py_ssize_t>arena_mt_below(mt, i + 1)
        x[i], x[j] = x[j], x[i]


def randoms(rng, int n):
    """``[rng.random() for _ in range(n)]`` (drawn in place for random.Random)."""
    cdef arena_mt* mt = fast_rng(rng)
    if mt == NULL:
        return [rng.random() for _ in range(n)]
    return [arena_mt_random(mt) for _ in range(n)]


def honour_weight_of(list cards_by_seat, list played_masks, list bids, list skip, int players, double sigma):
    """:func:`honour_weight` from each seat's hidden cards (lists of indices) and its played cards (masks)."""
    cdef double w = 1.0
    cdef int s
    cdef uint64_t mask
    for s in range(players):
        if skip[s]:
            continue
        mask = played_masks[s]
        for c in <list>cards_by_seat[s]:
            mask |= 1ULL << <int>c
        w *= honour_likelihood(mask, players, bids[s], sigma)
    return w


cdef Py_ssize_t bisect_right_u64(list a, uint64_t x) except -1:
    cdef Py_ssize_t lo = 0, hi = len(a), mid
    while lo < hi:
        mid = (lo + hi) // 2
        if x < <uint64_t>a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def sample_groups(rng, list groups_cards, options_for, tuple caps, int holders):
    """The draw of ``WorldSampler.sample_hidden``: each holder's cards, by holder index.

    Per group ``gi``: ``cumulative, rows = options_for(gi, caps)``; the split
    ``rows[bisect_right(cumulative, rng.randrange(cumulative[-1]))]`` (counts per
    holder, room after), the group's cards shuffled with ``rng.shuffle`` and
    dealt out in holder order.  The same numbers and cards as the Python draw.
    """
    return c_sample_groups(fast_rng(rng), rng, groups_cards, options_for, caps, holders)


cdef list c_sample_groups(arena_mt* mt, object rng, list groups_cards, object options_for, tuple caps, int holders):
    cdef list out = [[] for _ in range(holders)]
    cdef list cards, cumulative, rows
    cdef Py_ssize_t gi, i, j, pos, x, h
    cdef uint64_t total, pick
    for gi in range(len(groups_cards)):
        cumulative, rows = options_for(gi, caps)
        last = cumulative[len(cumulative) - 1]
        if mt == NULL or last >= (1 << 64):
            pick_obj = rng.randrange(last)
            i = 0
            while i < len(cumulative) and not pick_obj < cumulative[i]:
                i += 1
        else:
            total = last
            pick = arena_mt_below(mt, total)
            i = bisect_right_u64(cumulative, pick)
        counts, after = rows[i]
        cards = list(groups_cards[gi])
        if mt == NULL:
            rng.shuffle(cards)
        else:
            for i in range(len(cards) - 1, 0, -1):
                j = <Py_ssize_t>arena_mt_below(mt, i + 1)
                cards[i], cards[j] = cards[j], cards[i]
        pos = 0
        for h in range(holders):
            x = counts[h]
            if x:
                (<list>out[h]).extend(cards[pos:pos + x])
                pos += x
        caps = after
    return out


def draw_hands(rng, list groups_cards, options_for, tuple caps, list holder_seats, int oversample,
               bint weighted, list played_masks, list bids, list skip, double sigma, list fixed):
    """``WorldSampler.sample_allocation`` then ``_hands``, as seat card masks (four players).

    ``holder_seats``: the seat of each holder; ``fixed[s]``: the mask of a seat
    that is no holder (the sampling seat's own cards).  With ``weighted`` (the
    honour bid model of ``sigma``): ``oversample`` draws, each weighted as
    ``DealSampler._weight`` weighs it, one chosen as ``rng.choices`` chooses;
    else one draw.  The same random numbers and the same hands as the Python path.
    """
    cdef arena_mt* mt = fast_rng(rng)
    cdef int n = 4, k, s, h, count = oversample if weighted else 1
    cdef uint64_t masks[16][4]
    cdef double weights[16]
    cdef double w, total
    cdef list drawn
    if count > 16 or mt == NULL:
        return None
    for k in range(count):
        drawn = c_sample_groups(mt, rng, groups_cards, options_for, caps, len(holder_seats))
        for s in range(n):
            masks[k][s] = <uint64_t>fixed[s]
        for h in range(len(holder_seats)):
            s = holder_seats[h]
            for c in <list>drawn[h]:
                masks[k][s] |= 1ULL << <int>c
        if weighted:
            w = 1.0
            for s in range(n):
                if not skip[s]:
                    w *= honour_likelihood(masks[k][s] | <uint64_t>played_masks[s], n, bids[s], sigma)
            weights[k] = w
    k = 0
    if weighted:
        total = 0.0
        for h in range(count):
            total += weights[h]
        if total > 0:
            k = choose_index(mt, weights, count)
    return [masks[k][0], masks[k][1], masks[k][2], masks[k][3]]


cdef int choose_index(arena_mt* mt, double* weights, int n):
    """random.Random.choices(range(n), weights)[0] with the generator in place."""
    cdef double cum[16]
    cdef double total = 0.0, x
    cdef int lo, hi, mid
    for lo in range(n):
        total = total + weights[lo] if lo else weights[0]
        cum[lo] = total
    x = arena_mt_random(mt) * (total + 0.0)
    lo = 0
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if x < cum[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def masks_of(list card_lists):
    """The card mask of each list of card indices."""
    cdef uint64_t m
    out = []
    for cards in card_lists:
        m = 0
        for c in cards:
            m |= 1ULL << <int>c
        out.append(m)
    return out


cdef int _assign(CoreState dst, CoreState src) except -1:
    """Every field of ``src`` into ``dst``, the mutable ones copied (clone and restore share it)."""
    dst._undealt = src._undealt
    dst._rules = src._rules
    dst.rc = src.rc
    dst.seed = src.seed
    dst.players = src.players
    dst.decks = src.decks
    dst.scores = src.scores[:]
    dst.bags = src.bags[:]
    dst.hand_number = src.hand_number
    dst.first = src.first
    dst._hands = src._hands[:]
    dst.bids = src.bids[:]
    dst.blind = src.blind[:]
    dst.blind_decided = src.blind_decided[:]
    dst.blind_eligible = src.blind_eligible[:]
    dst.tricks_won = src.tricks_won[:]
    dst.trick = src.trick[:]
    dst.leader = src.leader
    dst.win_card = src.win_card
    dst.win_seat = src.win_seat
    dst.spades_broken = src.spades_broken
    dst.tricks = src.tricks[:]
    dst.to_move = src.to_move
    dst.decision = src.decision
    dst.bid_order = src.bid_order
    dst.bid_pos = src.bid_pos
    dst.stock = src.stock
    dst.stock_pos = src.stock_pos
    dst.discards = src.discards[:]
    dst.seen_discards = src.seen_discards[:]
    dst.exchange_queue = src.exchange_queue[:]
    dst.exchanged = src.exchanged[:]
    dst.draw_turn = src.draw_turn
    dst.hand_results = src.hand_results[:]
    dst.history = src.history[:]
    dst.result = src.result
    dst._deck_log = dict(src._deck_log)
    dst.start_scores = src.start_scores
    dst.start_bags = src.start_bags
    dst.first_of_game = src.first_of_game
    return 0
