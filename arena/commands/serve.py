"""``arena serve``: the referee on its own, for one match whose bots join by themselves."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

import typer
from arena_sdk.engine import parse_overrides, resolve_ruleset, seat_name, team_name

from arena.commands.common import bad_input_exits, console, fail, print_json
from arena.commands.options import (
    GamesOption,
    MoveTimeOption,
    PresetOption,
    SeedOption,
    SetOption,
    StrikesOption,
    TimeBankOption,
    match_seed,
    start_seconds,
    time_control,
)
from arena.match import GameOutcome, MatchSpec, game_seeds
from arena.match.output import write_record
from arena.referee.host import host_match
from arena.referee.server import RefereeServer
from arena.referee.session import RemoteSeat, new_token
from arena.text import safe_text

ENV_TOKENS = "ARENA_TOKENS"
MIN_TOKEN_LENGTH = 8


def seat_tokens(players: int) -> tuple[list[str], bool]:
    """Tokens from ARENA_TOKENS (comma-separated, seat order), or new ones; True if new."""
    raw = os.environ.get(ENV_TOKENS, "").strip()
    if not raw:
        return [new_token() for _ in range(players)], True
    tokens = [t.strip() for t in raw.split(",")]
    if len(tokens) != players:
        fail(f"{ENV_TOKENS} holds {len(tokens)} tokens; this ruleset has {players} seats")
    if any(len(t) < MIN_TOKEN_LENGTH for t in tokens) or len(set(tokens)) != len(tokens):
        fail(f"{ENV_TOKENS}: tokens must be distinct and at least {MIN_TOKEN_LENGTH} characters")
    return tokens, False


ListenOption = Annotated[
    list[str],
    typer.Option(help="Address to serve on: unix:/path/to.sock or 127.0.0.1:PORT (repeatable)."),
]


def serve(
    listen: ListenOption,
    preset: PresetOption = "pagat",
    overrides: SetOption = None,
    games: GamesOption = 2,
    seed: SeedOption = None,
    move_time: MoveTimeOption = 1.0,
    time_bank: TimeBankOption = 30.0,
    strikes: StrikesOption = 3,
    start_timeout: Annotated[float, typer.Option("--start-timeout", help="Seconds the bots get to join.")] = 300.0,
    match_id: Annotated[str, typer.Option("--match-id", help="Name of the match (record file names).")] = "served",
    out: Annotated[Path, typer.Option(help="Directory for the game records.")] = Path("matches/served"),
    as_json: Annotated[bool, typer.Option("--json", help="Print tokens and the result as JSON.")] = False,
) -> None:
    """Run the referee for one match and wait for the bots to join.

    Seat tokens come from ARENA_TOKENS (comma-separated, in seat order N,E,S,W
    or A,B); without it new tokens are made and printed.  Each bot joins with
    ARENA_ADDRESS and its seat's ARENA_TOKEN.  Exits when the match is over.
    """
    with bad_input_exits():
        rules = resolve_ruleset(preset, parse_overrides(overrides or []))
    tc = time_control(move_time, time_bank, None, strikes)
    start_seconds(start_timeout)
    n = rules.players
    tokens, generated = seat_tokens(n)
    spec = MatchSpec(
        match_id=match_id,
        rules=rules,
        deal_seeds=tuple(game_seeds(match_seed(seed), games)),
        time_control=tc,
    )
    for address in listen:
        if address.startswith("unix:"):
            Path(address.removeprefix("unix:").removeprefix("//")).parent.mkdir(parents=True, exist_ok=True)

    try:
        results = asyncio.run(_host(listen, spec, tokens, generated, start_timeout, out, as_json))
    except OSError as exc:  # e.g. OUT cannot be created or written
        fail(f"cannot write the records under {out}: {exc.strerror or exc}")
    _print_results(results, n, out, as_json)


async def _host(
    listen: list[str], spec: MatchSpec, tokens: list[str], generated: bool, start_timeout: float, out: Path,
    as_json: bool,
) -> list[GameOutcome]:  # fmt: skip
    """Serve on ``listen``, say where and with which tokens, and host the match until it is over."""
    n = spec.rules.players
    try:
        server = await RefereeServer().start(listen)
    except RuntimeError as exc:
        fail(f"cannot serve on {', '.join(listen)}: {exc}")
    for address in server.addresses:
        if address.startswith("unix:"):
            # Bots in other containers run as other users; the socket's
            # directory is the access control (only the match's containers mount it).
            Path(address.removeprefix("unix:").removeprefix("//")).chmod(0o777)
    seats = [RemoteSeat(s, spec.match_id, tokens[s]) for s in range(n)]
    if not as_json:
        console.print(f"referee on {safe_text(', '.join(server.addresses))}; waiting {start_timeout:g} s for {n} bots", soft_wrap=True)
        if generated:
            for s in range(n):
                console.print(f"  seat {seat_name(n, s)}: ARENA_TOKEN={tokens[s]}", soft_wrap=True)
    else:
        print_json({"addresses": server.addresses, "tokens": {seat_name(n, s): tokens[s] for s in range(n)} if generated else None})
    try:
        hosted = await host_match(
            server, spec, [None] * n, server.addresses[0], start_timeout=start_timeout,
            seats=seats, on_game_end=lambda g: write_record(out, g),
        )  # fmt: skip
    finally:
        await server.stop(1.0)
    return hosted.outcome.games


def _print_results(results: list[GameOutcome], n: int, out: Path, as_json: bool) -> None:
    """Each game's ending, winner and scores, and where the records are."""
    summary = [
        {
            "game_id": g.game_id,
            "ending": g.ending,
            "winner": None if g.winner is None else team_name(n, g.winner),
            "scores": {team_name(n, t): g.result.scores[t] for t in range(2)},
        }
        for g in results
    ]
    if as_json:
        print_json({"games": summary, "out_dir": str(out)})
    else:
        for row in summary:
            console.print(safe_text(f"{row['game_id']}: {row['ending']}, winner {row['winner']}, scores {row['scores']}"), soft_wrap=True)
        console.print(safe_text(f"records: {out}"), soft_wrap=True)
