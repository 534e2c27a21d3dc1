"""What a table is and what it gives back: the kernel's value objects.

A *table* is one sitting: fixed seats (containers or local processes) playing
a list of games with given deal seeds.  A :class:`TableSpec` says everything a
table needs and a :class:`TableResult` everything it returns; both are made of
frozen value objects (the ruleset, the time control, the container limits are
the very objects the configuration built, not dicts), so they pickle to a
table process or a Dask worker unchanged and nothing is converted on the way.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from arena_sdk.engine import Ruleset, team_of

from arena.match import GameOutcome, TimeControl
from arena.sandbox.docker import ContainerLimits

#: Seconds a table may take beyond the longest legal play of its games (start-up, clean-up).
DEADLINE_SLACK_S = 120.0


@dataclasses.dataclass(frozen=True)
class SeatSpec:
    """The bot of one seat."""

    entry: str
    kind: str
    """``cmd`` or ``docker``."""
    target: str
    """The command, or the image tag as written in the configuration."""
    env: tuple[tuple[str, str], ...] = ()
    image_id: str | None = None
    """For ``docker``: the ID resolved when the run started; the container starts by this ID."""


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """Everything one table needs (picklable: it crosses to a table process or a Dask worker)."""

    table_id: str
    match_id: str
    run_id: str
    rules: Ruleset
    game_ids: tuple[str, ...]
    deal_seeds: tuple[str, ...]
    time_control: TimeControl
    limits: ContainerLimits
    start_timeout: float
    seats: tuple[SeatSpec, ...]
    log_dir: str | None = None
    """Where the bots' logs go on this machine; None: returned in the result instead."""
    check_tags: bool = False
    """Also refuse a machine whose tag names another image than the resolved ID (on a cluster)."""
    bot_seed_key: str = ""
    """Keys the bots' seeds (:func:`arena.match.seeds.bot_seed_key`): from the run's secret, never shown to bots."""
    live: bool = False
    """Report each decision's public view as it is played (the ladder's spectators; local tables only)."""

    @property
    def uses_docker(self) -> bool:
        """Whether any seat is a container."""
        return any(seat.kind == "docker" for seat in self.seats)

    @property
    def deadline_s(self) -> float:
        """The longest this table can take when every bot uses all of its time, plus slack."""
        tc = self.time_control
        # Per game and seat at most 13 plays and a bid (and a blind-nil or exchange choice) per
        # hand, and in the two-player game 13 draft choices before them.
        decisions = self.rules.max_hands * (16 + (13 if self.rules.players == 2 else 0))
        # On the wall clock the bank and a move time a decision; on the CPU clock the wall
        # allowance (arena.match.spec.CPU_WALL_FACTOR times that), each decision at most the hard cap.
        per_game = self.rules.players * tc.game_wall_s(decisions)
        return self.start_timeout + DEADLINE_SLACK_S + len(self.game_ids) * per_game


def seat_specs(rules: Ruleset, sides: tuple[SeatSpec, SeatSpec]) -> tuple[SeatSpec, ...]:
    """Every seat of a table whose first side (N/S, or player A) is ``sides[0]``."""
    n = rules.players
    return tuple(sides[team_of(n, s)] for s in range(n))


@dataclasses.dataclass(frozen=True)
class TableGame:
    """One finished (or voided) game, as plain values."""

    game_id: str
    ending: str
    winner: int | None
    """The winning side (0: side 0), None for a draw or a void."""
    scores: tuple[int, int]
    hands: int
    forfeit_sides: tuple[int, ...]
    forfeit_reason: str | None
    forfeit_detail: str | None
    void: str | None
    """Why the game is void (a platform fault), else None."""
    strikes: tuple[int, int]
    decisions: int
    think_seconds: float
    record: dict[str, Any]


@dataclasses.dataclass
class TableResult:
    """What a table task returns."""

    table_id: str
    games: list[TableGame]
    logs: dict[str, bytes]
    """File name -> capped content, when the spec had no ``log_dir``."""
    error: str | None = None
    """The platform failed for the table: its games not in ``games`` are void."""
    worker: str = ""
    """Where it ran (host name and process id)."""
    stopped: bool = False
    """Stopped on request (Ctrl-C) before the end."""


def table_game(outcome: GameOutcome, players: int) -> TableGame:
    """A game outcome as plain values (what crosses processes and machines)."""
    forfeit = outcome.forfeit
    strikes = [0, 0]
    for s, st in enumerate(outcome.stats):
        strikes[team_of(players, s)] += st.strikes
    return TableGame(
        game_id=outcome.game_id,
        ending=outcome.ending,
        winner=outcome.winner,
        scores=(outcome.result.scores[0], outcome.result.scores[1]),
        hands=outcome.result.hands,
        forfeit_sides=tuple(0 if t in ("NS", "A") else 1 for t in forfeit["teams"]) if forfeit else (),
        forfeit_reason=None if forfeit is None else forfeit["reason"],
        forfeit_detail=None if forfeit is None else str(forfeit.get("detail", ""))[:500],
        void=None if outcome.void is None else f"{outcome.ending}: {outcome.void.get('detail', '')}",
        strikes=(strikes[0], strikes[1]),
        decisions=sum(st.decisions for st in outcome.stats),
        think_seconds=round(sum(st.think_s for st in outcome.stats), 6),
        record=outcome.record,
    )


__all__ = [
    "DEADLINE_SLACK_S", "SeatSpec", "TableGame", "TableResult", "TableSpec", "seat_specs", "table_game",
]  # fmt: skip
