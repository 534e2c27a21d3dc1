"""``arena play``: sit at a table with bots and play in the browser (docs/play.md)."""

from __future__ import annotations

import asyncio
import threading
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

import typer
from arena_sdk.engine import MalformedInputError, parse_overrides, resolve_ruleset, seat_name
from arena_sdk.engine.seats import parse_seat

from arena.commands.common import bad_input_exits, console, err_console, fail, print_json
from arena.commands.options import PresetOption, SeedOption, SetOption, match_seed, start_seconds
from arena.errors import ArenaError
from arena.play.compare import COMPARE_BOTS
from arena.play.seat import DEFAULT_RECONNECT_S
from arena.play.stats import PlayStats, StatsError, default_person, default_stats_path, stats_lines
from arena.play.server import serve_table
from arena.play.table import PlayError, PlayTable, TableConfig, new_match_id, parse_time_control
from arena.referee.botspec import BotSpec, BotSpecError, parse_bot_spec
from arena.referee.local_match import docker_client_for
from arena.text import safe_text

DEFAULT_BOT = "builtin:hard"


def seat_bots(players: int, seat: int, partner: str | None, opponents: list[str]) -> tuple[BotSpec | None, ...]:
    """The bot at each seat: the partner opposite the person, the opponents on either side.

    One ``--opponent`` plays both opponents' seats; two are given in play order
    (the seat after the person's first).
    """
    if players == 2:
        if partner is not None:
            raise PlayError("the two-player game has no partner: give --opponent only")
        if len(opponents) > 1:
            raise PlayError("the two-player game has one opponent")
        specs: list[BotSpec | None] = [None, None]
        specs[1 - seat] = parse_bot_spec(opponents[0] if opponents else DEFAULT_BOT)
        return tuple(specs)
    if len(opponents) > 2:
        raise PlayError("a four-player table has two opponents: give --opponent once (both) or twice")
    left, right = (opponents * 2)[:2] if opponents else (DEFAULT_BOT, DEFAULT_BOT)
    specs = [None] * 4
    specs[(seat + 1) % 4] = parse_bot_spec(left)
    specs[(seat + 2) % 4] = parse_bot_spec(partner or DEFAULT_BOT)
    specs[(seat + 3) % 4] = parse_bot_spec(right)
    return tuple(specs)


SeatOption = Annotated[
    str | None, typer.Option("--seat", help="Your seat: N, E, S or W (A or B for two players) \\[default: S, or A].")
]
PartnerOption = Annotated[
    str | None,
    typer.Option(
        "--partner",
        help=f"Your partner, a bot spec (builtin:easy|medium|hard, cmd:..., docker:IMAGE) \\[default: {DEFAULT_BOT}].",
    ),
]
OpponentOption = Annotated[
    list[str] | None,
    typer.Option(
        "--opponent",
        help=f"The opponents: once for both, or twice (in play order after you) \\[default: {DEFAULT_BOT}].",
        show_default=False,
    ),
]
TimeControlOption = Annotated[
    str,
    typer.Option(
        "--time-control",
        metavar="MOVE[,BANK]",
        help="Your clock in seconds: a move, and a bank per game. When it runs out your seat plays the "
        "default move for you (never a strike).",
    ),
]
ReconnectOption = Annotated[
    float,
    typer.Option("--reconnect", help="Seconds a closed page is waited for before the game is abandoned."),
]
CompareOption = Annotated[
    str,
    typer.Option(
        "--compare-with",
        help=f"The bot replayed in your seat after each hand ({', '.join(COMPARE_BOTS)}); the page can ask for another.",
    ),
]
OutOption = Annotated[
    Path,
    typer.Option(help="Directory for the table's folder (named by its match id): records, bot logs, play.json."),
]
PlayerOption = Annotated[
    str | None,
    typer.Option("--player", help="Whose statistics the games count for \\[default: your login name]."),
]
StatsFileOption = Annotated[
    Path | None,
    typer.Option("--stats-file", help="The statistics file \\[default: $XDG_DATA_HOME/arena/play-stats.json]."),
]


def open_stats(player: str | None, stats_file: Path | None, keep: bool) -> PlayStats | None:
    """The person's statistics book (None with --no-stats); a bad name fails, an unreadable file
    is said and left as it is (the table keeps no statistics)."""
    if not keep:
        return None
    try:
        return PlayStats(stats_file or default_stats_path(), player if player is not None else default_person())
    except StatsError as exc:
        if "--player" in str(exc):
            fail(str(exc))
        err_console.print(f"[yellow]note:[/] {safe_text(str(exc))}; no statistics are kept this time", highlight=False)
        return None


def show_stats(player: str | None, stats_file: Path | None, as_json: bool) -> None:
    """``arena play --stats``: the person's statistics, and nothing else."""
    try:
        stats = PlayStats(stats_file or default_stats_path(), player if player is not None else default_person())
    except StatsError as exc:
        fail(str(exc))
    summary = stats.summary()
    if as_json:
        print_json(summary)
        return
    for line in stats_lines(summary):
        console.print(safe_text(line), highlight=False, soft_wrap=True)


def play(
    preset: PresetOption = "pagat",
    overrides: SetOption = None,
    seat: SeatOption = None,
    partner: PartnerOption = None,
    opponent: OpponentOption = None,
    time_control: TimeControlOption = "60,300",
    reconnect: ReconnectOption = DEFAULT_RECONNECT_S,
    games: Annotated[int, typer.Option("--games", help="Games to play at this table.")] = 1,
    seed: SeedOption = None,
    compare_with: CompareOption = "hard",
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free port).")] = 0,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the table in your web browser.")] = False,
    exit_when_done: Annotated[
        bool, typer.Option("--exit-when-done", help="Stop serving when the match is over (else: at Ctrl-C).")
    ] = False,
    start_timeout: Annotated[float, typer.Option("--start-timeout", help="Seconds the seats get to join.")] = 20.0,
    out: OutOption = Path("matches/play"),
    player: PlayerOption = None,
    stats_file: StatsFileOption = None,
    keep_stats: Annotated[
        bool, typer.Option("--keep-stats/--no-stats", help="Keep your statistics across games on this machine.")
    ] = True,
    stats: Annotated[bool, typer.Option("--stats", help="Print your statistics (--player) and exit.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --stats: print them as JSON.")] = False,
) -> None:
    """Play Spades in your browser with and against bots, on 127.0.0.1 (no Docker needed).

    Prints the table's address (--open starts your browser).  Your seat joins
    the referee like any bot; every game is a normal record, with a replay
    link at the end.  After each hand the page shows how a bot would have
    played your cards (--compare-with).  Your statistics (bid accuracy, nils,
    bags, the swing against Hard) are kept across games on this machine;
    --stats prints them.  Local cmd: bots run as you: not a sandbox.
    """
    if stats or as_json:
        if not stats:
            fail("--json goes with --stats")
        show_stats(player, stats_file, as_json)
        return
    with bad_input_exits():
        rules = resolve_ruleset(preset, parse_overrides(overrides or []))
    n = rules.players
    try:
        me = parse_seat(n, seat) if seat is not None else (2 if n == 4 else 0)
    except MalformedInputError as exc:
        fail(f"--seat: {exc}")
    if not 0 <= port <= 65535:
        fail(f"--port must be 0 to 65535, got {port}")
    try:
        bots = seat_bots(n, me, partner, list(opponent or []))
        match_id = new_match_id()
        config = TableConfig(
            rules=rules, seat=me, bots=bots, out_dir=out / match_id, match_id=match_id, seed=match_seed(seed),
            games=games, time_control=parse_time_control(time_control), reconnect_s=reconnect,
            compare_bot=compare_with, start_timeout=start_seconds(start_timeout),
        )  # fmt: skip
        table = PlayTable(config, stats=open_stats(player, stats_file, keep_stats))
    except (PlayError, BotSpecError) as exc:
        fail(str(exc))
    _check_images(bots)

    ready, ended = _reporters(n, me, open_browser, exit_when_done)
    try:
        asyncio.run(
            serve_table(table, port=port, on_ready=ready, on_match_end=ended, exit_when_done=exit_when_done)
        )
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        fail(f"cannot serve the table: {exc}")
    except ArenaError as exc:  # e.g. a docker: bot without a Docker engine
        fail(str(exc))
    if len(table.outcomes) < games and not table.seat.abandoned:
        console.print("stopped before the match was over: the game in progress has no record", highlight=False)


def _reporters(
    n: int, me: int, open_browser: bool, exit_when_done: bool
) -> tuple[Callable[[str], None], Callable[[PlayTable], None]]:
    """What the command says when the table is ready, and when a table's match is over."""

    def ready(url: str) -> None:
        where = f"you are {seat_name(n, me)}; Ctrl-C stops it"
        console.print(f"Your table: [bold]{url}[/]  ({where})", highlight=False, soft_wrap=True)
        if open_browser:
            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

    def ended(done: PlayTable) -> None:
        for g in done.outcomes:
            record = safe_text(done.records.get(g.game_id, ""))
            console.print(f"{safe_text(g.game_id)}: {safe_text(g.ending)}; record {record}", highlight=False, soft_wrap=True)
        if done.seat.abandoned:
            console.print("the game was abandoned (no page connected within --reconnect)", highlight=False)
        if not exit_when_done:
            console.print("The match is over; the page stays up for its replays and a new game (Ctrl-C to stop).", highlight=False)

    return ready, ended


def _check_images(bots: Sequence[BotSpec | None]) -> None:
    """The Docker engine answers and every image bot's image is there, before the table opens; else one line."""
    images = [b for b in bots if b is not None and b.kind == "docker"]
    if images:
        try:
            with docker_client_for(images):
                pass
        except BotSpecError as exc:
            fail(str(exc))
