"""Play duplicate pairs: the same deals at two tables, partnerships swapped, at the same time.

This is the one place where ``arena sprt`` meets the machinery that plays
games. A :class:`PairBatch` (plain data) names a few consecutive pairs; both
of its tables are started at once on *different* bot processes or containers
(table 1 seats NEW as the first side — N/S, or player A — table 2 seats OLD
there) and play the batch's deals in order, so each table's bots stay up for
the whole batch and no bot ever meets a deal twice.

Each finished game is reported through ``on_game(table, outcome)`` as soon as
it is known. To run tables elsewhere (a pool of table processes, a cluster),
only :func:`play_table` has to change.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena_sdk.engine import Ruleset, team_of

from arena.match import GameOutcome, MatchSpec, TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.host import DEFAULT_START_TIMEOUT_S
from arena.referee.local_match import play_seated
from arena.sandbox.docker import ContainerLimits

#: ``on_game(table, outcome)``: table 1 seats NEW as the first side, table 2 seats OLD there.
OnGame = Callable[[int, GameOutcome], None]


@dataclasses.dataclass(frozen=True)
class TableTask:
    """One table of a batch, as plain data: who sits where and which deals they play."""

    match_id: str
    rules: Ruleset
    seats: tuple[BotSpec, ...]
    deal_seeds: tuple[str, ...]
    game_ids: tuple[str, ...]
    time_control: TimeControl
    log_dir: Path
    limits: ContainerLimits = ContainerLimits()
    start_timeout: float = DEFAULT_START_TIMEOUT_S


@dataclasses.dataclass(frozen=True)
class PairBatch:
    """Consecutive duplicate pairs played by the same two tables.

    ``deal_seeds[k]`` is pair ``pairs[k]``'s deal; ``game_ids[t][k]`` is its
    game at table ``t + 1``.
    """

    batch_id: str
    pairs: tuple[int, ...]
    deal_seeds: tuple[str, ...]
    game_ids: tuple[tuple[str, ...], tuple[str, ...]]
    new: BotSpec
    old: BotSpec
    rules: Ruleset
    time_control: TimeControl
    log_dir: Path
    limits: ContainerLimits = ContainerLimits()
    start_timeout: float = DEFAULT_START_TIMEOUT_S

    def table(self, number: int) -> TableTask:
        """Table ``number`` (1: NEW is the first side; 2: OLD is)."""
        first, second = (self.new, self.old) if number == 1 else (self.old, self.new)
        n = self.rules.players
        sides = (first, second)
        return TableTask(
            match_id=f"{self.batch_id}-t{number}",
            rules=self.rules,
            seats=tuple(sides[team_of(n, s)] for s in range(n)),
            deal_seeds=self.deal_seeds,
            game_ids=self.game_ids[number - 1],
            time_control=self.time_control,
            log_dir=self.log_dir / f"{Path(self.batch_id).name}-t{number}",
            limits=self.limits,
            start_timeout=self.start_timeout,
        )


async def play_table(
    task: TableTask, on_game: Callable[[GameOutcome], None], client: Any = None
) -> None:
    """Play one table's games on this machine: a referee, one bot process or container per seat."""
    spec = MatchSpec(
        match_id=task.match_id,
        rules=task.rules,
        deal_seeds=task.deal_seeds,
        time_control=task.time_control,
        game_ids=task.game_ids,
    )
    await play_seated(
        spec, list(task.seats), log_dir=task.log_dir, limits=task.limits,
        start_timeout=task.start_timeout, on_game_end=on_game, client=client,
    )  # fmt: skip


async def play_pairs(batch: PairBatch, on_game: OnGame, client: Any = None) -> None:
    """Play both tables of ``batch`` at the same time; report each game as it ends.

    If one table fails, the other still finishes (its games count once the
    failed table's games are played again); the first failure is raised
    after both have stopped. Cancelling stops both tables and their bots.
    """
    tables = [
        asyncio.ensure_future(play_table(batch.table(t), lambda g, t=t: on_game(t, g), client))
        for t in (1, 2)
    ]
    try:
        results = await asyncio.gather(*tables, return_exceptions=True)
    except asyncio.CancelledError:
        for task in tables:
            task.cancel()
        for task in tables:
            with contextlib.suppress(BaseException):
                await task
        raise
    for result in results:
        if isinstance(result, BaseException):
            raise result
