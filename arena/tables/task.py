"""The table task: play one table from its spec on this machine, return plain data.

A *table* is one sitting: fixed seats playing a list of games (the two
duplicate tables of a pairing are two table tasks).  :func:`play_table` is the
one function every runner calls (tournaments, ``arena sprt``, the ladder),
through a table player: a table process on this machine
(:mod:`arena.tables.processes`) or a Dask worker on another machine
(:mod:`arena.tables.cluster`, docs/cluster.md).  It takes a :class:`TableSpec`
of value objects (it pickles anywhere the arena package is installed), runs the
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
import os
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.match import GameOutcome, MatchSpec
from arena.referee.botspec import BotSpec
from arena.referee.local_match import play_seated
from arena.sandbox.docker import (
    RUN_LABEL,
    DockerUnavailable,
    ImageNotFound,
    docker_client,
    image_id,
)
from arena.tables.containers import prune_table
from arena.tables.spec import TableGame, TableResult, TableSpec, table_game

#: How often the table looks at its stop flag and deadline.
POLL_S = 0.1


class ImageMismatch(ArenaError):
    """This machine does not have an entry's image under the ID the run resolved.

    The table is not played here; another machine may have it.
    """

    def __init__(self, entry: str, detail: str) -> None:
        super().__init__(f"entry {entry!r}: {detail}")
        self.entry = entry
        self.detail = detail


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
    on_live: Callable[[str, int, bytes], None] | None = None,
) -> TableResult:
    """Play one table on this machine on a fresh asyncio event loop; never raises for a platform fault.

    ``on_game`` is called with each game as it ends (the game is also in the
    result); ``stop`` is polled: when it returns True the table is stopped
    (bots stopped and removed) and the result holds the games played so far.
    :class:`ImageMismatch` is raised before anything starts if this machine
    lacks an image.  ``on_live`` (with ``spec.live``) gets, after each
    decision, the game id, the seat to move (-1: none) and a view with no
    hand in it (a serialised ``SeatView``): the ladder's live spectators.
    """
    client = None
    if spec.uses_docker:
        try:
            client = docker_client()
        except DockerUnavailable as exc:
            if spec.check_tags:  # on a cluster: a machine without Docker lacks the images, another plays
                entry = next(seat.entry for seat in spec.seats if seat.kind == "docker")
                raise ImageMismatch(entry, f"no Docker engine here ({exc})") from None
            return TableResult(spec.table_id, [], {}, error=f"DockerUnavailable: {exc}", worker=worker_name())
        check_images(spec, client)
    try:
        return asyncio.run(_play(spec, client, on_game, stop, on_live if spec.live else None))
    finally:
        if client is not None:
            client.close()


async def _play(
    spec: TableSpec,
    client: Any,
    on_game: Callable[[TableGame], None] | None,
    stop: Callable[[], bool],
    on_live: Callable[[str, int, bytes], None] | None = None,
) -> TableResult:
    rules = spec.rules
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
        time_control=spec.time_control,
        game_ids=spec.game_ids,
        bot_seed_key=spec.bot_seed_key,
        observe=None if on_live is None else _live_feed(on_live),
    )
    bots = [
        BotSpec(seat.kind, seat.image_id if seat.kind == "docker" and seat.image_id else seat.target, seat.env)
        for seat in spec.seats
    ]
    with tempfile.TemporaryDirectory(prefix="arena-logs-") as tmp:
        log_dir = Path(spec.log_dir) if spec.log_dir is not None else Path(tmp)
        play = asyncio.ensure_future(
            play_seated(
                match, bots, log_dir=log_dir, limits=spec.limits,
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
                    await asyncio.to_thread(prune_table, spec, client)
        if spec.log_dir is None:
            result.logs = _read_logs(log_dir, spec.limits.log_cap_bytes)
    return result


def pb_seat_view(**fields: Any) -> Any:
    """A protocol ``SeatView`` (imported here: the table process has the SDK's wire module loaded anyway)."""
    from arena_sdk.wire import arena_pb2

    return arena_pb2.SeatView(**fields)


def _live_feed(on_live: Callable[[str, int, bytes], None]) -> Callable[[str, Any], None]:
    """The match's observer for a live feed: seat 0's view with every private field cleared.

    When a decision ends a hand, the finished hand goes first (its bids, its
    13 tricks, the last one included): the next view is already the next hand's.
    """
    from arena_sdk.protocol import trick_to_proto, view_to_proto

    hands_seen = [0]

    def observe(game_id: str, state: Any) -> None:
        if len(state.hand_results) > hands_seen[0] and not state.is_over:
            hands_seen[0] = len(state.hand_results)
            hand = state.hand_results[-1]
            done = pb_seat_view(
                seat=0, hand_number=hand.number, first=hand.first, bids=list(hand.bids), blind=list(hand.blind),
                tricks_won=list(hand.tricks), leader=-1, spades_broken=True,
                scores=[team.score_before for team in hand.teams], bags=[team.bags_before for team in hand.teams],
                exchanged=list(hand.exchanged),
            )  # fmt: skip
            done.tricks.extend(trick_to_proto(trick) for trick in hand.played)
            on_live(game_id, -1, done.SerializeToString())
        hands_seen[0] = len(state.hand_results)
        view = view_to_proto(state.view(0))
        for private in ("hand", "offered_card", "seen_discards"):  # a hand never leaves the table process
            view.ClearField(private)
        to_move = state.to_move
        on_live(game_id, -1 if to_move is None else int(to_move), view.SerializeToString())

    return observe


def _read_logs(log_dir: Path, cap: int) -> dict[str, bytes]:
    """The bots' log files (already capped by the sandbox; capped again in case)."""
    logs = {}
    for path in sorted(log_dir.glob("*.log")):
        with contextlib.suppress(OSError), path.open("rb") as f:
            logs[path.name] = f.read(cap + 4096)
    return logs


__all__ = ["ImageMismatch", "check_images", "play_table", "worker_name"]
