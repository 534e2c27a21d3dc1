"""Help the person asked for, kept for the game's record: hints and undos ("assisted" play).

A hint is asked for the open decision (:mod:`arena.play.hint` answers it); an
undo withdraws the open decision and goes back to the person's previous one
(:mod:`arena.match.undo`).  Both are marked in the game's record
(docs/record-format.md, "Assisted play"): the person's action in the record
carries ``"assisted": ["hint"]``, ``["undo"]`` (the decision was asked again
after an undo) or both, and ``meta.assisted`` counts the hints and undos of
the game per seat.  The record is marked as the table writes it, so a record
says whether the person had help however its game ended.
"""

from __future__ import annotations

from typing import Any

#: The kinds of help, as the record names them.
HINT = "hint"
UNDO = "undo"


class Assists:
    """The hints and undos of one person's seat, by the referee's request id."""

    def __init__(self) -> None:
        self.by_request: dict[int, set[str]] = {}
        self.hints: dict[int, dict[str, Any]] = {}
        """Each hint asked, by request id: ``{"status": "running"|"done"|"failed", ...}``."""
        self.counts = {HINT: 0, UNDO: 0}
        """This game's hints and undos."""
        self._after_undo = False

    def new_game(self) -> None:
        """A game starts: its counts start at 0 (request ids go on across the match)."""
        self.counts = {HINT: 0, UNDO: 0}
        self._after_undo = False

    def hinted(self, request_id: int) -> bool:
        """A hint was asked for decision ``request_id``; False if one already was (counted once)."""
        if HINT in self.by_request.get(request_id, ()):
            return False
        self.by_request.setdefault(request_id, set()).add(HINT)
        self.counts[HINT] += 1
        return True

    def undone(self) -> None:
        """An undo was asked: the next decision asked (the previous one, again) is marked."""
        self.counts[UNDO] += 1
        self._after_undo = True

    def asked(self, request_id: int) -> None:
        """The seat was asked decision ``request_id``."""
        if self._after_undo:
            self.by_request.setdefault(request_id, set()).add(UNDO)
            self._after_undo = False

    def assisted(self) -> bool:
        """Whether this game has had any help so far."""
        return any(self.counts.values())

    def mark(self, record: dict[str, Any], seat: str, undone: list[list[dict[str, Any]]] | None = None) -> None:
        """Mark the person's assisted actions in ``record`` (seat ``seat``), and count them under ``meta``
        with the decisions each undo took back (``undone``: in the record's action form)."""
        for hand in record.get("hands", []):
            for action in hand.get("actions", []):
                kinds = self.by_request.get(action.get("request_id", -1))
                if kinds and action.get("seat") == seat:
                    action["assisted"] = sorted(kinds)
        if self.assisted():
            meta = record.setdefault("meta", {})
            counted: dict[str, Any] = {"hints": self.counts[HINT], "undos": self.counts[UNDO]}
            if undone:
                counted["undone"] = undone
            meta["assisted"] = {seat: counted}


def assists_words(helped: dict[str, int]) -> str:
    """``{"hints": 2, "undos": 1}`` (a record's help for one seat) -> ``"2 hints and 1 undo"``."""
    parts = [f"{n} {kind[:-1] if n == 1 else kind}" for kind, n in helped.items() if n]
    return " and ".join(parts) or "no help"


__all__ = ["HINT", "UNDO", "Assists", "assists_words"]
