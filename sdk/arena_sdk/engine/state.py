"""The game state: whose decision it is, the legal actions, apply, views, results.

:class:`GameState` is a small mutable object with a cheap :meth:`~GameState.clone`
(the python-chess / OpenSpiel style): the game loop applies one action at a
time and bots clone it to simulate.  Everything random (the first dealer, the
shuffles, the two-player exchange draw) is a pure function of the game seed
and the hand number, so a game is reproducible from ``(ruleset, seed,
actions)`` and a clone carries no generator state.

Decisions and their action values:

=================  ============================================  ===================
kind               action                                        canonical order
=================  ============================================  ===================
``blind_nil``      ``bool``: True bids blind nil                 False, True
``draw``           ``bool``: True keeps the offered card         True, False
``exchange``       ``tuple[Card, ...]`` of 0–3 cards to return   by size, then cards
``bid``            ``int`` 0–13 (0 is nil)                       0 … 13
``play``           :class:`Card`                                 card index
=================  ============================================  ===================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from arena_sdk.engine.cards import CARDS, FULL_DECK_MASK, NUM_CARDS, Card, cards_of
from arena_sdk.engine.chance import chance_int, chance_rng, chance_text, shuffled_deck
from arena_sdk.engine.core import Core, first_dealer
from arena_sdk.engine.errors import IllegalActionError, MalformedInputError
from arena_sdk.engine.model import Action, ActionEntry, Decision, GameResult, HandResult, Trick
from arena_sdk.engine.pure import MAX_BID, MAX_EXCHANGE, TRICKS_PER_HAND
from arena_sdk.engine.ruleset import Ruleset
from arena_sdk.engine.scoring import frozen
from arena_sdk.engine.seats import seat_name

__all__ = [
    "MAX_BID", "MAX_EXCHANGE", "TRICKS_PER_HAND", "Action", "ActionEntry", "Decision", "GameResult",
    "GameState", "HandResult", "SeatView", "Trick", "chance_int", "chance_rng", "chance_text",
    "shuffled_deck",
]  # fmt: skip

_PLAY = Decision.PLAY
_EXCHANGE = Decision.EXCHANGE
_DRAW = Decision.DRAW


class GameState(Core):  # type: ignore[misc,valid-type]
    """A game of Spades in progress.  Create with :meth:`new`.

    The state machine (dealing, legal actions, ``apply``, playouts, scoring)
    is its base class: the compiled core where it is built, else
    :class:`~arena_sdk.engine.pure.PureCore` (see :mod:`arena_sdk.engine.core`).
    This class adds creation, views and the errors for bad input.
    """

    __slots__ = ()

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
    def new(
        cls,
        rules: Ruleset,
        seed: int | str,
        *,
        first: int | None = None,
        scores: Sequence[int] | None = None,
        bags: Sequence[int] | None = None,
        decks: Mapping[int, Sequence[int]] | None = None,
    ) -> GameState:
        """Start a game and run it up to the first decision.

        ``first`` is the first dealer (four players) or first player (two
        players) of hand 1; by default it is drawn from ``seed``.  ``scores``
        and ``bags`` start the game from given totals.  ``decks`` maps a hand
        number to a full 52-card deck order used instead of the seeded shuffle.
        """
        n = rules.players
        if first is None and scores is None and bags is None and not decks:  # the common case, quickly
            return cls._create(rules, seed, None, [0, 0], [0, 0], {})  # type: ignore[no-any-return]
        if first is None:
            first = first_dealer(seed, n)
        elif not isinstance(first, int) or not 0 <= first < n:
            raise MalformedInputError(f"first seat must be 0..{n - 1}, got {first!r}")
        start_scores = _two_ints("scores", scores)
        start_bags = _two_ints("bags", bags)
        if start_bags[0] < 0 or start_bags[1] < 0:
            raise MalformedInputError(f"starting bags must not be negative, got {start_bags}")
        checked: dict[int, list[int]] = {}
        for number, deck in (decks or {}).items():
            if sorted(deck) != list(range(NUM_CARDS)):
                raise MalformedInputError(f"deck of hand {number} is not the 52 cards once each")
            checked[number] = [int(c) for c in deck]
        self = cls.__new__(cls)
        self._init_game(rules, seed, first, start_scores, start_bags, checked)
        return self

    # ------------------------------------------------------------------ queries

    @property
    def is_over(self) -> bool:
        """True once the game has a result."""
        return self.result is not None

    def seat_name(self, seat: int) -> str:
        """The name of a seat at this table size."""
        return seat_name(self.players, seat)


    def hand_is_visible(self, seat: int) -> bool:
        """False while ``seat`` may not look at its cards.

        That is while it must still decide blind nil, and in the two-player
        game while a blind-nil player's cards are being drawn unseen (it looks
        once the whole draw is over).
        """
        if self.blind_eligible[seat] and not self.blind_decided[seat]:
            return False
        return not (self.players == 2 and self.blind[seat] and self.stock_pos < NUM_CARDS)

    def current_trick(self) -> list[tuple[int, Card]]:
        """The cards of the trick in progress as ``(seat, card)`` in play order."""
        n = self.players
        return [((self.leader + i) % n, CARDS[c]) for i, c in enumerate(self.trick)]

    def offered_card(self) -> Card | None:
        """The card the seat to move is looking at in a two-player draw decision."""
        if self.decision is _DRAW:
            return CARDS[self.stock[self.stock_pos]]
        return None


    def _check_play(self, action: object) -> int:
        if not isinstance(action, int) or isinstance(action, bool):
            if isinstance(action, str):
                raise MalformedInputError(
                    f"a card to play must be a Card, not the text {action!r} (use parse_card)"
                )
            raise MalformedInputError(f"a card to play must be a Card, got {action!r}")
        if not 0 <= action < NUM_CARDS:
            raise MalformedInputError(f"card index {action} is out of range 0..51")
        bit = 1 << action
        seat = self.to_move
        hand = self.hands[seat]  # type: ignore[index]
        if not hand & bit:
            raise IllegalActionError(f"{self.seat_name(seat)} does not hold {CARDS[action]}")  # type: ignore[arg-type]
        if not self._legal_play_mask() & bit:
            if self.trick:
                led = CARDS[self.trick[0]].suit
                raise IllegalActionError(
                    f"{CARDS[action]} does not follow suit: {self.seat_name(seat)} "  # type: ignore[arg-type]
                    f"holds {led} and must play one"
                )
            raise IllegalActionError(
                f"{CARDS[action]} cannot be led: spades are not broken and "
                f"{self.seat_name(seat)} holds another suit"  # type: ignore[arg-type]
            )
        return int(action)

    def _check_exchange(self, seat: int, action: object) -> tuple[Card, ...]:
        if not isinstance(action, (tuple, list, frozenset, set)):
            raise MalformedInputError(
                f"an exchange must be a collection of 0-{MAX_EXCHANGE} cards, got {action!r}"
            )
        cards: list[int] = []
        for c in action:
            if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < NUM_CARDS:
                raise MalformedInputError(f"not a card in the exchange: {c!r}")
            cards.append(c)
        if len(set(cards)) != len(cards):
            raise MalformedInputError("the exchange names a card twice")
        if len(cards) > MAX_EXCHANGE:
            raise IllegalActionError(
                f"at most {MAX_EXCHANGE} cards may be exchanged, got {len(cards)}"
            )
        for c in cards:
            if not self._hands[seat] >> c & 1:
                raise IllegalActionError(f"{self.seat_name(seat)} does not hold {CARDS[c]}")
        return tuple(CARDS[c] for c in sorted(cards))


    # ------------------------------------------------------------------ views

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know now: its own cards, the public history, scores."""
        n = self.players
        if not isinstance(seat, int) or not 0 <= seat < n:
            raise MalformedInputError(f"seat must be 0..{n - 1}, got {seat!r}")
        visible = self.hand_is_visible(seat)
        decision = self.decision
        to_move = self.to_move == seat
        legal: tuple[Any, ...] = ()
        if to_move and (decision is not _EXCHANGE):
            legal = tuple(self.legal_actions())
        seen = self.seen_discards[seat]
        # Built without the frozen __init__ (the referee builds one per decision): every field named.
        return frozen(
            SeatView,
            rules=self.rules,
            seat=seat,
            hand_number=self.hand_number,
            first=self.first,
            decision=decision if to_move else None,
            to_move=self.to_move,
            legal_actions=legal,
            hand=tuple(cards_of(self.hands[seat])) if visible else None,
            bids=tuple(self.bids),
            blind=tuple(self.blind),
            tricks_won=tuple(self.tricks_won),
            leader=self.leader if decision is _PLAY else None,
            current_trick=tuple(self.current_trick()) if self.trick else (),
            tricks=tuple(self.tricks),
            spades_broken=self.spades_broken,
            scores=tuple(self.scores),
            bags=tuple(self.bags),
            offered_card=self.offered_card() if to_move else None,
            seen_discards=tuple(cards_of(seen)) if seen else (),
            exchanged=tuple(self.exchanged) if n == 2 else (),
            hand_results=tuple(self.hand_results),
            result=self.result,
        )

    def public_cards_unseen_by(self, seat: int) -> int:
        """Bitmask of cards ``seat`` has not seen this hand (not its own, not played)."""
        played = 0
        for t in self.tricks:
            for c in t.cards:
                played |= 1 << c
        for c in self.trick:
            played |= 1 << c
        own = self.hands[seat] if self.hand_is_visible(seat) else 0
        return FULL_DECK_MASK & ~played & ~own & ~self.seen_discards[seat]


@dataclasses.dataclass(frozen=True)

class SeatView:
    """Everything one seat may know at one moment, and nothing more.

    ``hand`` is ``None`` while the seat must decide blind nil unseen.
    ``legal_actions`` is filled only when the seat is to move (for an
    exchange it is left empty: the 0–3 card subsets of the hand are legal).
    """

    rules: Ruleset
    seat: int
    hand_number: int
    first: int
    decision: Decision | None
    to_move: int | None
    legal_actions: tuple[Any, ...]
    hand: tuple[Card, ...] | None
    bids: tuple[int | None, ...]
    blind: tuple[bool, ...]
    tricks_won: tuple[int, ...]
    leader: int | None
    current_trick: tuple[tuple[int, Card], ...]
    tricks: tuple[Trick, ...]
    spades_broken: bool
    scores: tuple[int, ...]
    bags: tuple[int, ...]
    offered_card: Card | None
    seen_discards: tuple[Card, ...]
    exchanged: tuple[int, ...]
    hand_results: tuple[HandResult, ...]
    result: GameResult | None


def _two_ints(name: str, values: Sequence[int] | None) -> list[int]:
    if values is None:
        return [0, 0]
    out = list(values)
    if len(out) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        raise MalformedInputError(f"starting {name} must be two whole numbers, got {values!r}")
    return out


_ON_CORE: dict[type, type] = {}


def game_state_on(core: type) -> type[GameState]:
    """:class:`GameState` built on another core: ``game_state_on(PureCore)`` is the pure engine.

    For comparing the two cores side by side in one process (the engine's
    tests and ``bench/core_equivalence.py``); everything else uses
    :class:`GameState`, on the core :mod:`arena_sdk.engine.core` chose.
    """
    if core is Core:
        return GameState
    made = _ON_CORE.get(core)
    if made is None:
        own = {k: v for k, v in vars(GameState).items() if k not in ("__slots__", "__dict__", "__weakref__")}
        made = _ON_CORE[core] = type(f"GameState_{core.__name__}", (core,), own)
    return made
