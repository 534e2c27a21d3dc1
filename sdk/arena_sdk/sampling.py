"""Deal sampling: full game states consistent with what one seat knows.

A search bot cannot see the other hands, so it plays its candidate moves in
many *worlds*: complete deals that agree with everything its seat has seen.
:class:`DealSampler` draws such worlds from a :class:`~arena_sdk.view.View`
(or an engine :class:`~arena_sdk.engine.SeatView`) and returns ordinary
engine :class:`~arena_sdk.engine.GameState` objects at the same decision, so
they can be played forward with ``apply``, ``play_out_hand`` or ``clone``.

What a world respects:

- your own cards, every card played this hand and who played it;
- voids: a seat that did not follow suit holds no card of that suit;
- a spade led while spades were not broken (where the rule restricts spade
  leads) means the leader held nothing but spades then;
- the two-player draw: the discards you saw stay in the discards, the
  offered card is on the stock, the stock and the unseen discards are random;
- the two-player blind-nil exchange: an opponent that gave back ``k`` cards
  after your seen discards were in the pile drew ``k`` of the 26 discards at
  random, so it holds (or has played) at most ``k`` of them, and how many
  follows that draw's chances (see below).  Cards you gave back in your own
  exchange after the opponent's came too late: it cannot hold them;
- blind nil: a hand you have not looked at is unknown to you too;
- two players: what the opponent has seen (its draw discards, or the cards it
  gave back in a blind-nil exchange) is set in the world as the rules make it.

Without a bid model every consistent world is equally likely, except after
that exchange: there a world's weight is the draw's chance of putting ``j``
of your seen discards in the opponent's hand (hypergeometric), shared
equally among the worlds with that ``j``; which cards the opponent gave back
is its own choice and is not modelled.  The sampler counts the (weighted)
ways exactly (per suit, by dynamic programming over how many cards of each
suit each hand holds) and draws from that count, so the draw is exact,
however many voids there are.  With a bid model (:func:`honour_bid_model`,
or your own ``(rules, seat, start_hand, bid) -> likelihood``) worlds are
re-weighted by how well each hand explains its bid
(sampling-importance-resampling).

>>> sampler = DealSampler(view)                 # doctest: +SKIP
>>> worlds = sampler.states(32, rng)            # doctest: +SKIP
>>> worlds[0].hands                             # doctest: +SKIP

See docs/sampling.md for a search bot built on it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from arena_sdk.engine import CARDS, Card, Decision, GameState, Ruleset, Trick
from arena_sdk.engine.cards import NUM_CARDS, mask_of
from arena_sdk.engine.core import compiled as _compiled

#: The compiled core's helpers (the same random numbers as ``random.Random``'s methods), or None.
_fast: Any = _compiled

#: ``(rules, seat, hand at the start of the hand, bid) -> relative likelihood``.
BidModel = Callable[[Ruleset, int, Sequence[int], int], float]

DISCARD = "discard"
STOCK = "stock"
Holder = int | str


class InconsistentView(ValueError):
    """The view admits no deal at all (it contradicts itself)."""


def _played_by(players: int, tricks: Sequence[Trick], current: Sequence[tuple[int, Card]]) -> list[list[int]]:
    out: list[list[int]] = [[] for _ in range(players)]
    for t in tricks:
        for i, c in enumerate(t.cards):
            out[(t.leader + i) % players].append(int(c))
    for seat, c in current:
        out[seat].append(int(c))
    return out


def voids_of(view: Any) -> list[set[int]]:
    """Suits (0 clubs .. 3 spades) each seat is known to lack, from this hand's play."""
    n = view.rules.players
    voids: list[set[int]] = [set() for _ in range(n)]
    lead_rule = view.rules.spade_lead
    broken = False
    plays: list[list[tuple[int, int]]] = [
        [((t.leader + i) % n, int(c)) for i, c in enumerate(t.cards)] for t in view.tricks
    ]
    if view.current_trick:
        plays.append([(s, int(c)) for s, c in view.current_trick])
    for trick in plays:
        leader, lead = trick[0]
        led = lead // 13
        if led == 3 and not broken and lead_rule != "always":
            voids[leader].update((0, 1, 2))  # it held nothing but spades
        if led == 3 and lead_rule == "broken":
            broken = True
        for seat, card in trick[1:]:
            if card // 13 != led:
                voids[seat].add(led)
                if card // 13 == 3:
                    broken = True
    return voids


class _Group:
    """Hidden cards that share the same possible holders."""

    __slots__ = ("cards", "allowed", "capped")

    def __init__(self, cards: list[int], allowed: tuple[int, ...], capped: int | None) -> None:
        self.cards = cards
        self.allowed = allowed  # holder indices
        self.capped = capped  # holder index whose share also uses up the cap, or None


class DealSampler:
    """Draws worlds consistent with one seat's view; see the module docstring.

    ``view`` is the SDK :class:`~arena_sdk.view.View` a bot receives (or an
    engine ``SeatView``) at a decision of that seat.  Building the sampler
    does the counting once; each draw is then cheap.
    """

    def __init__(self, view: Any, bid_model: BidModel | None = None, *, oversample: int = 4) -> None:
        self.view = view
        self.rules: Ruleset = view.rules
        self.n = n = self.rules.players
        self.me: int = view.seat
        self.bid_model = bid_model
        self.oversample = max(1, oversample)
        kind = getattr(view, "kind", None) or getattr(view, "decision", None)
        self.kind: Decision | None = kind
        hidden = getattr(view, "hand_hidden", None)
        self.hand_hidden = (view.hand is None) if hidden is None else bool(hidden)
        self.my_hand = [] if self.hand_hidden or view.hand is None else [int(c) for c in view.hand]
        self.played = _played_by(n, view.tricks, view.current_trick)
        self.voids = voids_of(view)
        self.draw_turns = 0  # two players: completed draw turns (26 once the draw is over)
        self.offered: int | None = None
        # A deal's weight by the cap it leaves unused (see _exchange_draw_weights); 1: no exchange.
        self._final: tuple[int, ...] = (1,)
        self.weighted = False  # True when deals are weighted by the opponent's exchange draw
        self._setup()
        self._memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self._count: int | None = None
        self.total_weight = self._ways(0, tuple(self.sizes) + (self.cap,))
        if not self.weighted:
            self._count = self.total_weight  # every deal weighs 1: the total is the count
        if self.total_weight == 0:
            raise InconsistentView(f"no deal is consistent with the view of seat {self.me}")
        self._template: GameState | None = None
        # The honour bid model's inputs in C (see _weight), made on first use.
        self._skip: list[bool] | None = None
        self._played_masks: list[int] = []
        self._bids0: list[int] = []

    # ------------------------------------------------------------------ knowledge

    def _setup(self) -> None:
        n, me = self.n, self.me
        known = set(self.my_hand)
        for cards in self.played:
            known.update(cards)
        seen = {int(c) for c in self.view.seen_discards} - known
        holders: list[Holder] = []
        sizes: list[int] = []
        fixed_discards: list[int] = []
        self.cap = 0
        capped_seen = False
        if n == 4:
            for s in range(4):
                if s != me or self.hand_hidden:
                    holders.append(s)
                    sizes.append(13 - len(self.played[s]))
        else:
            opp = 1 - me
            in_draw = self.kind in (Decision.DRAW, Decision.BLIND_NIL)
            if in_draw:
                mine = len(self.my_hand)
                t = 2 * mine + (0 if self.view.first == me else 1)
                self.draw_turns = t
                opp_kept = t - mine
                offered = getattr(self.view, "offered_card", None)
                self.offered = None if offered is None else int(offered)
                if self.offered is not None:
                    known.add(self.offered)
                holders += [opp, DISCARD, STOCK]
                sizes += [opp_kept, opp_kept, NUM_CARDS - 2 * t - (self.offered is not None)]
                fixed_discards = sorted(seen)
                known |= seen
            else:
                self.draw_turns = 26
                holders += [opp, DISCARD]
                sizes += [13 - len(self.played[opp]), 26]
                if self._opponent_drew_from_my_seen_discards():
                    capped_seen = True
                    self.weighted = True
                    self._exchange_draw_weights()
                else:
                    fixed_discards = sorted(seen)
                    known |= seen
                    sizes[1] -= len(seen)
        self.holders = holders
        self.sizes = sizes
        self.fixed_discards = fixed_discards
        groups: list[_Group] = []
        seen_free = seen if capped_seen else set()
        for suit in range(4):
            allowed = tuple(
                i for i, h in enumerate(holders) if not (isinstance(h, int) and suit in self.voids[h])
            )
            free = [c for c in range(suit * 13, suit * 13 + 13) if c not in known and c not in seen_free]
            if free:
                groups.append(_Group(free, allowed, None))
            capped = [c for c in range(suit * 13, suit * 13 + 13) if c in seen_free]
            if capped:
                opp_index = holders.index(1 - me)
                allowed_c = tuple(i for i in allowed if holders[i] in (1 - me, DISCARD))
                groups.append(_Group(capped, allowed_c, opp_index if opp_index in allowed_c else None))
        # Suits with the same possible holders count as one group: with no
        # voids shown that is a single group, and the counting is immediate.
        merged: dict[tuple[tuple[int, ...], int | None], _Group] = {}
        for g in groups:
            key = (g.allowed, g.capped)
            if key in merged:
                merged[key].cards.extend(g.cards)
            else:
                merged[key] = g
        self.groups = list(merged.values())

    def _opponent_drew_from_my_seen_discards(self) -> bool:
        """Two players, after the draw: did the opponent draw from a pile holding my seen discards?

        My seen discards are the 13 I threw away in the draw or, if I bid
        blind nil, the cards I gave back in my exchange.  The first player
        exchanges first: cards I gave back after the opponent's exchange came
        too late for it to draw them.
        """
        view, opp = self.view, 1 - self.me
        if not view.exchanged or not view.exchanged[opp]:
            return False
        return not view.blind[self.me] or view.first == self.me

    def _exchange_draw_weights(self) -> None:
        """The opponent drew ``k`` cards from a pile holding my seen discards: weight by its draw.

        It drew ``k`` of the 26 discards, ``s`` of which I had seen, so the
        number ``j`` of my seen discards it holds (or has played) is
        hypergeometric: ``C(s, j) C(26 - s, k - j) / C(26, k)``.  Given ``j``,
        the rest of its hand is any ``13 - j`` of the ``u = 39 - s`` cards that
        are neither mine nor seen, all alike (the cards it kept blind and
        those it drew are random; which ones it gave back is its own choice,
        which the sampler does not model).  Uniform counting gives each value
        of ``j`` the weight ``C(s, j) C(u, 13 - j)`` instead, so each deal is
        weighted by ``C(26 - s, k - j) / C(u, 13 - j)``, scaled to integers so
        that the counting and the draw stay exact.  ``self.cap`` is what the
        opponent's hidden cards may still hold: ``k`` less the ones it played.
        """
        view, opp = self.view, 1 - self.me
        k = view.exchanged[opp]
        all_seen = {int(c) for c in view.seen_discards}
        s = len(all_seen)
        played_seen = len(all_seen.intersection(self.played[opp]))
        self.cap = k - played_seen
        if self.cap < 0:
            raise InconsistentView(
                f"the opponent played {played_seen} of my seen discards but drew only {k}"
            )
        u = NUM_CARDS - 13 - s
        top = min(k, s)
        scale = math.lcm(*(math.comb(u, 13 - j) for j in range(top + 1)))
        weight = [
            math.comb(26 - s, k - j) * (scale // math.comb(u, 13 - j)) for j in range(top + 1)
        ]
        # Indexed by the cap left over once the hidden cards are placed: j = played + (cap - left).
        self._final = tuple(
            weight[played_seen + self.cap - left] if played_seen + self.cap - left <= top else 0
            for left in range(self.cap + 1)
        )

    # ------------------------------------------------------------------ exact counting

    def _compositions(self, g: _Group, caps: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
        """Ways to split group ``g`` over its holders within ``caps``: (counts, multinomial)."""
        k = len(g.cards)
        allowed = g.allowed
        out: list[tuple[tuple[int, ...], int]] = []
        counts = [0] * len(caps)

        def rec(i: int, left: int, coeff: int) -> None:
            if i == len(allowed) - 1:
                h = allowed[i]
                limit = caps[h]
                if g.capped == h:
                    limit = min(limit, caps[-1])
                if left <= limit:
                    counts[h] = left
                    out.append((tuple(counts), coeff))
                    counts[h] = 0
                return
            h = allowed[i]
            limit = min(left, caps[h])
            if g.capped == h:
                limit = min(limit, caps[-1])
            for x in range(limit + 1):
                counts[h] = x
                rec(i + 1, left - x, coeff * math.comb(left, x))
            counts[h] = 0

        if not allowed:
            return []
        rec(0, k, 1)
        return out

    def _after(self, g: _Group, caps: tuple[int, ...], counts: tuple[int, ...]) -> tuple[int, ...]:
        new = [c - x for c, x in zip(caps[:-1], counts[: len(caps) - 1], strict=False)]
        cap = caps[-1] - (counts[g.capped] if g.capped is not None else 0)
        return (*new, cap)

    def _ways(self, gi: int, caps: tuple[int, ...]) -> int:
        """Weighted ways to place groups ``gi..`` within ``caps`` (sizes left, then cap left)."""
        if gi == len(self.groups):
            return self._final[caps[-1]] if not any(caps[:-1]) else 0
        key = (gi, caps)
        got = self._memo.get(key)
        if got is not None:
            return got
        g = self.groups[gi]
        total = 0
        for counts, coeff in self._compositions(g, caps):
            total += coeff * self._ways(gi + 1, self._after(g, caps, counts))
        self._memo[key] = total
        return total

    @property
    def count(self) -> int:
        """The number of deals consistent with the view (each counted once, whatever its weight)."""
        if self._count is None:
            final, memo = self._final, self._memo
            self._final, self._memo = tuple(1 if w else 0 for w in final), {}
            try:
                self._count = self._ways(0, tuple(self.sizes) + (self.cap,))
            finally:
                self._final, self._memo = final, memo
        return self._count

    def sample_hidden(self, rng: random.Random) -> dict[Holder, list[int]]:
        """One allocation of the hidden cards, holder -> cards, without the bid model.

        Uniform over the consistent deals, or weighted by the opponent's
        exchange draw after a two-player blind-nil exchange.
        """
        caps = tuple(self.sizes) + (self.cap,)
        out: dict[Holder, list[int]] = {h: [] for h in self.holders}
        for gi, g in enumerate(self.groups):
            options = []
            for counts, coeff in self._compositions(g, caps):
                after = self._after(g, caps, counts)
                w = coeff * self._ways(gi + 1, after)
                if w:
                    options.append((w, counts, after))
            total = sum(w for w, _, _ in options)
            pick = _randbelow(rng, total)
            for w, counts, after in options:
                if pick < w:
                    break
                pick -= w
            cards = g.cards[:]
            _shuffle(rng, cards)
            pos = 0
            for h, x in enumerate(counts[: len(self.holders)]):
                if x:
                    out[self.holders[h]].extend(cards[pos : pos + x])
                    pos += x
            caps = after
        if DISCARD in out:
            out[DISCARD].extend(self.fixed_discards)
        return out

    # ------------------------------------------------------------------ weighting

    def _weight(self, alloc: dict[Holder, list[int]]) -> float:
        model = self.bid_model
        if model is None:
            return 1.0
        sigma = getattr(model, "honour_sigma", None)
        if sigma is not None and _fast is not None:  # the honour model, computed in C (the same floats)
            if self._skip is None:
                self._skip = [s == self.me or self.view.bids[s] is None or bool(self.view.blind[s]) for s in range(self.n)]
                self._played_masks = [mask_of(p) for p in self.played]
                self._bids0 = [b if b is not None else 0 for b in self.view.bids]
            cards = [alloc.get(s, []) for s in range(self.n)]
            return _fast.honour_weight_of(cards, self._played_masks, self._bids0, self._skip, self.n, sigma)
        w = 1.0
        for s in range(self.n):
            bid = self.view.bids[s]
            if s == self.me or bid is None or self.view.blind[s]:
                continue
            start = alloc.get(s, []) + self.played[s]
            w *= model(self.rules, s, start, bid)
        return w

    def sample_allocation(self, rng: random.Random) -> dict[Holder, list[int]]:
        """One allocation, re-weighted by the bid model when there is one."""
        if self.bid_model is None:
            return self.sample_hidden(rng)
        candidates = [self.sample_hidden(rng) for _ in range(self.oversample)]
        weights = [self._weight(a) for a in candidates]
        if sum(weights) <= 0:
            return candidates[0]
        if _fast is not None:
            return candidates[_fast.choose_weighted(rng, weights)]
        return rng.choices(candidates, weights)[0]

    # ------------------------------------------------------------------ states

    def sample(self, rng: random.Random) -> GameState:
        """One world as an engine state at the same decision as the view."""
        return self._state(self.sample_allocation(rng), rng)

    def states(self, count: int, rng: random.Random) -> list[GameState]:
        """``count`` worlds (independent draws)."""
        return [self.sample(rng) for _ in range(count)]

    def _hands(self, alloc: dict[Holder, list[int]]) -> list[list[int]]:
        """Current hands per seat in a world."""
        hands = []
        for s in range(self.n):
            if s == self.me and not self.hand_hidden:
                hands.append(list(self.my_hand))
            else:
                hands.append(list(alloc.get(s, [])))
        return hands

    def _state(self, alloc: dict[Holder, list[int]], rng: random.Random) -> GameState:
        hands = self._hands(alloc)
        in_draw = self.n == 2 and self.draw_turns < 26
        if self._template is None or in_draw:
            state = self._build(hands, alloc, rng)
            if not in_draw:
                self._template = state.clone()
            return state
        state = self._template.clone()
        if _fast is not None:
            state.hands[:] = _fast.masks_of(hands)
        else:
            for s in range(self.n):
                mask = 0
                for c in hands[s]:
                    mask |= 1 << c
                state.hands[s] = mask
        if self.n == 2:
            state.discards = list(alloc[DISCARD])
            state.seen_discards[1 - self.me] = self._opponent_seen(alloc, rng)
        return state

    def _build(self, hands: list[list[int]], alloc: dict[Holder, list[int]], rng: random.Random) -> GameState:
        """Replay the hand's public actions on a deck arranged to give this world."""
        view = self.view
        n = self.n
        start = [hands[s] + self.played[s] for s in range(n)]
        first = view.first
        if n == 4:
            deck = [0] * NUM_CARDS
            for k in range(4):
                deck[k::4] = sorted(start[(first + 1 + k) % 4])
        else:
            deck = self._stock(start, alloc, rng)
        state = GameState.new(
            self.rules, rng.getrandbits(62), first=first, scores=list(view.scores),
            bags=list(view.bags), decks={1: deck},
        )  # fmt: skip
        state.hands  # deal hand 1 from ``deck`` now, before it is renumbered  # noqa: B018
        state.hand_number = view.hand_number
        state.deck_log = {view.hand_number: deck}
        self._replay_before_play(state, start, alloc, rng)
        for t in view.tricks:
            for c in t.cards:
                state.apply(CARDS[int(c)])
        for _, c in view.current_trick:
            state.apply(CARDS[int(c)])
        return state

    def _stock(self, start: list[list[int]], alloc: dict[Holder, list[int]], rng: random.Random) -> list[int]:
        """Two players: a stock whose kept-first pairs give each drawer its cards."""
        first, me, t_done = self.view.first, self.me, self.draw_turns
        kept = [list(start[0]), list(start[1])]
        mine_seen = [int(c) for c in self.view.seen_discards]
        opp_out = [c for c in alloc.get(DISCARD, []) if c not in set(mine_seen)]
        if t_done >= 26:  # after the draw: any arrangement, patched after the exchange
            rest = [c for c in range(NUM_CARDS) if c not in set(kept[0]) | set(kept[1])]
            stock: list[int] = []
            for t in range(26):
                d = (first + t) % 2
                stock += [kept[d].pop(), rest.pop()]
            return stock
        stock = []
        for t in range(t_done):
            d = (first + t) % 2
            out = mine_seen.pop() if d == me else opp_out.pop()
            stock += [kept[d].pop(), out]
        tail = list(alloc.get(STOCK, []))
        rng.shuffle(tail)
        if self.offered is not None:
            tail.insert(0, self.offered)
        return stock + tail

    def _replay_before_play(
        self, state: GameState, start: list[list[int]], alloc: dict[Holder, list[int]], rng: random.Random
    ) -> None:
        """Apply the public decisions before the play, stopping at the view's own decision."""
        view, me, two = self.view, self.me, self.n == 2
        patched = False
        while state.decision is not None and state.decision is not Decision.PLAY:
            seat = state.to_move
            kind = state.decision
            if kind is Decision.BLIND_NIL:
                first_turn = 0 if view.first == seat else 1  # two players: asked before its first draw
                if view.blind[seat]:
                    state.apply(True)
                elif (
                    view.bids[seat] is not None
                    or (seat == me and self.kind is not Decision.BLIND_NIL)
                    or (two and seat != me and self.draw_turns > first_turn)
                ):
                    state.apply(False)
                else:
                    return
            elif kind is Decision.DRAW:
                if state.stock_pos >= 2 * self.draw_turns:
                    return
                state.apply(True)
            elif kind is Decision.EXCHANGE:
                if seat == me and self.kind is Decision.EXCHANGE:
                    self._patch_after_draw(state, start, alloc, rng)
                    return
                state.apply(())
            else:  # BID
                if two and not patched:
                    self._patch_after_draw(state, start, alloc, rng)
                    patched = True
                bid = view.bids[seat]
                if bid is None:
                    return
                state.apply(bid)
        if two and not patched and state.decision is Decision.PLAY:
            # Both bid blind nil (their bids): no bid came to patch the world at.
            self._patch_after_draw(state, start, alloc, rng)

    def _patch_after_draw(
        self, state: GameState, start: list[list[int]], alloc: dict[Holder, list[int]], rng: random.Random
    ) -> None:
        """Two players, once the draw is over: the world's hands, discards, seen discards and public counts."""
        for s in range(2):
            mask = 0
            for c in start[s]:
                mask |= 1 << c
            state.hands[s] = mask
        state.discards = sorted(alloc[DISCARD])
        mine = 0
        for c in self.view.seen_discards:
            mine |= 1 << int(c)
        state.seen_discards[self.me] = mine
        state.seen_discards[1 - self.me] = self._opponent_seen(alloc, rng)
        if self.view.exchanged:
            state.exchanged = list(self.view.exchanged)

    def _opponent_seen(self, alloc: dict[Holder, list[int]], rng: random.Random) -> int:
        """Two players, after the draw: what the opponent has seen in this world (a card mask).

        The replay that builds a world arranges the draw any way once it is over,
        so it must be told.  By the rules an opponent that drew saw the 13 cards
        it let go; a blind-nil opponent saw none in the draw and then the ``k``
        it gave back in its exchange (``k`` is public), chosen from its hand
        before it drew.  Either way they are discards it does not hold, and not
        what this seat has seen.  Taken from the world's discards less this
        seat's seen ones: exactly the opponent's 13 when neither bid blind nil
        (no randomness used, so such worlds are drawn as before); at random
        among them otherwise (this seat's exchange may have taken some of the
        opponent's, which of them it was is not known to it).
        """
        view, opp = self.view, 1 - self.me
        if view.blind[opp]:
            want = view.exchanged[opp] if view.exchanged else 0
        else:
            want = 13
        if not want:
            return 0
        mine = {int(c) for c in view.seen_discards}
        pool = [c for c in alloc[DISCARD] if c not in mine]
        chosen = pool if len(pool) <= want else rng.sample(sorted(pool), want)
        mask = 0
        for c in chosen:
            mask |= 1 << c
        return mask


def honour_bid_model(sigma: float = 1.5) -> BidModel:
    """A simple bid model: a bid is likely near the hand's honour-and-length trick count.

    Nil is likely for a hand with few high cards.  Good enough to tilt the
    worlds: a seat that bid 5 gets more aces, kings and spades than one that bid 1.
    """

    def likelihood(rules: Ruleset, seat: int, hand: Sequence[int], bid: int) -> float:
        est = quick_tricks(hand, rules.players)
        if bid == 0:
            return math.exp(-(est**2) / (2 * 1.0**2))
        return math.exp(-((bid - est) ** 2) / (2 * sigma**2))

    # Marks the model so that the sampler may compute it in the compiled core (the same numbers).
    likelihood.honour_sigma = float(sigma)  # type: ignore[attr-defined]
    return likelihood


def quick_tricks(hand: Sequence[int], players: int = 4) -> float:
    """A rough trick count: aces, guarded kings and queens, spade honours and length."""
    by_suit: list[list[int]] = [[], [], [], []]
    for c in hand:
        by_suit[c // 13].append(c % 13)
    total = 0.0
    for suit, ranks in enumerate(by_suit):
        n = len(ranks)
        if suit == 3:
            total += sum(1.0 for r in ranks if r >= 11) + (0.6 if 10 in ranks and n >= 3 else 0)
            total += 0.8 * max(0, n - 3 - sum(1 for r in ranks if r >= 10))
            continue
        if 12 in ranks:
            total += 1.0 if n <= 5 else 0.7
        if 11 in ranks and n >= 2:
            total += 0.7
        if 10 in ranks and n >= 3:
            total += 0.3
    if players == 2:
        total *= 1.1
    return total


def _randbelow(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)``: drawn in place by the compiled core for a ``random.Random`` (the same number)."""
    return _fast.randbelow(rng, n) if _fast is not None else rng.randrange(n)


def _shuffle(rng: random.Random, cards: list[int]) -> None:
    """``rng.shuffle(cards)``: in the compiled core for a ``random.Random`` (the same order)."""
    if _fast is not None:
        _fast.shuffle(rng, cards)
    else:
        rng.shuffle(cards)
