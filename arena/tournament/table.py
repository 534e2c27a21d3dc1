"""The table task: play one table from a plain spec on this machine, return plain data.

A *table* is one sitting: fixed seats playing a list of games (the two
duplicate tables of a pairing are two table tasks).  :func:`play_table` is the one function every way of
running a tournament calls: a table process on this machine
(:mod:`arena.tournament.processes`) and a Dask worker on another machine
(:mod:`arena.tournament.cluster`, docs/cluster.md).  It takes a :class:`TableSpec` made only of
plain values (it pickles anywhere the arena package is installed), runs the
referee and the bots on its own asyncio event loop exactly as ``arena match
run`` does, and returns a :class:`TableResult` of plain values: one
:class:`TableGame` per finished game (with its record), the bots' logs
(capped) and, if the platform failed, why.  It writes nothing the coordinator
stores: the coordinator stays the only writer of the results.

The table's deadline lives here, inside the task: a table never runs longer
than the longest a legal table can take, whoever runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.match import GameOutcome, MatchSpec, TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.local_match import play_seated
from arena.sandbox.docker import (
    RUN_LABEL,
    ContainerLimits,
    DockerUnavailable,
    ImageNotFound,
    docker_client,
    image_id,
    prune,
)
from arena_sdk.engine import Ruleset, team_of

#: Seconds a table may take beyond the longest legal play of its games (start-up, clean-up).
DEADLINE_SLACK_S = 120.0
#: How often the table looks at its stop flag and deadline.
POLL_S = 0.1


class ImageMismatch(RuntimeError):
    """This machine does not have an entry's image under the ID the tournament resolved.

    The table is not played here; another machine may have it.
    """

    def __init__(self, entry: str, detail: str) -> None:
        super().__init__(f"entry {entry!r}: {detail}")
        self.entry = entry
        self.detail = detail


@dataclasses.dataclass(frozen=True)
class SeatSpec:
    """The bot of one seat, as plain values."""

    entry: str
    kind: str
    """``cmd`` or ``docker``."""
    target: str
    """The command, or the image tag as written in the tournament file."""
    env: tuple[tuple[str, str], ...] = ()
    image_id: str | None = None
    """For ``docker``: the ID resolved on the coordinator; the container starts by this ID."""


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """Everything one table needs, as plain (picklable, JSON-able) values."""

    table_id: str
    match_id: str
    run_id: str
    rules: dict[str, Any]
    game_ids: tuple[str, ...]
    deal_seeds: tuple[str, ...]
    time_control: dict[str, Any]
    limits: dict[str, Any]
    start_timeout: float
    seats: tuple[SeatSpec, ...]
    log_dir: str | None = None
    """Where the bots' logs go on this machine; None: returned in the result instead."""
    check_tags: bool = False
    """Also refuse a machine whose tag names another image than the resolved ID (on a cluster)."""

    @property
    def deadline_s(self) -> float:
        """The longest this table can take when every bot uses all of its time, plus slack."""
        tc = TimeControl(**self.time_control)
        rules = Ruleset.from_dict(self.rules)
        # Per game and seat at most 13 plays and a bid (and a blind-nil or exchange choice) per hand.
        decisions = rules.max_hands * 16
        per_game = rules.players * (tc.bank_s + decisions * tc.move_s)
        return self.start_timeout + DEADLINE_SLACK_S + len(self.game_ids) * per_game


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


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def check_images(spec: TableSpec, client: Any) -> None:
    """Raise :class:`ImageMismatch` unless this engine has every seat's image under its resolved ID."""
    for seat in spec.seats:
        if seat.kind != "docker" or seat.image_id is None:
            continue
        try:
            found = image_id(client, seat.image_id)
        except ImageNotFound:
            raise ImageMismatch(seat.entry, f"image {seat.image_id[:19]} ({seat.target}) is not on this machine") from None
        if spec.check_tags:
            with contextlib.suppress(ImageNotFound):
                tagged = image_id(client, seat.target)
                if tagged != found:
                    raise ImageMismatch(
                        seat.entry, f"{seat.target} is {tagged[:19]} here, the tournament plays {found[:19]}"
                    )


def play_table(
    spec: TableSpec,
    *,
    on_game: Callable[[TableGame], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> TableResult:
    """Play one table on this machine on a fresh asyncio event loop; never raises for a platform fault.

    ``on_game`` is called with each game as it ends (the game is also in the
    result); ``stop`` is polled: when it returns True the table is stopped
    (bots stopped and removed) and the result holds the games played so far.
    :class:`ImageMismatch` is raised before anything starts if this machine
    lacks an image.
    """
    client = None
    if any(seat.kind == "docker" for seat in spec.seats):
        try:
            client = docker_client()
        except DockerUnavailable as exc:
            if spec.check_tags:  # on a cluster: a machine without Docker lacks the images, another plays
                entry = next(seat.entry for seat in spec.seats if seat.kind == "docker")
                raise ImageMismatch(entry, f"no Docker engine here ({exc})") from None
            return TableResult(spec.table_id, [], {}, error=f"DockerUnavailable: {exc}", worker=worker_name())
        check_images(spec, client)
    try:
        return asyncio.run(_play(spec, client, on_game, stop))
    finally:
        if client is not None:
            client.close()


async def _play(
    spec: TableSpec, client: Any, on_game: Callable[[TableGame], None] | None, stop: Callable[[], bool]
) -> TableResult:
    rules = Ruleset.from_dict(spec.rules)
    result = TableResult(spec.table_id, [], {}, worker=worker_name())

    def ended(outcome: GameOutcome) -> None:
        game = table_game(outcome, rules.players)
        result.games.append(game)
        if on_game is not None:
            on_game(game)

    match = MatchSpec(
        match_id=spec.match_id,
        rules=rules,
        deal_seeds=spec.deal_seeds,
        time_control=TimeControl(**spec.time_control),
        game_ids=spec.game_ids,
    )
    bots = [
        BotSpec(seat.kind, seat.image_id if seat.kind == "docker" and seat.image_id else seat.target, seat.env)
        for seat in spec.seats
    ]
    with tempfile.TemporaryDirectory(prefix="arena-logs-") as tmp:
        log_dir = Path(spec.log_dir) if spec.log_dir is not None else Path(tmp)
        play = asyncio.ensure_future(
            play_seated(
                match, bots, log_dir=log_dir, limits=ContainerLimits(**spec.limits),
                start_timeout=spec.start_timeout, on_game_end=ended, client=client,
                labels={RUN_LABEL: spec.run_id},
            )  # fmt: skip
        )
        deadline = time.monotonic() + spec.deadline_s
        try:
            while not play.done():
                if stop() or time.monotonic() > deadline:
                    result.stopped = not time.monotonic() > deadline
                    if not result.stopped:
                        result.error = f"the table ran past its deadline ({spec.deadline_s:.0f} s)"
                    play.cancel()  # host_match stops and removes the bots on the way out
                    with contextlib.suppress(asyncio.CancelledError):
                        await play
                    break
                await asyncio.wait({play}, timeout=POLL_S)
            else:
                play.result()
        except Exception as exc:
            # The platform failed for the whole table (Docker, the referee): the caller voids the rest.
            result.error = f"{type(exc).__name__}: {exc}"
        finally:
            if client is not None:
                # Containers a failing engine could not remove (this table's, this run's).
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(_prune_table, client, spec)
        if spec.log_dir is None:
            result.logs = _read_logs(log_dir, int(spec.limits.get("log_cap_bytes", 1 << 20)))
    return result


def _prune_table(client: Any, spec: TableSpec) -> None:
    prune(client, spec.match_id, run=spec.run_id, include_running=True)


def _read_logs(log_dir: Path, cap: int) -> dict[str, bytes]:
    """The bots' log files (already capped by the sandbox; capped again in case)."""
    logs = {}
    for path in sorted(log_dir.glob("*.log")):
        with contextlib.suppress(OSError), path.open("rb") as f:
            logs[path.name] = f.read(cap + 4096)
    return logs


__all__ = [
    "ImageMismatch", "SeatSpec", "TableGame", "TableResult", "TableSpec", "check_images", "play_table",
]  # fmt: skip
