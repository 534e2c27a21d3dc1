"""How a test is shown: the live panel, the verdict line and the JSON summary."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from arena.ratings.pairs import ELO_MODEL, Interval
from arena.ratings.sprt import H0, H1, Settings
from arena.sprt.runner import FAILED, INCONCLUSIVE, INTERRUPTED, Snapshot, SprtReport

#: Exit status of each result (2 is bad input, 130 an interrupted run, as for every command).
EXIT_CODES = {H1: 0, FAILED: 1, H0: 3, INCONCLUSIVE: 4, INTERRUPTED: 130}

BAR_WIDTH = 25


def signed(value: float, digits: int = 1) -> str:
    """``+12.3``, ``-4.0``, ``+inf``."""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.{digits}f}"


def interval_text(iv: Interval | None, digits: int = 1) -> str:
    """``+12.3 [+1.0, +23.6]`` or ``–``."""
    if iv is None:
        return "–"
    return f"{signed(iv.value, digits)}  [{signed(iv.lower, digits)}, {signed(iv.upper, digits)}]"


def llr_bar(llr: float, lower: float, upper: float) -> Text:
    """The LLR as a marker between its two bounds."""
    frac = (llr - lower) / (upper - lower)
    pos = min(BAR_WIDTH - 1, max(0, round(frac * (BAR_WIDTH - 1))))
    bar = Text()
    bar.append(f"{lower:+.2f} ", style="red")
    bar.append("[")
    for k in range(BAR_WIDTH):
        bar.append("●" if k == pos else "─", style="bold" if k == pos else "dim")
    bar.append("]")
    bar.append(f" {upper:+.2f}", style="green")
    return bar


def hypotheses(settings: Settings) -> str:
    """``H0: elo ≤ 0 · H1: elo ≥ +5 (α 0.05, β 0.05, logistic Elo)``."""
    return (
        f"H0: elo <= {settings.elo0:+g} · H1: elo >= {settings.elo1:+g} "
        f"(alpha {settings.alpha:g}, beta {settings.beta:g}, {ELO_MODEL} Elo)"
    )


def render(snapshot: Snapshot, settings: Settings, elapsed: float | None = None) -> Panel:
    """The live panel: pairs, pentanomial, LLR against its bounds, Elo and points per table-hand."""
    new, old = snapshot.names
    st, summary = snapshot.status, snapshot.summary
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", justify="right")
    grid.add_column()
    pairs = f"{st.pairs}"
    if snapshot.max_pairs is not None:
        pairs += f" of at most {snapshot.max_pairs}"
    extra = [f"{snapshot.games} games", f"{snapshot.in_play} pairs in play"]
    if snapshot.resumed_pairs:
        extra.append(f"{snapshot.resumed_pairs} from before")
    if snapshot.voids:
        extra.append(f"{snapshot.voids} voided games replayed")
    if elapsed is not None and elapsed > 0 and st.pairs > snapshot.resumed_pairs:
        extra.append(f"{60.0 * (st.pairs - snapshot.resumed_pairs) / elapsed:.1f} pairs/min")
    grid.add_row("pairs", Text(f"{pairs}  ({', '.join(extra)})"))
    c = st.counts
    grid.add_row(
        "pentanomial",
        Text(
            f"0: {c[0]}   ½: {c[1]}   1: {c[2]}   1½: {c[3]}   2: {c[4]}   (NEW's points per pair)"
        ),
    )
    llr_line = Text(f"{st.llr:+.3f}  ")
    llr_line.append_text(llr_bar(st.llr, st.lower, st.upper))
    grid.add_row("LLR", llr_line)
    grid.add_row(
        "Elo", Text(f"{interval_text(summary.elo)}  (NEW − OLD, {ELO_MODEL}, 95% from pairs)")
    )
    score = summary.score
    if score is not None:
        grid.add_row(
            "score",
            Text(f"{100 * score.value:.1f}%  [{100 * score.lower:.1f}%, {100 * score.upper:.1f}%]"),
        )
    grid.add_row(
        "pts/table-hand",
        Text(f"{interval_text(summary.points_per_hand)}  (NEW's point margin, 95% from pairs)"),
    )
    if st.verdict is not None:
        grid.add_row("result", Text(verdict_text(st.verdict, snapshot.names), style="bold"))
    title = Text.assemble(
        ("arena sprt: ", "bold"), (new, "bold cyan"), " (NEW) vs ", (old, "bold magenta"), " (OLD)"
    )
    return Panel(
        Group(Text(hypotheses(settings), style="dim"), grid),
        title=title,
        title_align="left",
        expand=False,
    )


def verdict_text(result: str, names: tuple[str, str]) -> str:
    """One line for a result."""
    new, old = names
    if result == H1:
        return (
            f"H1 accepted: {new} is stronger than {old} (by at least elo1 rather than at most elo0)"
        )
    if result == H0:
        return (
            f"H0 accepted: {new} is not stronger than {old} by elo1 (at most elo0 is more likely)"
        )
    if result == INCONCLUSIVE:
        return "inconclusive: the pair limit was reached with the LLR between its bounds"
    if result == INTERRUPTED:
        return "interrupted: run the same command again to resume"
    return "failed"


def report_json(report: SprtReport, settings: Settings, extra: dict[str, Any]) -> dict[str, Any]:
    """The summary ``--json`` prints."""
    snap = report.snapshot
    st, summary = snap.status, snap.summary
    return {
        "result": report.result,
        "exit_code": EXIT_CODES[report.result],
        "new": snap.names[0],
        "old": snap.names[1],
        **extra,
        "settings": settings.to_dict(),
        "pairs": st.pairs,
        "decided_at": st.decided_at,
        "pentanomial": list(st.counts),
        "llr": st.llr,
        "lower": st.lower,
        "upper": st.upper,
        "elo_model": ELO_MODEL,
        "elo": None if summary.elo is None else summary.elo.to_dict(),
        "score": None if summary.score is None else summary.score.to_dict(),
        "points_per_hand": None
        if summary.points_per_hand is None
        else summary.points_per_hand.to_dict(),
        "games": snap.games,
        "voided_games": snap.voids,
        "resumed_pairs": snap.resumed_pairs,
        "max_pairs": snap.max_pairs,
        "interrupted": report.interrupted,
        "failure": report.failure,
        "void_pairs": [{"pair": pair, "reason": reason} for pair, reason in report.void_pairs],
        "run_id": report.run_id,
    }
