"""A seat's observation tensor and legal-action mask, from that seat's view alone.

Two sources give the same :class:`SeatKnowledge`: the engine's
:class:`~arena_sdk.engine.SeatView` (what the environments use) and the SDK's
:class:`~arena_sdk.view.View` (what a bot gets from the referee).  Both hold
only what the seat may know, and :func:`encode` and :func:`legal_mask` read
nothing else, so a policy trained in an environment sees the same numbers when
it plays in the arena (``tests/learn`` checks both, decision by decision).

Needs numpy only (no Gymnasium, no PettingZoo): a bot image carries this
module and numpy, nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from arena_sdk.engine import Decision, Ruleset
from arena_sdk.engine.seats import team_of
from arena_sdk.engine.state import SeatView, Trick
from arena_sdk.envs import layout
from arena_sdk.envs.layout import BID_BASE, BLOCK, FEATURE_BOUND, OBSERVATION_SIZE

if TYPE_CHECKING:
    from arena_sdk.view import View

_HAND = BLOCK["hand"].offset
_PLAYED = BLOCK["played"].offset
_TRICK = BLOCK["trick"].offset
_SEEN = BLOCK["seen_discards"].offset
_OFFERED = BLOCK["offered"].offset
_MARKED = BLOCK["marked"].offset
_BIDS = BLOCK["bids"].offset
_BLIND = BLOCK["blind"].offset
_TRICKS_WON = BLOCK["tricks_won"].offset
_VOIDS = BLOCK["voids"].offset
_DEALER = BLOCK["dealer"].offset
_LEADER = BLOCK["leader"].offset
_EXCHANGED = BLOCK["exchanged"].offset
_BROKEN = BLOCK["spades_broken"].offset
_HIDDEN = BLOCK["hand_hidden"].offset
_DECISION = BLOCK["decision"].offset
_SCORES = BLOCK["scores"].offset
_BAGS = BLOCK["bags"].offset
_HAND_NUMBER = BLOCK["hand_number"].offset
_RULES = BLOCK["rules"].offset
_DECISION_INDEX = {Decision(name): i for i, name in enumerate(layout.DECISION_ORDER)}
_BLIND_NIL_MODES = ("off", "any", "first-bidder")
_FAILED_NIL_MODES = ("bags", "contract")
_SPADE_LEAD_MODES = ("broken", "trumped", "always")


class SeatKnowledge(NamedTuple):
    """What one seat knows at one moment: the fields the observation is built from.

    Seats are absolute here (0..3 or 0..1); :func:`encode` makes them relative.
    ``hand`` is ``None`` while the seat's cards are hidden from it; ``kind`` is
    ``None`` when it is not the seat's decision.
    """

    rules: Ruleset
    seat: int
    kind: Decision | None
    hand: tuple[int, ...] | None
    legal: tuple[Any, ...]
    hand_number: int
    first: int
    bids: tuple[int | None, ...]
    blind: tuple[bool, ...]
    tricks_won: tuple[int, ...]
    current_trick: tuple[tuple[int, int], ...]
    tricks: tuple[Trick, ...]
    spades_broken: bool
    scores: tuple[int, ...]
    bags: tuple[int, ...]
    offered_card: int | None
    seen_discards: tuple[int, ...]
    exchanged: tuple[int, ...]

    @classmethod
    def from_seat_view(cls, view: SeatView) -> SeatKnowledge:
        """From the engine's view of a seat (``GameState.view(seat)``)."""
        return cls(
            rules=view.rules,
            seat=view.seat,
            kind=view.decision,
            hand=None if view.hand is None else tuple(map(int, view.hand)),
            legal=view.legal_actions,
            hand_number=view.hand_number,
            first=view.first,
            bids=view.bids,
            blind=view.blind,
            tricks_won=view.tricks_won,
            current_trick=tuple((s, int(c)) for s, c in view.current_trick),
            tricks=view.tricks,
            spades_broken=view.spades_broken,
            scores=view.scores,
            bags=view.bags,
            offered_card=None if view.offered_card is None else int(view.offered_card),
            seen_discards=tuple(map(int, view.seen_discards)),
            exchanged=view.exchanged,
        )

    @classmethod
    def from_view(cls, view: View) -> SeatKnowledge:
        """From the view a bot gets with a decision request (``Bot.play(view)`` and the rest)."""
        return cls(
            rules=view.rules,
            seat=view.seat,
            kind=view.kind,
            hand=None if view.hand_hidden else tuple(map(int, view.hand)),
            legal=tuple(view.legal),
            hand_number=view.hand_number,
            first=view.first,
            bids=tuple(view.bids),
            blind=tuple(view.blind),
            tricks_won=tuple(view.tricks_won),
            current_trick=tuple((s, int(c)) for s, c in view.current_trick),
            tricks=tuple(view.tricks),
            spades_broken=view.spades_broken,
            scores=tuple(view.scores),
            bags=tuple(view.bags),
            offered_card=None if view.offered_card is None else int(view.offered_card),
            seen_discards=tuple(map(int, view.seen_discards)),
            exchanged=tuple(view.exchanged),
        )


def _clip(value: float) -> float:
    return max(-FEATURE_BOUND, min(FEATURE_BOUND, value))


def rule_features(rules: Ruleset) -> list[float]:
    """The ``rules`` block (:data:`~arena_sdk.envs.layout.RULE_FEATURES`), numeric features clipped."""
    floor = rules.lose_floor
    return [
        1.0 if rules.players == 4 else 0.0,
        _clip(rules.target / 500),
        0.0 if floor is None else 1.0,
        0.0 if floor is None else _clip(floor / 500),
        _clip(rules.nil_value / 100),
        *(1.0 if rules.blind_nil == m else 0.0 for m in _BLIND_NIL_MODES),
        _clip(rules.blind_nil_value / 200),
        _clip(rules.blind_nil_min_deficit / 100),
        *(1.0 if rules.failed_nil_tricks == m else 0.0 for m in _FAILED_NIL_MODES),
        *(1.0 if rules.spade_lead == m else 0.0 for m in _SPADE_LEAD_MODES),
        _clip(rules.bag_threshold / 10),
        _clip(rules.bag_penalty / 100),
        _clip(rules.max_hands / 200),
    ]


#: The rules block per ruleset: the same few rulesets come back at every decision.
_RULES_CACHE: dict[Ruleset, np.ndarray] = {}


def _rules_block(rules: Ruleset) -> np.ndarray:
    block = _RULES_CACHE.get(rules)
    if block is None:
        if len(_RULES_CACHE) > 64:
            _RULES_CACHE.clear()
        block = _RULES_CACHE[rules] = np.asarray(rule_features(rules), dtype=np.float32)
    return block


def _one_hot_indices(k: SeatKnowledge, marked: Sequence[int]) -> list[int]:
    """The indices of the observation's features that are 1 (the binary blocks)."""
    n = k.rules.players
    me = k.seat
    ones: list[int] = []
    if k.hand is not None:
        ones += [_HAND + c for c in k.hand]
    for trick in k.tricks:
        leader, cards = trick.leader, trick.cards
        led_suit = cards[0] // 13
        for i, card in enumerate(cards):
            rel = (leader + i - me) % n
            ones.append(_PLAYED + 52 * rel + card)
            if card // 13 != led_suit:
                ones.append(_VOIDS + 4 * rel + led_suit)
    if k.current_trick:
        led_suit = k.current_trick[0][1] // 13
        ones.append(_LEADER + (k.current_trick[0][0] - me) % n)
        for seat, card in k.current_trick:
            rel = (seat - me) % n
            ones.append(_PLAYED + 52 * rel + card)
            ones.append(_TRICK + 52 * rel + card)
            if card // 13 != led_suit:
                ones.append(_VOIDS + 4 * rel + led_suit)
    ones += [_SEEN + c for c in k.seen_discards]
    if k.offered_card is not None:
        ones.append(_OFFERED + k.offered_card)
    ones += [_MARKED + c for c in marked]
    for seat in range(n):
        rel = (seat - me) % n
        bid = k.bids[seat]
        ones.append(_BIDS + layout.BID_SLOTS * rel + (0 if bid is None else 1 + bid))
        if k.blind[seat]:
            ones.append(_BLIND + rel)
    ones.append(_DEALER + (k.first - me) % n)
    if k.spades_broken:
        ones.append(_BROKEN)
    if k.hand is None:
        ones.append(_HIDDEN)
    if k.kind is not None:
        ones.append(_DECISION + _DECISION_INDEX[k.kind])
    return ones


def encode(k: SeatKnowledge, marked: Sequence[int] = (), out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector (float32, :data:`~arena_sdk.envs.layout.OBSERVATION_SIZE`) of ``k``.

    ``marked``: the cards already chosen to return in an exchange decision in
    progress.  ``out``, when given, is filled in place (and returned).
    """
    obs = np.zeros(OBSERVATION_SIZE, dtype=np.float32) if out is None else out
    if out is not None:
        obs.fill(0.0)
    obs[_one_hot_indices(k, marked)] = 1.0
    n = k.rules.players
    me = k.seat
    rules = k.rules
    for seat in range(n):
        rel = (seat - me) % n
        obs[_TRICKS_WON + rel] = k.tricks_won[seat] / 13
        if k.exchanged:
            obs[_EXCHANGED + rel] = k.exchanged[seat] / 3
    own = team_of(n, me)
    obs[_SCORES] = _clip(k.scores[own] / rules.target)
    obs[_SCORES + 1] = _clip(k.scores[1 - own] / rules.target)
    obs[_BAGS] = _clip(k.bags[own] / rules.bag_threshold)
    obs[_BAGS + 1] = _clip(k.bags[1 - own] / rules.bag_threshold)
    obs[_HAND_NUMBER] = _clip(k.hand_number / rules.max_hands)
    obs[_RULES : _RULES + BLOCK["rules"].size] = _rules_block(rules)
    return obs


def legal_actions(k: SeatKnowledge, marked: Sequence[int] = ()) -> list[int]:
    """The legal action ids of ``k``'s decision (empty when it is not the seat's turn).

    In an exchange, every card of the hand not yet chosen (while fewer than
    three are) and :data:`~arena_sdk.envs.layout.FINISH_EXCHANGE`.
    """
    kind = k.kind
    if kind is None:
        return []
    if kind is Decision.PLAY:
        return [int(c) for c in k.legal]
    if kind is Decision.BID:
        return [BID_BASE + b for b in k.legal]
    if kind is Decision.BLIND_NIL:
        return [layout.DECLINE_BLIND_NIL, layout.BID_BLIND_NIL]
    if kind is Decision.DRAW:
        return [layout.KEEP_OFFERED, layout.TAKE_NEXT]
    chosen = set(marked)
    cards = [c for c in (k.hand or ()) if c not in chosen] if len(chosen) < layout.MAX_EXCHANGE else []
    return [*cards, layout.FINISH_EXCHANGE]


def legal_mask(k: SeatKnowledge, marked: Sequence[int] = (), out: np.ndarray | None = None) -> np.ndarray:
    """The legal-action mask (int8, :data:`~arena_sdk.envs.layout.ACTION_COUNT`): 1 where legal."""
    mask = np.zeros(layout.ACTION_COUNT, dtype=np.int8) if out is None else out
    if out is not None:
        mask.fill(0)
    mask[legal_actions(k, marked)] = 1
    return mask


def decision_value(kind: Decision, action: int) -> Any:
    """The engine's action for action id ``action`` of a decision of ``kind`` (not an exchange).

    ``ValueError`` when the id is not one of that kind's actions.
    """
    from arena_sdk.engine.cards import CARDS

    if kind is Decision.PLAY and 0 <= action < 52:
        return CARDS[action]
    if kind is Decision.BID and action in layout.BID_ACTIONS:
        return action - BID_BASE
    if kind is Decision.BLIND_NIL and action in (layout.DECLINE_BLIND_NIL, layout.BID_BLIND_NIL):
        return action == layout.BID_BLIND_NIL
    if kind is Decision.DRAW and action in (layout.KEEP_OFFERED, layout.TAKE_NEXT):
        return action == layout.KEEP_OFFERED
    raise ValueError(f"action {action!r} ({_describe(action)}) is not a {kind.value} action")


def _describe(action: object) -> str:
    try:
        return layout.action_name(int(action))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return "not an action id"
