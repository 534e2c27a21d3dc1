"""What a match is: the ruleset, the games and their seeds, the time control.

A match is a self-contained call: a :class:`MatchSpec` in, an outcome and
records out, no shared state (so a scheduler can later hand matches to remote
workers).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from arena_sdk.engine import Ruleset
from arena_sdk.engine.policy import bot_seed

from arena.match.seeds import derive_seed

if TYPE_CHECKING:
    from arena.match.undo import UndoBook

__all__ = [
    "CLOCKS", "CPU_WALL_FACTOR", "DEFAULT_HARD_CAP_S", "MAX_SECONDS", "OFFTURN_FREE_S", "OFFTURN_SHARE", "MatchSpec",
    "TimeControl", "bot_seed", "check_seconds", "default_hard_cap", "game_seeds",
]  # fmt: skip


#: The longest any time value may be, in seconds: one day.  Far beyond any real
#: game, and its milliseconds fit the protocol's uint32 fields with room to spare.
MAX_SECONDS = 86_400.0
#: The most strikes a game may allow (sent as a uint32 too).
MAX_STRIKES = 10_000


def check_seconds(value: float, what: str, *, minimum: float = 0.0, inclusive: bool = True) -> None:
    """Refuse a time that is not a finite number of seconds in ``[minimum, MAX_SECONDS]``.

    ``inclusive=False`` makes the minimum itself invalid (``> minimum``).  Raises
    ``ValueError`` with one line naming ``what``; nan and inf are refused too.
    """
    low_ok = value >= minimum if inclusive else value > minimum
    if isinstance(value, bool) or not math.isfinite(value) or not low_ok or value > MAX_SECONDS:
        low = f"{'at least' if inclusive else 'more than'} {minimum:g} s"
        raise ValueError(f"{what} must be {low} and at most {MAX_SECONDS:g} s (one day), got {value}")


#: The hard cap on one decision when none is given (or the move time, if longer).
DEFAULT_HARD_CAP_S = 60.0


def default_hard_cap(move_s: float) -> float:
    """The hard cap when none is given: :data:`DEFAULT_HARD_CAP_S`, or the move time if longer."""
    return max(DEFAULT_HARD_CAP_S, move_s)


#: What a decision is charged by: ``wall`` (elapsed time, the default) or ``cpu``
#: (the seat's CPU time, with ``hard_cap_s`` still a wall cap): docs/time-control.md.
CLOCKS = ("wall", "cpu")

#: Under the CPU clock, the wall time a seat may spend in a game, as a multiple of its CPU
#: allowance: it starts with this times the bank and each decision adds this times the move
#: time; each decision's wall time is taken off and a decision past what is left is struck.
#: At 4 a machine four times oversubscribed still never strikes a bot that stays within its
#: CPU, while a bot that sleeps cannot hold a table for the hard cap at every decision
#: (docs/time-control.md, "The wall allowance").
CPU_WALL_FACTOR = 4.0

#: Off-turn CPU (docs/time-control.md, "Off-turn CPU"): the CPU a seat uses while it is not
#: asked (from its answer, or the game's start, to its next request), on either clock, where
#: its CPU can be read.  A seat is struck (``offturn``) when that CPU, counted since the game's
#: start or its last off-turn strike, passes OFFTURN_FREE_S plus OFFTURN_SHARE of the wall time
#: it was not asked over the same spans.  An honest bot uses a few ms a game (its transport, a
#: hand's bookkeeping); a background thread that uses a quarter of a core while the others
#: think is within it; a thread that spins uses a whole core and is struck every few seconds.
OFFTURN_FREE_S = 1.0
OFFTURN_SHARE = 0.25
#: The largest off-turn share a TimeControl takes (CPU seconds per wall second: cores).
MAX_OFFTURN_SHARE = 1024.0


@dataclasses.dataclass(frozen=True)
class TimeControl:
    """Per-decision limit, per-game bank, hard cap, strikes that forfeit a game, and the clock.

    Every value is checked: finite, in range, and small enough for the
    millisecond fields of the protocol's Welcome (see :data:`MAX_SECONDS`).
    With ``clock="cpu"`` the move time and bank count the seat's CPU time and
    the hard cap stays wall time (a sleeping bot is still struck).
    """

    move_s: float = 1.0
    bank_s: float = 30.0
    hard_cap_s: float = DEFAULT_HARD_CAP_S
    strikes_to_forfeit: int = 3
    clock: str = "wall"
    offturn_free_s: float = OFFTURN_FREE_S
    """Off-turn CPU a seat may use per game (or since its last off-turn strike) besides its share."""
    offturn_share: float = OFFTURN_SHARE
    """The share of the wall time it is not asked that a seat may use in CPU then (0.25: a quarter core)."""

    @property
    def cpu(self) -> bool:
        """True when decisions are charged CPU time (``clock == "cpu"``)."""
        return self.clock == "cpu"

    def game_wall_s(self, decisions: int) -> float:
        """The most wall time one seat can take over ``decisions`` decisions of a game.

        The wall clock: its bank and a move time a decision.  The CPU clock:
        its wall allowance (:data:`CPU_WALL_FACTOR`), and at most the hard
        cap a decision.  (The referee's own stalls come on top.)
        """
        if not self.cpu:
            return self.bank_s + decisions * self.move_s
        return min(decisions * self.hard_cap_s, CPU_WALL_FACTOR * (self.bank_s + decisions * self.move_s))

    def __post_init__(self) -> None:
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {self.clock!r}")
        check_seconds(self.move_s, "move time", minimum=0.001)  # at least 1 ms: the wire counts ms
        check_seconds(self.bank_s, "time bank")
        check_seconds(self.hard_cap_s, "hard cap", minimum=0.001)
        if self.hard_cap_s < self.move_s:
            raise ValueError(
                f"hard cap ({self.hard_cap_s} s) must be at least the move time ({self.move_s} s)"
            )
        check_seconds(self.offturn_free_s, "off-turn CPU allowance")
        if isinstance(self.offturn_share, bool) or not 0 <= self.offturn_share <= MAX_OFFTURN_SHARE:
            raise ValueError(f"off-turn CPU share must be between 0 and {MAX_OFFTURN_SHARE:g}, got {self.offturn_share}")
        if not 1 <= self.strikes_to_forfeit <= MAX_STRIKES:
            raise ValueError(f"strikes to forfeit must be between 1 and {MAX_STRIKES}, got {self.strikes_to_forfeit}")


def game_seeds(match_seed: int | str, games: int) -> list[str]:
    """Deal seeds for the games of a match: one-way hashes of the match seed (:mod:`arena.match.seeds`).

    Hex text, so a bot shown its per-game seed (see :func:`bot_seed`) cannot
    search a small space of deal seeds; a guessable match seed is still
    guessable (``arena match run`` says so).
    """
    return [derive_seed(None, "match", str(match_seed), i) for i in range(games)]


@dataclasses.dataclass(frozen=True)
class MatchSpec:
    """One match: the same seats play ``len(deal_seeds)`` games."""

    match_id: str
    rules: Ruleset
    deal_seeds: tuple[str, ...]
    time_control: TimeControl = TimeControl()
    game_ids: tuple[str, ...] = ()
    bot_seed_key: str = ""
    """Keys the seats' bot seeds (:func:`arena.match.seeds.bot_seed_key`); "": they follow from the deal seeds."""
    observe: Callable[[str, Any], None] | None = dataclasses.field(default=None, compare=False, repr=False)
    """Called with (game id, the engine's game state) after each decision is applied: a live feed
    (the ladder's spectators, :mod:`arena.ladder.games.live`). It must not change the state."""
    undo: UndoBook | None = dataclasses.field(default=None, compare=False, repr=False)
    """Unrated play only (a table with a person): the seats whose decisions may be taken back
    (:mod:`arena.match.undo`); None everywhere else."""

    def bot_seed(self, index: int, seat: int) -> int:
        """The bot seed of ``seat`` in game ``index``."""
        return bot_seed(self.deal_seeds[index], seat, self.bot_seed_key)

    def game_id(self, index: int) -> str:
        """The id of game ``index`` (given, or derived from the match id)."""
        if self.game_ids:
            return self.game_ids[index]
        return f"{self.match_id}-g{index + 1}"
