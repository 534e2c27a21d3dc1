"""Practice tables on the ladder's site: a team's member plays with and against active versions, unrated.

A practice table is an ``arena play`` table (:class:`arena.play.table.PlayTable`):
the person's seat is a :class:`~arena.play.seat.HumanSeat`, a client of the
referee's protocol like any bot, and the bots are the versions' images in
containers with the ladder's own limits (``[limits]``), exactly as the
ladder seats them, labelled with the ladder's run label (``arena.run``): the
ladder's prune, at its start and its stop, removes any a crash left behind.

Where it runs: on the site's event loop (the web server's thread), beside the
page's WebSocket, so a click reaches the referee without crossing a thread;
the ladder's own loop (trio, another thread) is not touched; its store calls run in
worker threads (a store waiting for its lock never stalls the site).  It is bounded by
``[play]``: ``tables`` at once (all teams), ``per_team_per_day`` per team.
When the ladder stops (Ctrl-C, SIGTERM) every practice table is cancelled:
its bots are stopped and removed, its row says ``stopped``.

Practice games go to their own store (:mod:`arena.ladder.games.practice_store`,
``DIR/practice.sqlite``) and their records under ``DIR/practice/TABLE/``:
nothing the ratings or the standings read.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.ladder.games.practice_store import PracticeStore
from arena.play.table import PlayTable, TableConfig, person_time_control
from arena.referee.botspec import BotSpec
from arena.sandbox.docker import RUN_LABEL
from arena.tables.containers import prune_run

log = logging.getLogger("arena.ladder.practice")

#: How often the tables look at the ladder's stop flag.
STOP_POLL_S = 0.25
#: How long a person's seat waits for the page to come back before the game is abandoned.
RECONNECT_S = 60.0
#: Finished tables kept in memory (their page still shows the end and the replay link).
KEEP_FINISHED = 64


class PracticeRefused(ArenaError):
    """A practice table that cannot be opened now: the message says why (off, full, quota used, not active)."""


@dataclasses.dataclass(frozen=True)
class SeatBot:
    """A bot seat of a practice table: a version's entry and its image."""

    entry: str
    image_id: str


@dataclasses.dataclass
class Practice:
    """One practice table: its row in the store, its team, its ``arena play`` table."""

    id: int
    team: str
    table: PlayTable
    task: asyncio.Task[None] | None = None

    @property
    def key(self) -> str:
        return self.table.key


class PracticeTables:
    """The ladder's practice tables (one per site); every method runs on the site's event loop.

    ``config``: the ladder's :class:`~arena.ladder.config.LadderConfig`;
    ``stopping``: whether the ladder is stopping.
    """

    def __init__(self, config: Any, store: PracticeStore, run_id: str, stopping: Callable[[], bool]) -> None:
        self.config = config
        self.settings = config.play
        self.store = store
        self.run_id = run_id
        self.stopping = stopping
        self.running: dict[str, Practice] = {}
        self.finished: dict[str, Practice] = {}
        self._watcher: asyncio.Task[None] | None = None
        #: Tables whose row is being written (in a worker thread): they hold their place among ``tables``.
        self._opening = 0

    # ------------------------------------------------------------ opening

    def refusal(self, team: str) -> str | None:
        """Why ``team`` cannot open a table now (None: it can); the store's count is checked again on opening.

        Blocking (the store): call it from a worker thread, not the event loop.
        """
        reason = self._refusal_now()
        if reason is None and self.store.opened_today(team) >= self.settings.per_team_per_day:
            return self._quota_used()
        return reason

    def _refusal_now(self) -> str | None:
        """The reasons that need no store: turned off, stopping, every table in use (those being opened too)."""
        if not self.settings.enabled:
            return "Practice tables are turned off on this ladder (the organiser's [play] enabled = false)."
        if self.stopping():
            return "The ladder is stopping: no practice table can be opened now."
        if len(self.running) + self._opening >= self.settings.tables:
            return f"All {self.settings.tables} practice tables are in use; try again in a few minutes."
        return None

    def _quota_used(self) -> str:
        n = self.settings.per_team_per_day
        return f"Your team has opened its {n} practice table{'s' if n != 1 else ''} for today (UTC); try again tomorrow."

    async def open(self, team: str, seat: int, bots: Sequence[SeatBot | None]) -> Practice:
        """Open a table for ``team``: the person at ``seat``, ``bots`` (None at the person's seat) elsewhere.

        Raises :class:`PracticeRefused` with the reason.  The table's row is
        written in a worker thread (the store may wait for its lock: never on
        the event loop), its place among ``tables`` held meanwhile; the match
        starts at once on the running event loop; the person's seat waits for
        the page.
        """
        reason = self._refusal_now()
        if reason is not None:
            raise PracticeRefused(reason)
        seats = ["person" if b is None else b.entry for b in bots]
        self._opening += 1  # its place is taken while its row is written (another open meanwhile sees it)
        try:
            table_id = await asyncio.to_thread(self.store.add, team, seats, self.settings.per_team_per_day)
        finally:
            self._opening -= 1
        if table_id is None:
            raise PracticeRefused(self._quota_used())
        match_id = f"practice-{table_id}-{secrets.token_hex(3)}"
        table_config = TableConfig(
            rules=self.config.rules, seat=seat,
            bots=tuple(None if b is None else BotSpec("docker", b.image_id) for b in bots),
            names=tuple("" if b is None else b.entry for b in bots),
            out_dir=practice_dir(self.config.directory, table_id),
            seed=secrets.token_hex(16), games=1, time_control=person_time_control(),
            reconnect_s=RECONNECT_S, start_timeout=self.config.start_timeout, match_id=match_id,
            limits=self.config.limits, labels={RUN_LABEL: self.run_id},
        )  # fmt: skip
        practice = Practice(table_id, team, PlayTable(table_config, key=secrets.token_urlsafe(24)))
        practice.table.new_game_link = "/me#practice"  # another table is opened (and counted) on the team's page
        self.running[practice.key] = practice
        practice.task = asyncio.get_running_loop().create_task(self._run(practice), name=f"practice-{table_id}")
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._watch_stop(), name="practice-stop")
        return practice

    # ------------------------------------------------------------ finding one

    def table_of(self, key: str, team: str | None) -> PlayTable | None:
        """The table with ``key`` if it is ``team``'s (a table is bound to its team's session), else None."""
        practice = self.running.get(key) or self.finished.get(key)
        if practice is None or team is None or practice.team != team:
            return None
        return practice.table

    # ------------------------------------------------------------ playing

    async def _run(self, practice: Practice) -> None:
        table = practice.table
        status = "failed"
        try:
            await table.run()
            status = "abandoned" if table.seat.abandoned else "done"
        except asyncio.CancelledError:
            status = "stopped"
            raise
        except Exception:
            log.exception("practice table %s failed", practice.id)
        finally:
            if self.stopping():
                status = "stopped"  # its bots may have been removed under it: not the bots' game
            with contextlib.suppress(BaseException):  # the store may wait for its lock: not on the event loop
                await asyncio.shield(asyncio.to_thread(self._store_end, practice, status))
            with contextlib.suppress(BaseException):
                await table.close()
            self.running.pop(practice.key, None)
            self.finished[practice.key] = practice
            while len(self.finished) > KEEP_FINISHED:
                self.finished.pop(next(iter(self.finished)))
            # Whatever a failing engine left of this table's containers (the ladder's prune would, later).
            with contextlib.suppress(BaseException):
                await asyncio.shield(asyncio.to_thread(prune_run, self.run_id, table.match_id))

    def _store_end(self, practice: Practice, status: str) -> None:
        table = practice.table
        game = table.outcomes[0] if table.outcomes else None
        record = table.records.get(game.game_id) if game is not None else None
        try:
            self.store.finish(
                practice.id, status if game is not None or status != "done" else "failed",
                game_id=game.game_id if game else None, ending=game.ending if game else None,
                scores=(game.result.scores[0], game.result.scores[1]) if game else None,
                record=str(record.relative_to(self.config.directory)) if record is not None else None,
            )  # fmt: skip
        except Exception:
            log.exception("practice table %s: its end could not be stored", practice.id)

    async def _watch_stop(self) -> None:
        """Cancel every practice table once the ladder is stopping (their bots are stopped and removed)."""
        while self.running:
            if self.stopping():
                await self.close()
                return
            await asyncio.sleep(STOP_POLL_S)

    async def close(self) -> None:
        """Stop every running practice table and wait for them to end."""
        tasks = [p.task for p in self.running.values() if p.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def practice_dir(directory: Path, table_id: int) -> Path:
    """Where practice table ``table_id`` writes its record, ``play.json`` and its bots' logs."""
    return directory / "practice" / f"p{table_id}"


__all__ = ["Practice", "PracticeRefused", "PracticeTables", "SeatBot", "practice_dir"]
