"""The value types of a game: decision kinds, history entries, tricks and results.

Shared by both implementations of the game's state machine (the pure-Python
:mod:`arena_sdk.engine.pure` and the compiled ``arena_sdk.engine._core``), so
a game played by either gives equal objects.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import NamedTuple

from arena_sdk.engine.cards import Card
from arena_sdk.engine.scoring import TeamHandScore

__all__ = ["Action", "ActionEntry", "Decision", "GameResult", "HandResult", "Trick"]


class Decision(str, enum.Enum):
    """The kind of decision a seat is asked for."""

    BLIND_NIL = "blind_nil"
    DRAW = "draw"
    EXCHANGE = "exchange"
    BID = "bid"
    PLAY = "play"

    def __str__(self) -> str:
        return self.value


Action = bool | int | Card | tuple[Card, ...]


class ActionEntry(NamedTuple):
    """One decision taken: which hand, which seat, what kind, what action.

    A named tuple rather than a frozen dataclass: one is made per action, and
    that is on the hot path of every simulation.
    """

    hand: int
    seat: int
    kind: Decision
    action: Action


class Trick(NamedTuple):
    """A completed trick: who led, the cards in play order, who won."""

    leader: int
    cards: tuple[Card, ...]
    winner: int


@dataclasses.dataclass(frozen=True)
class HandResult:
    """The outcome of one hand: bids, tricks per seat and each team's score."""

    number: int
    first: int
    """The dealer (four players) or the first player (two players)."""
    bids: tuple[int, ...]
    blind: tuple[bool, ...]
    tricks: tuple[int, ...]
    teams: tuple[TeamHandScore, ...]
    exchanged: tuple[int, ...]
    """Cards each seat returned in the two-player blind-nil exchange (public)."""
    played: tuple[Trick, ...] = ()
    """The hand's tricks in order."""


@dataclasses.dataclass(frozen=True)
class GameResult:
    """How a game ended: ``ending`` is ``target``, ``floor`` or ``max_hands``.

    ``winner`` is the winning team index, or ``None`` for a draw (only
    possible at ``max_hands``).
    """

    ending: str
    winner: int | None
    scores: tuple[int, ...]
    bags: tuple[int, ...]
    hands: int


