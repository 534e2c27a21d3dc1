"""Taking a decision back in unrated play: the match loop's rewind points (docs/play.md, "Undo").

A table with a person (``arena play``, a ladder's practice table) may let the
person take back their last decision.  The match loop cannot be asked to stop
and go back while it waits for an answer, so an undo goes like this:

1. before the loop asks one of :attr:`UndoBook.seats`, it marks a
   :class:`RewindPoint` (:meth:`UndoBook.mark`): a clone of the game state and
   the loop's own bookkeeping (the record's entries so far, the seats' clocks
   and statistics);
2. the person asks for an undo while their decision is open: the table calls
   :meth:`UndoBook.request`, and the seat answers the open decision with any
   legal move (it is withdrawn, never recorded);
3. right after applying that answer, the loop calls :meth:`UndoBook.take`: it
   returns the point of the person's previous decision, and the loop puts the
   state and its bookkeeping back as they were there (:func:`restore_state`),
   then asks that decision again.

Points are kept within one hand of one game: a finished hand is never taken
back (every seat has been told its result), nor a blind nil decision (the
person has seen their cards since).  Nothing here is used in rated play: only
a table that sets ``MatchSpec.undo`` has an undo book.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from arena_sdk.engine import Decision, GameState


@dataclasses.dataclass
class RewindPoint:
    """The game just before ``seat`` was asked a decision."""

    game: int
    hand: int
    seat: int
    state: GameState
    """A clone (the loop's state goes on changing)."""
    books: Any
    """The loop's bookkeeping at that point (opaque here: :mod:`arena.match.loop` reads it)."""


class UndoBook:
    """The rewind points of ``seats`` in the hand being played, and an undo asked for."""

    def __init__(self, seats: Iterable[int]) -> None:
        self.seats = frozenset(seats)
        self._points: list[RewindPoint] = []
        self._wanted = False
        self.undone: list[tuple[int, list[tuple[int, int, Decision, Any]]]] = []
        """Per undo: the game's index and the decisions it took back ``(hand, seat, kind, action)``, in order."""

    def mark(self, game: int, seat: int, state: GameState, books: Any) -> None:
        """The loop is about to ask ``seat``: keep the point (only for :attr:`seats`)."""
        if seat not in self.seats:
            return
        if self._points and (self._points[-1].game, self._points[-1].hand) != (game, state.hand_number):
            self._points.clear()  # a new hand or game: the last one is settled
        self._points.append(RewindPoint(game, state.hand_number, seat, state.clone(), books))

    def can_undo(self) -> bool:
        """Whether the decision being asked now has an earlier one of the same hand to go back to."""
        if len(self._points) < 2:
            return False
        return self._points[-2].state.decision is not Decision.BLIND_NIL

    def request(self) -> None:
        """Go back to the previous decision once the open one is answered; ``ValueError`` if there is none."""
        if not self.can_undo():
            raise ValueError("there is no earlier decision in this hand to go back to")
        self._wanted = True

    def take(self, state: GameState) -> RewindPoint | None:
        """After a decision is applied to ``state``: the point to go back to if an undo was asked (else None).

        The withdrawn decision's point and the returned one leave the book: the
        loop marks the returned one again when it asks that decision again.
        The decisions taken back (the withdrawn answer aside: the person did
        not choose it) are kept in :attr:`undone`, for the game's record.
        """
        if not self._wanted:
            return None
        self._wanted = False
        self._points.pop()
        point = self._points.pop()
        taken = state.history[len(point.state.history) : -1]
        self.undone.append((point.game, [(e.hand, e.seat, e.kind, e.action) for e in taken]))
        return point


def restore_state(state: GameState, saved: GameState) -> None:
    """Make ``state`` (the loop's own object, which others hold) the same as ``saved``; ``saved`` is kept."""
    state.restore(saved)


__all__ = ["RewindPoint", "UndoBook", "restore_state"]
