"""What the match loop asks of a seat, and what a seat can answer or report."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from arena_sdk.engine import GameResult, HandResult, Ruleset
from arena_sdk.engine.state import SeatView, Trick


@dataclasses.dataclass(slots=True)
class DecisionPrompt:
    """One decision request: the seat's view (it is to move), its clock."""

    request_id: int
    view: SeatView
    move_ms: int
    bank_ms: int
    allowed_ms: int = 0
    """What the referee enforces for this decision: min(move + bank, hard cap) (0: not said)."""
    cpu_limit_s: float | None = None
    """Under the CPU clock: the CPU seconds this decision may use, min(move + bank, hard cap);
    the seat's own wait (``decide``'s timeout) is then the wall hard cap.  None: the wall clock."""


@dataclasses.dataclass(slots=True)
class SeatReply:
    """A seat's answer: an engine action, or the reason it could not be read."""

    action: Any = None
    malformed: str | None = None
    """Set when the answer carried no usable action (bad field, bad card text)."""
    raw: str = ""
    """A short text form of what was sent, for the record."""
    think_us: int = 0
    """The bot's own measure (statistics only)."""
    received_at: float | None = None
    """When the answer arrived, on the match clock's scale (``None``: when ``decide`` returned).

    The loop judges the answer by this stamp, not by when it got round to it."""
    platform_lag_s: float = 0.0
    """How long the referee itself stalled while the decision was open (added to the bot's time)."""
    cpu_s: float | None = None
    """CPU time the bot used from request to answer, where the platform can measure it."""
    note: str = ""
    """The bot's note on this decision (cleaned and capped by the referee), for its author."""
    offturn_cpu_s: float | None = None
    """CPU time the bot used while it was not asked, from its previous answer (or the game's start)
    to this request; None where it cannot be measured or the span is not counted (after a timeout)."""
    offturn_s: float = 0.0
    """The wall time of that span (0 where ``offturn_cpu_s`` is None)."""


class DecisionTimeout(TimeoutError):
    """No answer in time; ``platform_lag_s`` of the wait was the referee's own stall (already added)."""

    def __init__(self, platform_lag_s: float = 0.0, cpu_s: float | None = None) -> None:
        super().__init__("no answer in time")
        self.platform_lag_s = platform_lag_s
        self.cpu_s = cpu_s
        self.offturn_cpu_s: float | None = None  # as in SeatReply: the span before this request
        self.offturn_s = 0.0


@dataclasses.dataclass(frozen=True)
class SeatEvent:
    """Something a seat did outside the question-answer rhythm: refused, recorded."""

    seat: int
    code: str
    """``stale_answer``, ``out_of_turn``, ``foreign_request``, ``log``, ..."""
    detail: str
    request_id: int = 0


class PlatformFault(Exception):
    """The platform, not the bot, failed (a container could not start, the daemon went away).

    The game is void: not scored, to be played again.
    """


class SeatLost(Exception):
    """The seat is gone for good: ``reason`` is crash, disconnect or protocol."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class Seat(Protocol):
    """A player at the table, as the match loop sees it.

    ``decide`` waits at most ``timeout`` seconds and then raises
    :class:`TimeoutError`; it raises :class:`SeatLost` when the seat is gone
    and :class:`PlatformFault` when the platform failed.  Notifications never
    raise: a seat that is gone ignores them and reports the loss at its next
    decision.
    """

    seat: int
    name: str
    version: str

    async def start_game(
        self, index: int, game_id: str, bot_seed: int, first: int, scores: tuple[int, ...], bags: tuple[int, ...]
    ) -> None: ...

    async def decide(self, prompt: DecisionPrompt, timeout: float) -> SeatReply: ...

    async def end_hand(
        self, hand: HandResult, tricks: tuple[Trick, ...], rules: Ruleset
    ) -> None: ...

    async def end_game(
        self, index: int, game_id: str, ending: str, winner: int | None, result: GameResult | None,
        scores: tuple[int, ...], bags: tuple[int, ...],
    ) -> None: ...

    async def notice(self, level: str, code: str, message: str, request_id: int = 0) -> None: ...

    def take_events(self) -> list[SeatEvent]:
        """Events since the last call (refused answers and the like)."""
        ...

    def lost(self) -> SeatLost | None:
        """Why the seat is gone, if it is."""
        ...


class OffTurnMeter(Protocol):
    """A seat that measures its CPU between decisions (docs/time-control.md, "Off-turn CPU").

    Its replies carry the span before each request (:attr:`SeatReply.offturn_cpu_s`); at the
    end of a game the match loop closes the last span (after the seat's last answer) here.
    Optional: the loop looks it up on the seat.
    """

    def offturn_tail(self) -> tuple[float | None, float]:
        """``(cpu_s, wall_s)`` since the seat's last answer in this game ((None, 0.0): not measured)."""
        ...


class CpuMeter(Protocol):
    """A seat's CPU clock: what the CPU move clock charges (docs/time-control.md).

    A :class:`RunningBot` that can measure its CPU has this method: a
    container reads its cgroup, a local process its process tree.  The
    referee reads it when a request is sent, polls it while the decision is
    open and reads it when the answer arrives.
    """

    def cpu_seconds(self) -> float | None:
        """CPU seconds the bot has used so far (monotonic), or None where it cannot be read."""
        ...


class RunningBot(Protocol):
    """A started bot, however it runs (local process, container)."""

    def exited(self) -> bool:
        """True once the bot's process has ended."""
        ...

    async def exit_detail(self) -> str:
        """Why it ended, e.g. ``exited with code 1`` or ``killed: out of memory``."""
        ...

    async def stop(self, grace: float = 2.0) -> int:
        """Stop it (TERM, grace, KILL) and clean up; returns the exit code."""
        ...
