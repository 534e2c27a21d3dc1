"""Rich tables for the terminal: leaderboard, crosstable, faults, time per decision.

Names go in through :func:`~arena.text.safe_text`: a bot called
``[link=...]`` must print as itself, and escape codes in a name never reach
the terminal.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from arena.publish.model import Standings
from arena.publish.rows import LeaderRow, all_names, fmt_elo, fmt_pct, interval_text, leaderboard, rules_text
from arena.text import safe_text
from arena.publish.timecells import TIME_COLUMNS, time_cells
from arena.publish.rows import fmt_pentanomial, fmt_points
from arena.ratings import Ratings


def rich_tables(standings: Standings, ratings: Ratings) -> list[Table]:
    """The leaderboard, the crosstable, the faults and (where stored) the time per entry, as rich tables."""
    tables = [
        leaderboard_table(standings, ratings),
        crosstable_table(standings, ratings),
        faults_table(standings, ratings),
    ]
    if standings.timing:
        tables.append(time_table(standings, ratings))
    return tables


def leaderboard_table(standings: Standings, ratings: Ratings) -> Table:
    """Rank, entry, Elo, ±, pentanomial, points per hand, score %, W/L/D, and a DQ mark if any."""
    rows = leaderboard(standings, ratings)
    table = Table(
        title=safe_text(standings.title),
        caption=Text(
            f"rules {rules_text(standings)} (hash {standings.ruleset_hash[:12]}) · "
            f"{ratings.games} games · pool mean {ratings.mean:g}\n{interval_text(ratings)}"
            + ("\nDQ: disqualified" if standings.disqualified else "")
        ),
    )
    # No cell may wrap or shrink: at 80 columns a name or a pentanomial cut to
    # "0-0-1-0…" misleads.  So the terminal drops the games column (W/L/D sums
    # to it) and shows DQ only when someone was disqualified.
    disqualified = any(row.disqualified for row in rows)
    for header, justify, keep in (
        ("#", "right", True),
        ("Entry", "left", True),
        ("Elo", "right", True),
        ("±", "right", True),
        ("Pairs\n0-½-1-1½-2", "right", True),
        ("Pts/hand", "right", True),
        ("Score", "right", True),
        ("W/L/D", "right", True),
    ):
        table.add_column(header, justify=justify, no_wrap=keep)  # type: ignore[arg-type]
    if disqualified:
        table.add_column("DQ", justify="left")
    widths = {
        "Entry": max([5, *(len(safe_text(r.name)) for r in rows)]),
        "Pairs\n0-½-1-1½-2": max([10, *(len(fmt_pentanomial(r.pairs)) for r in rows)]),
        "Pts/hand": max([8, *(len(_points(r)) for r in rows)]),
    }
    for column in table.columns:
        if str(column.header) in widths:
            column.min_width = widths[str(column.header)]
    for row in rows:
        cells: list[str | Text] = [
            "" if row.rank is None else str(row.rank),
            safe_text(row.name),
            fmt_elo(row.elo),
            fmt_elo(row.margin),
            fmt_pentanomial(row.pairs),
            _points(row),
            fmt_pct(row.score_pct),
            f"{row.wins}/{row.losses}/{row.draws}",
        ]
        if disqualified:
            cells.append(Text("DQ", style="bold red") if row.disqualified else "")
        table.add_row(*cells)
    return table


def _points(row: LeaderRow) -> str:
    """Points per table-hand, without spaces (the terminal is narrow)."""
    return fmt_points(None if row.pairs is None else row.pairs.points_per_hand).replace(" ", "")


def crosstable_table(standings: Standings, ratings: Ratings) -> Table:
    """Row entry's W-L-D and score against each column entry."""
    names = all_names(standings, ratings)
    table = Table(title=Text("Crosstable (row vs column: W-L-D, score)"))
    table.add_column("Entry")
    for k, _ in enumerate(names, 1):
        table.add_column(str(k), justify="center")
    for k, a in enumerate(names, 1):
        cells: list[str | Text] = [f"{k}. {safe_text(a)}"]
        for b in names:
            rec = ratings.crosstable.get(a, {}).get(b)
            if a == b:
                cells.append("—")
            elif rec is None:
                cells.append("·")
            else:
                cells.append(f"{rec.wins}-{rec.losses}-{rec.draws} {fmt_pct(rec.score_pct)}")
        table.add_row(*cells)
    return table


def faults_table(standings: Standings, ratings: Ratings) -> Table:
    """Fault counts per entry and reason."""
    reasons = standings.fault_reasons()
    table = Table(title=Text("Faults"))
    table.add_column("Entry")
    for reason in reasons:
        table.add_column(safe_text(reason), justify="right")
    table.add_column("Total", justify="right")
    for name in all_names(standings, ratings):
        counts = standings.faults.get(name, {})
        table.add_row(
            safe_text(name), *(str(counts.get(r, 0)) for r in reasons), str(sum(counts.values()))
        )
    return table


def time_table(standings: Standings, ratings: Ratings) -> Table:
    """Each entry's time per decision: wall, CPU, the referee's share and its stalls."""
    table = Table(title=Text("Time per decision"), caption="–: not measured (CPU) or no stored times")
    table.add_column("Entry")
    for _, label, _ in TIME_COLUMNS:
        table.add_column(label, justify="right")
    for name in all_names(standings, ratings):
        table.add_row(safe_text(name), *(text for _, text in time_cells(standings.timing.get(name))))
    return table
