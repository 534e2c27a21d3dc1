"""``arena replay``: re-simulate a game record and check it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from arena_sdk.engine import ReplayReport, RulesError, game_result_to_json, replay_record, team_name
from arena_sdk.engine.record import record_assists
from rich.table import Table

from arena.commands.common import bad_input_exits, console, fail, print_json
from arena.match.timing import record_timing
from arena.play.assist import assists_words
from arena.publish.steps import game_steps
from arena.publish.viewer import standalone_html
from arena.text import safe_text


def write_replay_page(record: Path, data: object, report: ReplayReport, out: Path) -> None:
    """Write the viewer for a checked record to ``out`` (exit 2 if it cannot be written)."""
    page = standalone_html(game_steps(data, report, with_notes=True))  # the author's own record: notes shown
    tmp = out.with_name(out.name + ".tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        fail(f"cannot write {out}: {exc.strerror or exc}")


def print_assists(data: object) -> None:
    """Say which seats had help (a hint, an undo: unrated play), one line each; nothing for most games."""
    for seat, helped in record_assists(data).items():  # type: ignore[arg-type]
        console.print(f"assisted play: {safe_text(seat)} had {assists_words(helped)} (unrated play)", highlight=False)


def load_record(path: Path) -> object:
    """Read a record file; unreadable or non-JSON files exit 2 with the reason.

    Hostile JSON (nesting deeper than Python's recursion limit, integers longer
    than its 4,300-digit conversion limit) is bad input like any other.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    except UnicodeDecodeError:
        fail(f"{path} is not a text file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:
        fail(f"{path} is not a usable record: its JSON is nested too deeply")
    except ValueError as exc:  # e.g. an integer of thousands of digits
        fail(f"{path} is not a usable record: {_first_line(exc)}")


def reask_main(
    record: Path, bot: str, seat: str | None, decision: int | None, pdb: bool, show_all: bool,
    time_control: str | None, as_json: bool,
) -> int:
    """``--reask``: hand over to ``python -m arena_sdk.testing BOT --replay RECORD ...`` (its exit code)."""
    # The SDK's command does the work; this is its door.
    from arena_sdk.testing import main as sdk_main

    if seat is None:
        fail("--reask needs --seat (the seat the bot played)")
    argv = [bot, "--replay", str(record), "--seat", seat]
    argv += ["--decision", str(decision)] if decision is not None else []
    argv += ["--time-control", time_control] if time_control is not None else []
    argv += [flag for flag, on in (("--pdb", pdb), ("--all", show_all), ("--json", as_json)) if on]
    try:
        return sdk_main(argv)
    except SystemExit as exc:  # its argument errors and a bot file that cannot be loaded
        if isinstance(exc.code, str):
            fail(exc.code)
        return int(exc.code or 0)


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def check_record(path: Path, data: object) -> ReplayReport:
    """Replay ``data``; a malformed record of any shape exits 2 with one line.

    The engine names the first bad entry for records it understands; anything it
    did not foresee (a list where a name belongs, say) is still a bad record,
    never a traceback.
    """
    with bad_input_exits():
        try:
            return replay_record(data)
        except RulesError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError,
                OverflowError) as exc:  # fmt: skip
            fail(f"{path} is not a valid record: {type(exc).__name__}: {_first_line(exc)}")


RecordArgument = Annotated[Path, typer.Argument(help="A game record (JSON) to check.")]
HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="Also write a self-contained HTML replay viewer to this file (docs/replay.md).",
    ),
]
# Asking a bot again (python -m arena_sdk.testing BOT --replay RECORD, which these options are passed to).
ReaskOption = Annotated[
    str | None,
    typer.Option(
        "--reask", metavar="BOT",
        help="Ask BOT (path/to/bot.py[:Class], or easy, medium, hard) again at every decision of --seat "
        "and list where its answer now differs (python -m arena_sdk.testing BOT --replay RECORD).",
    ),
]  # fmt: skip
ReaskSeatOption = Annotated[str | None, typer.Option("--seat", help="With --reask: the seat the bot played (N, E, A, 0...).")]
ReaskDecisionOption = Annotated[
    int | None,
    typer.Option("--decision", metavar="K", help="With --reask: only the seat's decision K (0-based, as strikes name it)."),
]
ReaskPdbOption = Annotated[bool, typer.Option("--pdb", help="With --reask and --decision: stop in the debugger there.")]
ReaskAllOption = Annotated[bool, typer.Option("--all", help="With --reask: list every decision.")]
ReaskTimeControlOption = Annotated[
    str | None,
    typer.Option(
        "--time-control", metavar="MOVE_MS,BANK_MS,HARD_CAP_MS", help="With --reask: the match's time control."
    ),
]


def replay(
    record: RecordArgument,
    as_json: Annotated[bool, typer.Option("--json", help="Print the final result as JSON.")] = False,
    html: HtmlOption = None,
    reask: ReaskOption = None,
    seat: ReaskSeatOption = None,
    decision: ReaskDecisionOption = None,
    pdb: ReaskPdbOption = False,
    show_all: ReaskAllOption = False,
    time_control: ReaskTimeControlOption = None,
) -> None:
    """Re-simulate RECORD: every action must be legal and every stored score must match.

    Prints the final scores.  A corrupt or inconsistent record exits 2 with a
    message naming the first bad entry, e.g. ``hands[2].actions[14]``.
    With ``--html OUT.html`` it also writes the game as one HTML page to step
    through card by card, per seat or with every hand shown (docs/replay.md).
    With ``--reask BOT --seat S`` it asks a bot again at the seat's decisions
    (``--decision K``: only that one), as ``python -m arena_sdk.testing BOT
    --replay RECORD --seat S`` does (docs/writing-a-bot.md, "Debugging your bot").
    """
    data = load_record(record)
    report = check_record(record, data)
    if reask is None and (seat is not None or decision is not None or pdb or show_all or time_control is not None):
        fail("--seat, --decision, --pdb, --all and --time-control go with --reask BOT")
    if html is not None:
        write_replay_page(record, data, report, html)
    if reask is not None:
        raise typer.Exit(reask_main(record, reask, seat, decision, pdb, show_all, time_control, as_json))
    n = report.rules.players
    if as_json:
        print_json(
            {
                "ok": True,
                "ruleset_hash": report.rules.hash,
                "actions": report.actions,
                **game_result_to_json(n, report.result),
                "timing": record_timing(data),
                "assisted": record_assists(data),  # type: ignore[arg-type]
            }
        )
        return
    result = report.result
    winner = "draw" if result.winner is None else team_name(n, result.winner)
    # Paths are the user's text: markup in them ("[/]") prints literally, escape codes are dropped.
    console.print(
        f"[green]replay OK[/]: {safe_text(record)} ({report.actions} decisions, "
        f"ruleset {safe_text(report.rules.preset)} {report.rules.hash})",
        soft_wrap=True,
    )
    table = Table()
    table.add_column("team" if n == 4 else "player")
    table.add_column("score", justify="right")
    table.add_column("bags", justify="right")
    for t in range(2):
        table.add_row(team_name(n, t), str(result.scores[t]), str(result.bags[t]))
    console.print(table)
    console.print(
        f"ended by [bold]{safe_text(result.ending)}[/] after {result.hands} hands; winner: [bold]{winner}[/]"
    )
    print_assists(data)
    if html is not None:
        console.print(f"viewer: {safe_text(html)} (open it in a browser)", soft_wrap=True)
