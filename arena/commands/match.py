"""``arena match run``: play a match between bots and print the result."""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from arena_sdk.engine import parse_overrides, resolve_ruleset, seat_name, team_name
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from arena.commands.common import bad_input_exits, console, fail, print_json
from arena.commands.options import (
    BotOption,
    ClockOption,
    GamesOption,
    HardCapOption,
    JsonOption,
    MoveTimeOption,
    PresetOption,
    SeedOption,
    SetOption,
    StartTimeoutOption,
    StrikesOption,
    TimeBankOption,
    match_seed,
    start_seconds,
    time_control,
)
from arena.commands.preflight import EXIT_PLATFORM, check_images_start
from arena.match import GameOutcome
from arena.match.output import StruckDecision, reproduce_command, struck_decisions
from arena.match.timing import record_timing
from arena.referee.botspec import BotSpec, BotSpecError, parse_bot_spec
from arena.referee.local_match import MatchConfig, MatchReport, run_match
from arena.sandbox.docker import SeatStartError
from arena.text import safe_text

app = typer.Typer(help="Play matches between bots.", no_args_is_help=True)

@app.command("run")
def run(
    bots: BotOption,
    preset: PresetOption = "pagat",
    overrides: SetOption = None,
    games: GamesOption = 2,
    seed: SeedOption = None,
    move_time: MoveTimeOption = 1.0,
    time_bank: TimeBankOption = 30.0,
    hard_cap: HardCapOption = None,
    strikes: StrikesOption = 3,
    clock: ClockOption = "wall",
    start_timeout: StartTimeoutOption = 20.0,
    out: Annotated[Path, typer.Option(help="Directory for game records, bot logs and match.json.")] = Path("matches/latest"),
    as_json: JsonOption = False,
) -> None:
    """Start a referee and the bots, play GAMES games, print a result table, write records.

    Every record in OUT can be checked with `arena replay`.  Bot output goes to
    OUT/logs/seatN.log.

    cmd: bots are local processes for development, NOT a sandbox: they run as
    you, with your files and network.  Run bots you did not write as docker:.
    """
    with bad_input_exits():
        rules = resolve_ruleset(preset, parse_overrides(overrides or []))
    try:
        specs = tuple(parse_bot_spec(b) for b in bots)
        config = MatchConfig(
            bots=specs,
            rules=rules,
            games=games,
            seed=match_seed(seed),
            time_control=time_control(move_time, time_bank, hard_cap, strikes, clock),
            out_dir=out,
            start_timeout=start_seconds(start_timeout),
        )
    except BotSpecError as exc:
        fail(str(exc))
    check_images_start(specs)  # an image that cannot start: one line, exit 2 (issue 24, item 5)
    progress = Progress(
        TextColumn("[bold]match[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("games"),
        TimeRemainingColumn(), console=console, transient=True, disable=as_json,
    )  # fmt: skip
    with progress:
        task = progress.add_task("games", total=games)

        def advance(game: GameOutcome) -> None:
            progress.advance(task)

        try:
            report = asyncio.run(run_match(config, advance))
        except BotSpecError as exc:
            fail(str(exc))
        except SeatStartError as exc:  # the platform (the Docker engine) failed: not the bots'
            fail(str(exc), EXIT_PLATFORM)
        except OSError as exc:  # e.g. OUT cannot be created or written
            fail(f"cannot write the match's files under {out}: {exc.strerror or exc}")
    if as_json:
        data = report.to_json()
        for game, row in zip(report.games, data["games"], strict=True):
            row["struck"] = [
                {**dataclasses.asdict(st), "reproduce": command} for st, command in struck_with_commands(report, game)
            ]
            if (lost := lost_with_command(report, game)) is not None:
                forfeit, command = lost
                row["lost"] = {"seat": forfeit["seat"], "decision": forfeit["decision"],
                               "reason": forfeit["reason"], "reproduce": command}  # fmt: skip
        print_json(data)
    else:
        show_report(report)


def match_title(match_id: str) -> str:
    """``match NAME``, or just ``match`` when the id is the default one (not "match match")."""
    return "match" if match_id == MatchConfig.match_id else f"match {safe_text(match_id)}"


def show_report(report: MatchReport) -> None:
    """Print the games and the per-bot totals."""
    n = report.config.rules.players
    seats = ", ".join(
        f"{seat_name(n, s)}={safe_text(report.totals[b].name)}" for s, b in enumerate(report.seat_bots)
    )
    console.print(
        f"{match_title(report.config.match_id)}: {seats}; ruleset {report.config.rules.preset} "
        f"{report.config.rules.hash}; seed {report.config.seed}",
        soft_wrap=True,
    )
    table = Table(title="games")
    for col in ("game", "ending", "winner", *(team_name(n, t) for t in range(2)), "hands", "strikes"):
        table.add_column(col, justify="right" if col in ("hands", "strikes") or len(col) <= 2 else "left")
    for g in report.games:
        winner = "draw" if g.winner is None else team_name(n, g.winner)
        if g.void is not None:
            winner = "void"
        table.add_row(
            safe_text(g.game_id), g.ending, winner, *(str(g.result.scores[t]) for t in range(2)),
            str(g.result.hands), str(sum(st.strikes for st in g.stats)),
        )  # fmt: skip
    console.print(table)
    totals = Table(title="bots")
    for col in ("bot", "seats", "games", "won", "lost", "drawn", "void", "forfeits", "strikes"):
        totals.add_column(col)
    for t in report.totals:
        forfeits = ", ".join(f"{k} {v}" for k, v in t.forfeits.items()) or "0"
        totals.add_row(
            safe_text(t.name), "/".join(t.seats), str(t.games), str(t.wins), str(t.losses), str(t.draws),
            str(t.voids), forfeits, str(t.strikes),
        )  # fmt: skip
    console.print(totals)
    console.print(timing_table(report))
    show_strikes(report)
    console.print(
        safe_text(
            f"records and logs: {report.out_dir}  (check one with: arena replay "
            f"{report.out_dir}/{report.games[0].game_id}.json)"
        ),
        soft_wrap=True,
    )


def bot_source(spec: BotSpec) -> str:
    """How ``python -m arena_sdk.testing`` names a seat's bot: its ``.py`` file, a tier, or ``BOT.py``.

    A ``cmd:`` bot is named by the last ``.py`` word of its command (relative
    paths stay relative to where the match ran); a container's source is not
    known here, so ``BOT.py`` stands for it.
    """
    if spec.kind == "builtin":
        return spec.target
    if spec.kind == "cmd":
        try:
            words = shlex.split(spec.target)
        except ValueError:
            words = spec.target.split()
        script = next((w for w in reversed(words) if w.endswith(".py")), None)
        if script is not None:
            return script
    return "BOT.py"


def reproduce_for(report: MatchReport, game: GameOutcome, seat: str, decision: int) -> str:
    """The command that asks ``seat``'s bot its ``decision`` of ``game`` again (``BOT.py`` if the seat is unknown)."""
    n = report.config.rules.players
    tc = report.config.time_control
    clock = (round(tc.move_s * 1000), round(tc.bank_s * 1000), round(tc.hard_cap_s * 1000))
    index = next((s for s in range(n) if seat_name(n, s) == seat), None)
    bot = "BOT.py" if index is None else bot_source(report.config.bots[report.seat_bots[index]])
    return reproduce_command(bot, report.out_dir / f"{game.game_id}.json", seat, decision, clock)


def struck_with_commands(report: MatchReport, game: GameOutcome) -> list[tuple[StruckDecision, str]]:
    """The game's struck decisions, each with the command that asks its bot that decision again."""
    return [(st, reproduce_for(report, game, st.seat, st.decision)) for st in struck_decisions(game.record)]


def lost_with_command(report: MatchReport, game: GameOutcome) -> tuple[dict[str, Any], str] | None:
    """A seat lost while asked (a crash, a dropped stream): its forfeit and the command that asks that decision again."""
    forfeit = game.forfeit or {}
    if "decision" not in forfeit or forfeit.get("reason") in ("timeout", "illegal"):
        return None  # not lost during a decision, or struck out (its strikes have their own lines)
    return forfeit, reproduce_for(report, game, forfeit["seat"], forfeit["decision"])


def lost_at_decision(report: MatchReport, game: GameOutcome) -> str | None:
    """``seat N, decision K: lost (crash: ...) — reproduce: ...`` for a seat lost while asked."""
    found = lost_with_command(report, game)
    if found is None:
        return None
    forfeit, command = found
    return (
        f"seat {forfeit['seat']}, decision {forfeit['decision']}: lost ({forfeit['reason']}: "
        f"{str(forfeit.get('detail', ''))[:200]}) — reproduce: {command}"
    )


def show_strikes(report: MatchReport) -> None:
    """One line per struck decision: where, why, and the command that reproduces it (issue 26)."""
    lines = [
        f"{game.game_id} {st.describe()} — reproduce: {command}"
        for game in report.games
        for st, command in struck_with_commands(report, game)
    ]
    lines += [f"{game.game_id} {line}" for game in report.games if (line := lost_at_decision(report, game))]
    if not lines:
        return
    console.print(f"[bold]strikes[/] ({len(lines)}; decisions count from 0, per seat and game):")
    for line in lines:
        console.print(safe_text("  " + line), soft_wrap=True)
    if any(spec.kind == "docker" for spec in report.config.bots):
        console.print("  (BOT.py stands for a container bot's source file)")


@dataclasses.dataclass(frozen=True)
class DecisionTimes:
    """One bot's time per decision over a match (issue 16 item 5): is it slow, or was the machine busy?"""

    decisions: int
    wall_ms: tuple[float, ...]
    cpu_ms: tuple[float, ...]
    """Only the decisions whose CPU time was measured (the container's cgroup, the local process)."""
    ref_us: tuple[float, ...]
    lag_ms: float
    """The referee's own stalls during these decisions (never charged to the bot)."""
    offturn_cpu_ms: float | None = None
    """CPU the bot used while not asked, over the games where it was measured (None: never)."""


def decision_times(report: MatchReport, bot: int) -> DecisionTimes:
    """Bot ``bot``'s decisions in every game's record (void games too: its time was spent)."""
    n = report.config.rules.players
    seats = {seat_name(n, s) for s, b in enumerate(report.seat_bots) if b == bot}
    actions = [a for g in report.games for a in _actions(g.record) if a.get("seat") in seats and "ms" in a]
    offturn = [
        figures["offturn_cpu_ms"]
        for g in report.games
        for seat, figures in record_timing(g.record).items()
        if seat in seats and figures["offturn_cpu_ms"] is not None
    ]
    return DecisionTimes(
        decisions=len(actions),
        wall_ms=tuple(float(a["ms"]) for a in actions),
        cpu_ms=tuple(float(a["cpu_ms"]) for a in actions if a.get("cpu_ms") is not None),
        ref_us=tuple(float(a.get("ref_us") or 0) for a in actions),
        lag_ms=sum(float(a.get("lag_ms") or 0) for a in actions),
        offturn_cpu_ms=sum(offturn) if offturn else None,
    )


def _actions(record: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for hand in record.get("hands", []):
        yield from hand.get("actions", [])


def _mean_p50(values: tuple[float, ...]) -> str:
    """``mean/p50`` of ``values``, or ``-`` for none."""
    if not values:
        return "-"
    return f"{statistics.fmean(values):.1f}/{statistics.median(values):.1f}"


def timing_table(report: MatchReport) -> Table:
    """Per bot: wall and CPU time per decision (mean/p50; wall max too) and the referee's own share.

    The CPU figure is over the decisions where it was measured; "(k of n)"
    says when that is not all of them, "-" when none.  A stalls column (the
    referee's own loop lag, added to no bot's clock) appears only if there were any,
    and an off-turn column (CPU used while not asked, total) only if it was measured.
    Compact cells so the table fits 80 columns next to the others.
    """
    times = [decision_times(report, b) for b in range(len(report.totals))]
    table = Table(title="time per decision")
    columns = ["bot", "decisions", "wall ms\nmean/p50", "wall ms\nmax", "CPU ms\nmean/p50", "referee\nµs mean"]
    stalls = any(t.lag_ms > 0 for t in times)
    offturn = any(t.offturn_cpu_ms is not None for t in times)
    for col in columns + (["stalls\nms"] if stalls else []) + (["off-turn\nCPU ms"] if offturn else []):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for total, t in zip(report.totals, times, strict=True):
        cpu = _mean_p50(t.cpu_ms)
        if t.cpu_ms and len(t.cpu_ms) < t.decisions:
            cpu += f" ({len(t.cpu_ms)} of {t.decisions})"
        row = [
            safe_text(total.name), str(t.decisions), _mean_p50(t.wall_ms),
            f"{max(t.wall_ms):.1f}" if t.wall_ms else "-", cpu,
            f"{statistics.fmean(t.ref_us):.0f}" if t.ref_us else "-",
        ]  # fmt: skip
        extra = [f"{t.lag_ms:.1f}"] if stalls else []
        if offturn:
            extra.append("-" if t.offturn_cpu_ms is None else f"{t.offturn_cpu_ms:.0f}")
        table.add_row(*row, *extra)
    return table
