"""``leaderboard.md``: the leaderboard and faults as Markdown tables."""

from __future__ import annotations

import re

from arena.publish.model import Standings
from arena.publish.rows import all_names, fmt_elo, fmt_pct, interval_text, leaderboard, rules_text
from arena.publish.rows import fmt_pentanomial, fmt_points
from arena.publish.timecells import TIME_COLUMNS, time_cells
from arena.ratings import Ratings

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def md_escape(text: str) -> str:
    """Untrusted text as literal Markdown inline text (also safe inside a table cell).

    HTML metacharacters become entities (Markdown renders raw HTML), Markdown
    punctuation is backslash-escaped, and line breaks become spaces.
    """
    text = " ".join(text.splitlines())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", text)


def render_markdown(standings: Standings, ratings: Ratings) -> str:
    """The Markdown document."""
    lines = [
        f"# {md_escape(standings.title)}",
        "",
        f"Ruleset {md_escape(rules_text(standings))} (hash `{standings.ruleset_hash}`), "
        f"{ratings.games} games in {ratings.clusters} duplicate pairs. Bradley–Terry ratings, "
        f"pool mean {ratings.mean:g}; {md_escape(interval_text(ratings))}.",
        "",
        "| # | Entry | Elo | ± | Pairs 0-½-1-1½-2 | Pts/hand | Games | Score | W | L | D | DQ |",
        "|--:|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|",
    ]
    for row in leaderboard(standings, ratings):
        rank = "" if row.rank is None else row.rank
        lines.append(
            f"| {rank} | {md_escape(row.name)} | {fmt_elo(row.elo)} "
            f"| {fmt_elo(row.margin)} | {fmt_pentanomial(row.pairs)} "
            f"| {fmt_points(None if row.pairs is None else row.pairs.points_per_hand)} "
            f"| {row.games} | {fmt_pct(row.score_pct)} | {row.wins} "
            f"| {row.losses} | {row.draws} | {'DQ' if row.disqualified else ''} |"
        )
    reasons = standings.fault_reasons()
    lines += ["", "## Faults", ""]
    lines.append(
        "| Entry | "
        + " | ".join(md_escape(r) for r in reasons)
        + (" | " if reasons else "")
        + "Total |"
    )
    lines.append("|:--|" + "--:|" * (len(reasons) + 1))
    for name in all_names(standings, ratings):
        counts = standings.faults.get(name, {})
        cells = [str(counts.get(r, 0)) for r in reasons] + [str(sum(counts.values()))]
        lines.append(f"| {md_escape(name)} | " + " | ".join(cells) + " |")
    if standings.timing:
        lines += ["", "## Time per decision", ""]
        lines.append("| Entry | " + " | ".join(label for _, label, _ in TIME_COLUMNS) + " |")
        lines.append("|:--|" + "--:|" * len(TIME_COLUMNS))
        for name in all_names(standings, ratings):
            cells = [text for _, text in time_cells(standings.timing.get(name))]
            lines.append(f"| {md_escape(name)} | " + " | ".join(cells) + " |")
        lines += ["", " ".join(f"*{label}*: {why}." for _, label, why in TIME_COLUMNS)]
    if standings.disqualified:
        lines += [
            "",
            "DQ: disqualified (forfeits over the limit); its remaining games count as forfeits.",
        ]
    return "\n".join(lines) + "\n"
