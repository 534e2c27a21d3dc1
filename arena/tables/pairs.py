"""Play duplicate pairs: the same deals at two tables, partnerships swapped, at the same time.

``arena sprt`` and the ladder play their games this way (a tournament plays a
whole pairing's tables from its schedule): a
:class:`PairBatch` names a few consecutive pairs and turns into two
:class:`~arena.tables.spec.TableSpec`\\ s, and each table is played by a
table player (:class:`~arena.tables.players.LocalTables`: its own OS process
with its own referee, match loop and bots, so ``--concurrency N`` uses up to N
cores; the per-decision path never leaves that process).  Table 1 seats NEW
as the first side (N/S, or player A), table 2 seats OLD there; both start at
once on *different* bot processes or containers and play the batch's deals in
order, so each table's bots stay up for the whole batch and no bot ever meets
a deal twice.

Each finished game is reported through ``on_game(table, game)`` on the
coordinator's (trio) thread as soon as the table process sends it, so the
coordinator stays the only writer of the results.  A table whose process dies
or whose platform fails comes back as a :class:`TableResult` with ``error``
set (never an exception), and the other table still finishes.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path

import trio
from arena_sdk.engine import Ruleset

from arena.match import TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.host import DEFAULT_START_TIMEOUT_S
from arena.sandbox.docker import ContainerLimits
from arena.tables.logs import write_logs
from arena.tables.players import TablePlayer
from arena.tables.spec import SeatSpec, TableGame, TableResult, TableSpec, seat_specs
from arena.tables.task import ImageMismatch

#: ``on_game(table, game)``: table 1 seats NEW as the first side, table 2 seats OLD there.
OnGame = Callable[[int, TableGame], None]


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
    names: tuple[str, str]
    """NEW's and OLD's entry names (what the seats are called in the results)."""
    rules: Ruleset
    time_control: TimeControl
    log_dir: Path
    run_id: str = ""
    """The test's run id: every container carries it (``arena.run``), so leftovers are found."""
    images: tuple[str | None, str | None] = (None, None)
    """NEW's and OLD's image IDs resolved at the start (containers start by ID: a moved tag changes nothing)."""
    limits: ContainerLimits = ContainerLimits()
    start_timeout: float = DEFAULT_START_TIMEOUT_S
    bot_seed_key: str = ""
    """Keys the bots' seeds (from the test's secret, never shown to bots)."""

    def table(self, number: int, *, local: bool = True) -> TableSpec:
        """Table ``number`` (1: NEW is the first side; 2: OLD is) as the kernel's table spec.

        ``local``: the table is played on this machine, so its bots write
        their logs straight into :meth:`table_log_dir`; a remote table (a Dask
        worker) returns them with its result instead.
        """
        bots = (self.new, self.old)
        first, second = (
            SeatSpec(self.names[i], bots[i].kind, bots[i].target, bots[i].env, self.images[i])
            for i in ((0, 1) if number == 1 else (1, 0))
        )
        return TableSpec(
            table_id=f"{Path(self.batch_id).name}-t{number}",
            match_id=f"{self.batch_id}-t{number}",
            run_id=self.run_id,
            rules=self.rules,
            game_ids=self.game_ids[number - 1],
            deal_seeds=self.deal_seeds,
            time_control=self.time_control,
            limits=self.limits,
            start_timeout=self.start_timeout,
            bot_seed_key=self.bot_seed_key,
            seats=seat_specs(self.rules, (first, second)),
            # Absolute: the table process is forked from a server, whatever the coordinator's cwd is later.
            log_dir=str(self.table_log_dir(number).resolve()) if local else None,
        )

    def table_log_dir(self, number: int) -> Path:
        """Where table ``number``'s bots' logs are kept on the coordinator's machine."""
        return self.log_dir / f"{Path(self.batch_id).name}-t{number}"


async def play_pairs(
    batch: PairBatch,
    on_game: OnGame,
    stop: threading.Event,
    player: TablePlayer,
    *,
    tables: tuple[int, ...] = (1, 2),
) -> dict[int, TableResult]:
    """Play the ``tables`` of ``batch`` (both by default) at the same time; report each game as it ends.

    Returns each table's result by number. A table that fails (its process
    killed, the platform down) has ``error`` set and does not stop the other:
    its games count once the failed table's games are played again (only that
    table: a pair played again passes the tables whose games are missing).
    Setting ``stop`` stops the tables and their bots (their results say ``stopped``).
    """
    results: dict[int, TableResult] = {}

    async def one(number: int) -> None:
        spec = batch.table(number, local=player.local)
        own: list[BaseException] = []  # an error of on_game is the coordinator's, not the table's

        def report(game: TableGame) -> None:
            try:
                on_game(number, game)
            except BaseException as exc:
                own.append(exc)
                raise

        try:
            results[number] = await player.play(spec, report, stop)
        except ImageMismatch as exc:  # the image is gone from this machine since the start
            results[number] = TableResult(spec.table_id, [], {}, error=f"ImageMismatch: {exc}")
        except Exception as exc:
            if own:
                raise
            # A platform fault of this table (it could not start): its pairs are played again.
            results[number] = TableResult(spec.table_id, [], {}, error=f"{type(exc).__name__}: {exc}")
        if results[number].logs:  # a remote table's logs, kept where a local one writes them
            write_logs(batch.table_log_dir(number), results[number].logs)

    async with trio.open_nursery() as nursery:
        for number in tables:
            nursery.start_soon(one, number)
    return results


__all__ = ["OnGame", "PairBatch", "play_pairs"]
