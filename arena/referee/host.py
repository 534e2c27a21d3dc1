"""Host one match: register its seats with the referee, start the bots, play, clean up.

``host_match`` is the self-contained "play one match" call: a spec and the
bots' launchers in, the outcome (with records) out.  Bots are started by
launchers (local processes here; containers in the sandbox) so this module
does not care how a bot runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.match import GameOutcome, MatchOutcome, MatchSpec, run_match_loop
from arena.match.seat import RunningBot
from arena.match.clock import Clock
from arena.referee.server import RefereeServer
from arena.referee.session import RemoteSeat, platform_fault_of
from arena.sandbox.docker import (
    MATCH_LABEL,
    SOCKET_DIR_IN_CONTAINER,
    ContainerLimits,
    DockerProcess,
)
from arena.sandbox.local import LocalProcess
from arena_sdk.engine import seat_name

log = logging.getLogger(__name__)

ENV_ADDRESS = "ARENA_ADDRESS"
#: The referee's socket file (in a seat's socket directory, or a shared one).
SOCKET_NAME = "referee.sock"
ENV_TOKEN = "ARENA_TOKEN"
DEFAULT_START_TIMEOUT_S = 20.0
#: How long bots get to exit by themselves after the match before TERM.
EXIT_GRACE_S = 2.0


def seat_socket_dir(match_dir: Path, players: int, seat: int) -> Path:
    """Seat ``seat``'s own socket directory in a match's socket directory: ``seat-N`` (its letter).

    The seat's listener puts its ``referee.sock`` there; a container seat
    mounts only this directory (at /arena), so it sees no other seat's socket.
    """
    return match_dir / f"seat-{seat_name(players, seat)}"


#: Starts the bot of one seat: ``(seat, address, token, log_path) -> RunningBot``.
Launcher = Callable[[int, str, str, Path | None], Awaitable[RunningBot]]


def command_launcher(command: str, env: Mapping[str, str] | None = None) -> Launcher:
    """A launcher that runs ``command`` as a local process (``env`` added to its environment).

    The token is not put in the environment (other local processes of the
    user could read it there): the bot reads it from the pipe named by
    ``ARENA_TOKEN_FILE`` (the SDK does).  Local bots are not sandboxed.
    """

    async def launch(seat: int, address: str, token: str, log_path: Path | None) -> RunningBot:
        return await LocalProcess.start(
            command, {**(env or {}), ENV_ADDRESS: address}, log_path=log_path, secrets={ENV_TOKEN: token}
        )

    return launch


def docker_launcher(
    client: Any,
    image: str,
    socket_dir: Path,
    match_id: str,
    limits: ContainerLimits,
    extra_env: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Launcher:
    """A launcher that runs ``image`` in a sandboxed container joined through ``socket_dir``.

    ``socket_dir`` is the directory the container mounts at /arena: the seat's
    own (:func:`seat_socket_dir`), holding its ``referee.sock``.

    ``labels`` go on every container (e.g. ``arena.run``: the run that owns it).
    In a container the token is in ``ARENA_TOKEN``: a seat sees only its own processes.
    """

    async def launch(seat: int, address: str, token: str, log_path: Path | None) -> RunningBot:
        env = {
            **(extra_env or {}),
            ENV_ADDRESS: f"unix:{SOCKET_DIR_IN_CONTAINER}/{SOCKET_NAME}",
            ENV_TOKEN: token,
        }
        seat_labels = {**(labels or {}), MATCH_LABEL: match_id, "arena.seat": str(seat)}
        return await DockerProcess.start(
            client, image, env, socket_dir, limits=limits, labels=seat_labels, log_path=log_path
        )

    return launch


@dataclasses.dataclass
class HostedMatch:
    """A match's outcome and its bots' exit codes."""

    outcome: MatchOutcome
    exit_codes: list[int | None]


async def host_match(
    server: RefereeServer,
    spec: MatchSpec,
    launchers: Sequence[Launcher | None],
    address: str | Sequence[str],
    *,
    start_timeout: float = DEFAULT_START_TIMEOUT_S,
    log_dir: Path | None = None,
    clock: Clock | None = None,
    seats: Sequence[RemoteSeat] | None = None,
    on_game_end: Callable[[GameOutcome], Any] | None = None,
) -> HostedMatch:
    """Play ``spec`` on ``server`` with one launcher per seat (``None``: the bot joins by itself).

    Bots get ``address`` (one shared address, or one per seat) and their seat's token.  Seats that have not joined
    after ``start_timeout`` seconds forfeit (``crash`` if their process has
    exited, else ``timeout``).  Bots are always stopped, also on errors and
    cancellation.
    """
    n = spec.rules.players
    seats = list(seats) if seats is not None else [RemoteSeat(s, spec.match_id) for s in range(n)]
    match = server.add_match(spec.match_id, spec.rules, spec.time_control, len(spec.deal_seeds), seats)
    bots: list[RunningBot | None] = [None] * n
    try:
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
        started = await asyncio.gather(
            *(
                _launch(launcher, s, address if isinstance(address, str) else address[s], seats[s].token, log_dir)
                for s, launcher in enumerate(launchers)
            ),
            return_exceptions=True,  # keep every bot that did start, so all are stopped
        )
        platform_error: BaseException | None = None
        for s, bot in enumerate(started):
            if isinstance(bot, OSError):
                # The bot's own command cannot run (no such file, not executable): its crash.
                seats[s].mark_lost("crash", f"could not start the bot: {bot}")
            elif isinstance(bot, BaseException):
                platform_error = platform_error or bot
            else:
                bots[s] = bot
                seats[s].process = bot
        if platform_error is not None:
            raise platform_error  # the platform could not start a seat (Docker...): the caller voids
        await _wait_for_joins(seats, bots, start_timeout)
        outcome = await run_match_loop(spec, seats, clock, on_game_end)
        for seat in seats:
            await seat.end_match("the match is over")
    finally:
        server.remove_match(match)
        await _let_exit(bots, EXIT_GRACE_S)
        codes = await asyncio.gather(*(_stop(bot) for bot in bots))
    return HostedMatch(outcome, list(codes))


async def _launch(
    launcher: Launcher | None, seat: int, address: str, token: str, log_dir: Path | None
) -> RunningBot | None:
    if launcher is None:
        return None
    log_path = log_dir / f"seat{seat}.log" if log_dir is not None else None
    return await launcher(seat, address, token, log_path)


async def _wait_for_joins(
    seats: Sequence[RemoteSeat], bots: Sequence[RunningBot | None], timeout: float
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        pending = [
            s for s in seats
            if not s.joined.is_set() and s.lost() is None
            and not (bots[s.seat] is not None and bots[s.seat].exited())  # type: ignore[union-attr]
        ]  # fmt: skip
        if not pending:
            break
        await asyncio.sleep(0.01)
    for seat, bot in zip(seats, bots, strict=True):
        if seat.joined.is_set() or seat.lost() is not None:
            continue
        if bot is not None and bot.exited():
            fault = await platform_fault_of(bot)
            if fault is not None:  # e.g. the Docker daemon stopped: void games, not forfeits
                seat.platform_failed(fault)
            else:
                seat.mark_lost("crash", "the bot's process exited before joining")
        else:
            seat.mark_lost("timeout", f"the bot did not join within {timeout:g} s")


async def _let_exit(bots: Sequence[RunningBot | None], grace: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline and any(b is not None and not b.exited() for b in bots):
        await asyncio.sleep(0.02)


async def _stop(bot: RunningBot | None) -> int | None:
    if bot is None:
        return None
    with contextlib.suppress(Exception):
        return await bot.stop()
    return None
