"""Run one match between bots on this machine: referee, bots, records, summary.

What ``arena match run`` does, as a library call: a :class:`MatchConfig` in,
a :class:`MatchReport` out, and the game records and bot logs on disk.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.match import GameOutcome, MatchSpec, TimeControl, game_seeds
from arena.match.output import write_json, write_record
from arena.match.timing import stats_timing
from arena.referee.botspec import BotSpec, BotSpecError, seat_assignment
from arena.referee.host import (
    DEFAULT_START_TIMEOUT_S,
    SOCKET_NAME,
    HostedMatch,
    Launcher,
    command_launcher,
    docker_launcher,
    host_match,
    seat_socket_dir,
)
from arena.referee.server import RefereeServer
from arena.referee.session import RemoteSeat
from arena.sandbox.docker import (
    RUN_LABEL,
    ContainerLimits,
    DockerUnavailable,
    ImageNotFound,
    docker_client,
    image_id,
)
from arena_sdk.engine import Ruleset, seat_name, team_name, team_of


@dataclasses.dataclass(frozen=True)
class MatchConfig:
    """Everything a match needs."""

    bots: tuple[BotSpec, ...]
    rules: Ruleset
    games: int
    seed: str
    time_control: TimeControl
    out_dir: Path
    match_id: str = "match"
    start_timeout: float = DEFAULT_START_TIMEOUT_S
    listen: tuple[str, ...] = ()
    """Extra addresses to serve on (e.g. ``127.0.0.1:50051``) besides the match's socket."""
    limits: ContainerLimits = ContainerLimits()
    """Resource limits of container seats."""

    def __post_init__(self) -> None:
        if self.games < 1:
            raise BotSpecError(f"--games must be at least 1, got {self.games}")
        seat_assignment(self.rules.players, len(self.bots))


@dataclasses.dataclass
class BotTotals:
    """One bot's results over the match."""

    label: str
    name: str
    seats: list[str]
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    voids: int = 0
    forfeits: dict[str, int] = dataclasses.field(default_factory=dict)
    strikes: int = 0
    points: int = 0
    offturn_cpu_ms: float | None = None
    """CPU its seats used while not asked, over the match (docs/time-control.md); None: not measured."""
    offturn_ms: float | None = None
    """The wall time of those spans."""


@dataclasses.dataclass
class MatchReport:
    """The outcome of a match and where its files are."""

    config: MatchConfig
    games: list[GameOutcome]
    totals: list[BotTotals]
    seat_bots: list[int]
    out_dir: Path
    exit_codes: list[int | None]

    def to_json(self) -> dict[str, Any]:
        n = self.config.rules.players
        return {
            "match_id": self.config.match_id,
            "seed": self.config.seed,
            "ruleset": self.config.rules.to_dict(),
            "ruleset_hash": self.config.rules.hash,
            "out_dir": str(self.out_dir),
            "seats": {seat_name(n, s): self.totals[b].name for s, b in enumerate(self.seat_bots)},
            "games": [
                {
                    "game_id": g.game_id,
                    "ending": g.ending,
                    "winner": None if g.winner is None else team_name(n, g.winner),
                    "scores": {team_name(n, t): g.result.scores[t] for t in range(2)},
                    "hands": g.result.hands,
                    "strikes": {seat_name(n, s): st.strikes for s, st in enumerate(g.stats)},
                    "timing": stats_timing(n, g.stats),
                    "record": f"{g.game_id}.json",
                }
                for g in self.games
            ],
            "bots": [dataclasses.asdict(t) for t in self.totals],
        }


def _totals(config: MatchConfig, seat_bots: list[int], games: list[GameOutcome], names: list[str]) -> list[BotTotals]:
    n = config.rules.players
    totals = [
        BotTotals(
            label=spec.label,
            name=names[b] or spec.label,
            seats=[seat_name(n, s) for s, sb in enumerate(seat_bots) if sb == b],
        )
        for b, spec in enumerate(config.bots)
    ]
    for g in games:
        for b, t in enumerate(totals):
            seats = [s for s, sb in enumerate(seat_bots) if sb == b]
            team = team_of(n, seats[0])
            t.strikes += sum(g.stats[s].strikes for s in seats)
            for s in seats:  # void games too: the CPU was used
                st = g.stats[s]
                if st.offturn_measured:
                    t.offturn_cpu_ms = round((t.offturn_cpu_ms or 0.0) + st.offturn_cpu_s * 1000, 3)
                    t.offturn_ms = round((t.offturn_ms or 0.0) + st.offturn_s * 1000, 3)
            if not g.scored:
                t.voids += 1
                continue
            t.games += 1
            t.points += g.result.scores[team]
            if g.winner is None:
                t.draws += 1
            elif g.winner == team:
                t.wins += 1
            else:
                t.losses += 1
            if g.forfeit is not None and team_name(n, team) in g.forfeit["teams"]:
                reason = g.forfeit["reason"]
                t.forfeits[reason] = t.forfeits.get(reason, 0) + 1
    return totals


def _launcher(
    spec: BotSpec, socket_dir: Path, match_id: str, limits: ContainerLimits, client: Any, labels: Mapping[str, str]
) -> Launcher:
    if spec.local:  # cmd: and builtin: bots are local processes
        return command_launcher(spec.command, dict(spec.env))
    return docker_launcher(client, spec.target, socket_dir, match_id, limits, dict(spec.env), labels)


def _docker_client_for(specs: tuple[BotSpec, ...]) -> Any:
    """A Docker client if any bot is an image (checking every image exists), else None.

    The caller closes it (a client holds a connection pool: one per run, not per table).
    """
    images = [s.target for s in specs if s.kind == "docker"]
    if not images:
        return None
    client = None
    try:
        client = docker_client()
        for image in images:
            image_id(client, image)
    except (DockerUnavailable, ImageNotFound) as exc:
        if client is not None:
            client.close()
        raise BotSpecError(str(exc)) from None
    return client


@contextlib.contextmanager
def docker_client_for(specs: Sequence[BotSpec]) -> Iterator[Any]:
    """One Docker client for a whole run (None if no bot is an image), closed at the end."""
    client = _docker_client_for(tuple(specs))
    try:
        yield client
    finally:
        if client is not None:
            client.close()


def new_run_id() -> str:
    """A random id for one run; its containers carry it as the ``arena.run`` label."""
    return secrets.token_hex(8)


async def play_seated(
    spec: MatchSpec,
    seat_bots: Sequence[BotSpec],
    *,
    log_dir: Path,
    limits: ContainerLimits = ContainerLimits(),
    start_timeout: float = DEFAULT_START_TIMEOUT_S,
    on_game_end: Callable[[GameOutcome], Any] | None = None,
    listen: Sequence[str] = (),
    client: Any = None,
    labels: Mapping[str, str] | None = None,
    seat_launchers: Mapping[int, Launcher] | None = None,
) -> HostedMatch:
    """Play ``spec`` with one bot per seat: a referee on private sockets, bots started, cleaned up.

    Every seat has its own socket (``seat-N/referee.sock`` in the match's
    socket directory), served by its own listener with its own connection cap
    and taking only that seat's token: a seat that floods its socket keeps no
    other seat from joining.  A container seat mounts only its own directory.
    ``listen``: extra addresses any seat may join on (e.g. TCP), sharing one cap.

    This is the self-contained "play one match" call that both ``arena match
    run`` and the tournament scheduler use.  ``client``: the run's Docker
    client to reuse (without one, a client is opened for this match and
    closed after it).  ``labels`` go on every container (``arena.run``).
    ``seat_launchers``: seats started by these instead of their bots (a person's seat: arena.play).
    """
    if client is None and any(b.kind == "docker" for b in seat_bots):
        with docker_client_for(seat_bots) as own:
            return await play_seated(
                spec, seat_bots, log_dir=log_dir, limits=limits, start_timeout=start_timeout,
                on_game_end=on_game_end, listen=listen, client=own, labels=labels, seat_launchers=seat_launchers,
            )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="arena-") as tmp:
        # The match's socket directory: one subdirectory per seat, each mounted only by that seat.
        socket_dir = Path(tmp)
        n = spec.rules.players
        seats = [RemoteSeat(s, spec.match_id) for s in range(n)]
        seat_dirs = [seat_socket_dir(socket_dir, n, s) for s in range(n)]
        given = seat_launchers or {}
        launchers = [
            given.get(s) or _launcher(bot, seat_dirs[s], spec.match_id, limits, client, labels or {})
            for s, bot in enumerate(seat_bots)
        ]
        server = await RefereeServer().start(list(listen))
        try:
            addresses = []
            for seat, seat_dir in zip(seats, seat_dirs, strict=True):
                seat_dir.mkdir()
                addresses.append(await server.add_seat_listener(f"unix:{seat_dir / SOCKET_NAME}", seat))
            if client is not None:
                # Containers run as an unprivileged user: let it reach its socket.
                socket_dir.chmod(0o755)
                for seat_dir in seat_dirs:
                    seat_dir.chmod(0o755)
                    (seat_dir / SOCKET_NAME).chmod(0o777)
            return await host_match(
                server, spec, launchers, addresses, seats=seats,
                start_timeout=start_timeout, log_dir=log_dir, on_game_end=on_game_end,
            )  # fmt: skip
        finally:
            await server.stop(0.5)


async def run_match(
    config: MatchConfig, on_game_end: Callable[[GameOutcome], Any] | None = None
) -> MatchReport:
    """Start a referee, start the bots, play the match, write records; return the report."""
    seat_bots = seat_assignment(config.rules.players, len(config.bots))
    with docker_client_for(config.bots) as client:
        return await _run_match(config, seat_bots, client, on_game_end)


async def _run_match(
    config: MatchConfig, seat_bots: list[int], client: Any, on_game_end: Callable[[GameOutcome], Any] | None
) -> MatchReport:
    spec = MatchSpec(
        match_id=config.match_id,
        rules=config.rules,
        deal_seeds=tuple(game_seeds(config.seed, config.games)),
        time_control=config.time_control,
    )
    out_dir = config.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)

    def saved(game: GameOutcome) -> None:
        write_record(out_dir, game)
        if on_game_end is not None:
            on_game_end(game)

    hosted = await play_seated(
        spec, [config.bots[b] for b in seat_bots],
        log_dir=out_dir / "logs", limits=config.limits, start_timeout=config.start_timeout,
        on_game_end=saved, listen=config.listen, client=client, labels={RUN_LABEL: new_run_id()},
    )  # fmt: skip
    names = [""] * len(config.bots)
    for s, b in enumerate(seat_bots):
        names[b] = names[b] or hosted.outcome.seat_names[s]
    report = MatchReport(
        config=config,
        games=hosted.outcome.games,
        totals=_totals(config, seat_bots, hosted.outcome.games, names),
        seat_bots=seat_bots,
        out_dir=out_dir,
        exit_codes=hosted.exit_codes,
    )
    write_json(out_dir / "match.json", report.to_json())
    return report
