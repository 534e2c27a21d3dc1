"""``arena sprt``: is NEW stronger than OLD? Duplicate pairs until a sequential test decides."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Annotated

import typer
from arena_sdk.engine import parse_overrides, resolve_ruleset
from rich.live import Live
from rich.text import Text

from arena.commands.common import bad_input_exits, console, err_console, fail, hold_or_fail, print_json
from arena.commands.options import (
    ClockOption,
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
    warn_if_oversubscribed,
)
from arena.errors import ArenaError
from arena.ratings.sprt import Settings
from arena.referee.botspec import parse_bot_spec
from arena.sprt import (
    DEFAULT_PAIRS_PER_TABLE,
    Progress,
    Snapshot,
    SprtConfig,
    run_sprt,
)
from arena.sprt.config import sprt_concurrency
from arena.sprt.store import stored_seed
from arena.sprt.view import EXIT_CODES, hypotheses, render, report_json, verdict_text
from arena.text import safe_text


#: The options of ``arena sprt`` alone (the shared ones are arena.commands.options').
SprtBotsOption = Annotated[
    list[str],
    typer.Option(
        "--bot",
        help="Twice: NEW, then OLD. cmd:COMMAND (a local process), docker:IMAGE, or builtin:TIER.",
        show_default=False,
    ),
]
Elo0Option = Annotated[float, typer.Option("--elo0", help="H0: NEW is at most this much stronger (logistic Elo).")]
Elo1Option = Annotated[float, typer.Option("--elo1", help="H1: NEW is at least this much stronger (logistic Elo).")]
AlphaOption = Annotated[float, typer.Option(help="False positive rate: accepting H1 when H0 holds.")]
BetaOption = Annotated[float, typer.Option(help="False negative rate: accepting H0 when H1 holds.")]
SprtConcurrencyOption = Annotated[
    str,
    typer.Option(
        metavar="N|auto",
        help="Tables at the same time, each its own process: two per pair, so an even number; "
        "auto: one per core, rounded down to an even number (at least 2).",
    ),
]
MaxPairsOption = Annotated[
    int | None,
    typer.Option("--max-pairs", help="Stop as inconclusive after this many pairs (default: no limit)."),
]
PairsPerTableOption = Annotated[
    int, typer.Option("--pairs-per-table", help="Deals a table plays before its bots are restarted.")
]
SprtOutOption = Annotated[
    Path, typer.Option(help="Directory for results.sqlite, game records and bot logs (resumable).")
]


def sprt(
    bots: SprtBotsOption,
    elo0: Elo0Option,
    elo1: Elo1Option,
    alpha: AlphaOption = 0.05,
    beta: BetaOption = 0.05,
    preset: PresetOption = "pagat",
    overrides: SetOption = None,
    move_time: MoveTimeOption = 1.0,
    time_bank: TimeBankOption = 30.0,
    hard_cap: HardCapOption = None,
    strikes: StrikesOption = 3,
    clock: ClockOption = "wall",
    start_timeout: StartTimeoutOption = 20.0,
    concurrency: SprtConcurrencyOption = "2",
    max_pairs: MaxPairsOption = None,
    pairs_per_table: PairsPerTableOption = DEFAULT_PAIRS_PER_TABLE,
    seed: SeedOption = None,
    out: SprtOutOption = Path("sprt/latest"),
    as_json: JsonOption = False,
) -> None:
    """Test whether NEW is stronger than OLD with a sequential probability ratio test.

    Plays duplicate pairs (one deal at two tables at the same time, partnerships
    swapped) until the log-likelihood ratio of H1 (elo >= ELO1) against H0
    (elo <= ELO0) crosses a bound set by ALPHA and BETA. Exit status: 0 H1
    accepted, 3 H0 accepted, 4 inconclusive (--max-pairs reached), 1 the
    platform failed, 2 bad input, 130 interrupted. Run the same command again
    to resume a stopped test (see docs/sprt.md).
    """
    with bad_input_exits():
        rules = resolve_ruleset(preset, parse_overrides(overrides or []))
    if len(bots) != 2:
        fail(f"--bot must be given twice (NEW, then OLD), got {len(bots)}")
    try:
        new, old = (parse_bot_spec(b) for b in bots)
        settings = Settings(elo0, elo1, alpha, beta)
        config = SprtConfig(
            new=new, old=old, settings=settings, rules=rules,
            time_control=time_control(move_time, time_bank, hard_cap, strikes, clock),
            seed=seed or "", out=out, concurrency=sprt_concurrency(concurrency), max_pairs=max_pairs,
            pairs_per_table=pairs_per_table,
            start_timeout=start_seconds(start_timeout),  # finite, in range, like every time
        )  # fmt: skip
    except (ArenaError, ValueError) as exc:  # ValueError: a time or number the options' checks refused
        fail(str(exc))
    # One test per --out, locked before its store is read (a second test there is refused, nothing touched).
    with hold_or_fail(out, "arena sprt"):
        try:
            config = dataclasses.replace(config, seed=seed if seed is not None else stored_seed(out) or match_seed(None))
        except ArenaError as exc:
            fail(str(exc))
        code = _run(config, settings, as_json)
    raise typer.Exit(code)


def _run(config: SprtConfig, settings: Settings, as_json: bool) -> int:
    """Play the test with its live display (none with ``--json``), print how it ended; its exit status."""
    out = config.out
    warn_if_oversubscribed(config.concurrency, config.time_control)
    started = time.monotonic()
    live = Live(console=console, refresh_per_second=4, transient=False, auto_refresh=not as_json)

    def on_update(snapshot: Snapshot) -> None:
        if not as_json:
            live.update(render(snapshot, settings, time.monotonic() - started))

    def on_void(game_id: str, reason: str) -> None:
        if not as_json:
            # The reason can hold a bot's or an image's text: printed literally, on one line.
            live.console.print(
                f"[yellow]void {safe_text(game_id)}: {safe_text(reason)} (its pair will be played again)[/]",
                highlight=False,
            )

    def on_notice(message: str) -> None:  # on stderr, also with --json (whose stdout is the report alone)
        err_console.print(f"[yellow]note:[/] {safe_text(message)}", highlight=False)

    if not as_json:
        console.print(
            Text(f"arena sprt: {hypotheses(settings)}; seed {safe_text(config.seed)}; results in {safe_text(str(out))}")
        )
    try:
        if as_json:
            report = run_sprt(config, Progress(on_update, on_void, on_notice))
        else:
            with live:
                report = run_sprt(config, Progress(on_update, on_void, on_notice))
            if not console.is_terminal:
                console.print()  # the last frame ends without a line break
    except ArenaError as exc:
        fail(str(exc))
    code = EXIT_CODES[report.result]
    if as_json:
        print_json(report_json(report, settings, {"seed": config.seed, "out": str(out)}))
    else:
        if report.snapshot.resumed_pairs:
            console.print(f"resumed with {report.snapshot.resumed_pairs} pairs already played")
        line = verdict_text(report.result, config.names)
        if report.failure:
            line += f": {report.failure}"
        # Names and failures can hold bots' or images' text: printed literally, without escapes.
        console.print(f"[bold]{safe_text(line)}[/]", highlight=False)
        console.print(f"results: {safe_text(str(out))}  (arena ratings show {safe_text(str(out))})", soft_wrap=True, highlight=False)
    return code
