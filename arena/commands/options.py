"""The command-line options several commands share, defined once (names, help, checks).

``arena match run``, ``arena serve`` and ``arena sprt`` take the same bots,
rules, seed and clock options; each is an ``Annotated`` type here, so a help
text or a check changes in one place.  Values are checked the way every value
of that kind is (a time is finite and in range, a game count bounded), and a
bad one is one line and exit 2.
"""

from __future__ import annotations

import secrets
from typing import Annotated

import typer

from arena.commands.common import err_console, fail
from arena.commands.rules import SetOption
from arena.match import TimeControl, oversubscribed_warning
from arena.match.seeds import guessable
from arena.match.spec import DEFAULT_HARD_CAP_S, check_seconds, default_hard_cap
from arena.text import safe_text
from arena.tables.cores import usable_cores

BotOption = Annotated[
    list[str],
    typer.Option(
        "--bot",
        help="A bot: cmd:COMMAND (a local process, e.g. cmd:'python example_bots/random/bot.py') "
        "docker:IMAGE or builtin:easy|medium|hard. Four players: two bots (team mode: the first is N/S) or four (N, E, S, W). "
        "Two players: two bots.",
        show_default=False,
    ),
]


#: The most games one match may play.  Its deal seeds are built before the first
#: game (and each game writes a record file): 10^11 games hung at the start.
#: Longer runs are tournaments (arena tournament run), which resume.
MAX_GAMES = 100_000


def check_games(games: int) -> int:
    """The --games value if it is 1 to :data:`MAX_GAMES`; otherwise one line and exit 2.

    A typer callback rather than ``min``/``max``: those print a usage box, not one line.
    """
    if not 1 <= games <= MAX_GAMES:
        fail(f"games must be between 1 and {MAX_GAMES}, got {games}")
    return games


PresetOption = Annotated[str, typer.Option("--rules", help="Ruleset preset (see arena rules presets).")]
GamesOption = Annotated[int, typer.Option(help=f"Games to play (1 to {MAX_GAMES}).", callback=check_games)]
SeedOption = Annotated[str | None, typer.Option(help="Match seed (deals, bot seeds); random if not given.")]
MoveTimeOption = Annotated[float, typer.Option("--move-time", help="Seconds per decision before the bank is used.")]
TimeBankOption = Annotated[float, typer.Option("--time-bank", help="Seconds of bank per seat per game.")]
StrikesOption = Annotated[int, typer.Option(help="Strikes (late, illegal, malformed answers) that forfeit a game.")]


def match_seed(seed: str | None) -> str:
    """The given seed, or a fresh random one (recorded, so the match can be replayed).

    A given seed that can be guessed gets a note on stderr: a match's deals and
    bot seeds follow from its seed alone, so a bot that guesses it knows every hand.
    """
    if seed is None:
        return str(secrets.randbelow(2**63))
    if guessable(seed):
        err_console.print(
            f"[yellow]note:[/] the seed {safe_text(seed)!s} can be guessed: a bot that finds it knows every hand; "
            "leave --seed out (a random one is chosen and recorded) or use 20 random hex digits or more",
            highlight=False,
        )
    return seed


def start_seconds(start_timeout: float) -> float:
    """The --start-timeout value, checked like every time (finite, in range); bad values exit 2."""
    try:
        check_seconds(start_timeout, "start timeout", inclusive=False)
    except ValueError as exc:
        fail(str(exc))
    return start_timeout


def time_control(
    move_time: float, time_bank: float, hard_cap: float | None, strikes: int, clock: str = "wall"
) -> TimeControl:
    """A TimeControl from CLI options; bad values (nan, inf, negative, over a day, an unknown clock) exit 2."""
    try:
        return TimeControl(
            move_s=move_time,
            bank_s=time_bank,
            hard_cap_s=hard_cap if hard_cap is not None else default_hard_cap(move_time),
            strikes_to_forfeit=strikes,
            clock=clock,
        )
    except ValueError as exc:
        fail(str(exc))


def warn_if_oversubscribed(tables: int, tc: TimeControl) -> None:
    """One warning line on stderr when more seats can think at once (one per table) than there are cores."""
    warning = oversubscribed_warning(tables, usable_cores(), tc.clock, tc.hard_cap_s)
    if warning is not None:
        err_console.print(f"[yellow]warning:[/] {safe_text(warning)}", highlight=False)


HardCapOption = Annotated[
    float | None,
    typer.Option(
        "--hard-cap",
        help=f"Most seconds any one decision may take \\[default: max({DEFAULT_HARD_CAP_S:g}, move time)].",
    ),
]
ClockOption = Annotated[
    str,
    typer.Option(
        "--clock",
        metavar="wall|cpu",
        help="What a decision is charged: wall time, or the seat's CPU time (its container's or process "
        "tree's; the hard cap stays wall time). See docs/time-control.md.",
    ),
]
StartTimeoutOption = Annotated[float, typer.Option("--start-timeout", help="Seconds the bots get to join.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON for scripts.")]

__all__ = [
    "MAX_GAMES", "BotOption", "ClockOption", "GamesOption", "HardCapOption", "JsonOption", "MoveTimeOption", "PresetOption",
    "SeedOption", "SetOption", "StartTimeoutOption", "StrikesOption", "TimeBankOption", "check_games",
    "match_seed", "start_seconds", "time_control", "warn_if_oversubscribed",
]  # fmt: skip
