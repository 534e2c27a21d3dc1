"""Duplicate pairs: the same deals at two tables, partnerships swapped, at the same time.

``arena sprt`` and the ladder play their games this way (a tournament plays a
whole pairing's tables from its schedule): a :class:`PairBatch` names a few
consecutive pairs and turns into two :class:`~arena.tables.spec.TableSpec`\\ s,
which the run loop (:class:`arena.tables.runner.Runner`) plays at once, each
by a table player (:class:`~arena.tables.players.LocalTables`: its own OS
process with its own referee, match loop and bots, so ``--concurrency N`` uses
up to N cores; the per-decision path never leaves that process).  Table 1
seats NEW as the first side (N/S, or player A), table 2 seats OLD there; both
start at once on *different* bot processes or containers and play the batch's
deals in order, so each table's bots stay up for the whole batch and no bot
ever meets a deal twice.

When a batch's tables end with some of its games not stored, :func:`unfinished`
says why each unfinished pair is unfinished (a line kept with the pair in the
store, quoted if the pair is given up) and which game each failed table was at
(voided: its attempt counts in the voids table, as a tournament's does).
Nothing here writes: the runner does, through the ledger.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from arena_sdk.engine import Ruleset

from arena.match import TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.host import DEFAULT_START_TIMEOUT_S
from arena.sandbox.docker import ContainerLimits
from arena.tables.rows import GameSlot
from arena.tables.runner import Job
from arena.tables.spec import SeatSpec, TableResult, TableSpec, seat_specs


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

    def job(self, tables: Iterable[int], cluster: Callable[[int], str], *, local: bool, images: Mapping[str, str | None]) -> Job:
        """The run loop's job for ``tables`` of this batch (pair ``p`` is deal ``p``, in ``cluster(p)``)."""
        tables = tuple(tables)
        new, old = self.names
        slots = {
            game: GameSlot(game, 0, pair, table, cluster(pair), *((new, old) if table == 1 else (old, new)), seed)
            for table in tables
            for game, pair, seed in zip(self.game_ids[table - 1], self.pairs, self.deal_seeds, strict=True)
        }
        return Job(
            key=self.batch_id,
            tables={n: self.table(n, local=local) for n in tables},
            slots=slots,
            images=images,
            log_dirs={n: self.table_log_dir(n) for n in tables},
        )


@dataclasses.dataclass(frozen=True)
class Unfinished:
    """What a start of a batch's tables left: each unfinished pair's reason, and the games to void."""

    reasons: dict[int, str]
    """Pair -> what happened to it at each of its missing tables (``; ``-joined)."""
    voids: list[tuple[str, str]]
    """(game id, void reason) of the game each failed table was at when it failed."""
    untried: set[int]
    """Pairs no table reached (each failed at an earlier pair's game): their start does not count."""


def unfinished(
    batch: PairBatch,
    tables: Iterable[int],
    results: Mapping[int, TableResult],
    void_games: Mapping[str, str],
    stored: Callable[[str], bool],
) -> Unfinished:
    """Why ``batch``'s pairs are not complete after its ``tables`` ended with ``results``.

    ``void_games``: the games a table reported void (game id -> the void's
    ending); ``stored``: whether a game is stored now.
    """
    reasons: dict[int, list[str]] = {}
    voids: list[tuple[str, str]] = []
    tried: set[int] = set()
    for table in tables:
        result = results.get(table)
        error = "its process ended without a result" if result is None else result.error
        sent = set() if result is None else {game.game_id for game in result.games}
        failed_at: str | None = None
        for pair, game_id in zip(batch.pairs, batch.game_ids[table - 1], strict=True):
            if stored(game_id):
                continue
            if failed_at is not None:
                why = f"table {table} failed before reaching it, at {failed_at} ({error})"
            elif game_id in void_games:
                why = f"its game at table {table} was void ({void_games[game_id]})"
            elif error is None:
                why = f"table {table} ended without playing its game"
            else:
                failed_at = game_id
                why = f"table {table} failed ({error})"
                if game_id not in sent:
                    voids.append((game_id, f"void:platform: {error}"))
            if failed_at is None or failed_at == game_id:
                tried.add(pair)
            reasons.setdefault(pair, []).append(why)
    return Unfinished({pair: "; ".join(lines) for pair, lines in reasons.items()}, voids, set(reasons) - tried)


__all__ = ["PairBatch", "Unfinished", "unfinished"]
