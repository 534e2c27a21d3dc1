"""``index.html``: a static, self-contained page (inline CSS, inline SVG, no scripts).

Stable hooks for tests and scrapers: ``table#leaderboard``, ``#crosstable``, ``#los``,
``#faults``, ``#provenance``; each body row has ``data-entry="NAME"``; leaderboard
cells have classes ``rank entry elo margin interval games score wins losses draws``
(``elo``/``margin``/``score`` carry the unrounded number in ``data-value``), and
``pentanomial`` (``data-counts``) and ``points`` (``data-value``/``-lower``/``-upper``).
Every name is escaped, and a Content-Security-Policy forbids scripts outright.
"""

from __future__ import annotations

from html import escape

from arena.publish.games import pairing_anchor
from arena.publish.model import PROVENANCE_KEYS, Standings
from arena.publish.rows import (
    LeaderRow,
    all_names,
    fmt_elo,
    fmt_pct,
    interval_text,
    leaderboard,
    rules_text,
)
from arena.publish.rows import fmt_pentanomial, fmt_points
from arena.publish.svg import Scale, error_bar
from arena.publish.timecells import TIME_COLUMNS, time_cells
from arena.ratings import Ratings

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; background: #fff; }
h1 { margin-bottom: 0.2em; }
.meta { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.5em 0 2em; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e3e3e3; text-align: right; }
th, td { white-space: nowrap; }
th { background: #f4f4f4; }
td.entry, th.entry { text-align: left; max-width: 22em; overflow: hidden; text-overflow: ellipsis; }
tr.disqualified td { color: #999; }
.dq-mark { color: #fff; background: #c0392b; border-radius: 3px; padding: 0 4px; }
.dq-mark { font-size: 11px; margin-left: 4px; }
svg.errorbar line.range, svg.errorbar line.tick { stroke: #2c6fbb; stroke-width: 2; }
svg.errorbar line.mean { stroke: #bbb; stroke-dasharray: 2 2; }
svg.errorbar circle.point { fill: #1b3f6b; }
#crosstable td, #los td { text-align: center; }
#crosstable td.entry, #los td.entry { text-align: left; }
th.interval { text-align: center; }
td.self { background: #eee; }
code { background: #f4f4f4; padding: 0 3px; }
"""


def _e(text: object) -> str:
    """Escape for element text and quoted attribute values."""
    return escape(str(text), quote=True)


def _table(table_id: str, head_row: str, body_rows: str) -> str:
    """A ``<table id=...>`` with one header row and the given body rows."""
    head = f"<thead>{head_row}</thead>"
    return f'<table id="{table_id}">\n{head}\n<tbody>\n{body_rows}\n</tbody>\n</table>'


def _num(value: float | None) -> str:
    """A number at full precision for a ``data-value`` attribute (empty for none)."""
    return "" if value is None else repr(float(value))


def render_html(standings: Standings, ratings: Ratings, *, games_page: bool = False) -> str:
    """The page, as a string; with ``games_page`` the crosstable links to ``games.html``."""
    title = _e(standings.title)
    meta = (
        f'Ruleset <code id="rules">{_e(rules_text(standings))}</code> '
        f"(hash <code>{_e(standings.ruleset_hash[:16])}</code>) · {ratings.games} games in "
        f"{ratings.clusters} duplicate pairs · Bradley–Terry, pool mean {ratings.mean:g} · "
        f'95% intervals: <span id="error-method">{_e(ratings.error_method)}</span>'
        f'<br><span id="interval-note">{_e(interval_text(ratings))}. '
        "DQ marks an entry disqualified for too many forfeits.</span>"
    )
    body = "\n".join(
        [
            f"<h1>{title}</h1>",
            f'<p class="meta">{meta}</p>',
            "<h2>Leaderboard</h2>",
            leaderboard_html(standings, ratings),
            "<h2>Crosstable</h2>",
            '<p class="meta">Row entry against column entry: wins-losses-draws and score.</p>',
            crosstable_html(standings, ratings, games_page=games_page),
            "<h2>Likelihood of superiority</h2>",
            '<p class="meta">Probability that the row entry is stronger than the column entry.</p>',
            los_html(standings, ratings),
            "<h2>Faults</h2>",
            faults_html(standings, ratings),
            "<h2>Provenance</h2>",
            provenance_html(standings, ratings),
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def leaderboard_html(standings: Standings, ratings: Ratings) -> str:
    """``table#leaderboard`` with an SVG error bar in every rated row."""
    rows = leaderboard(standings, ratings)
    rated = [r for r in rows if r.elo is not None]
    scale = Scale.spanning(
        [v for r in rated for v in (r.lower, r.upper) if v is not None], ratings.mean
    )
    head = "".join(
        f'<th class="{c}">{h}</th>'
        for c, h in (
            ("rank", "#"),
            ("entry", "Entry"),
            ("elo", "Elo"),
            ("margin", "±"),
            ("interval", "95% interval"),
            ("pentanomial", "Pairs 0-½-1-1½-2"),
            ("points", "Pts/hand"),
            ("games", "Games"),
            ("score", "Score"),
            ("wins", "W"),
            ("losses", "L"),
            ("draws", "D"),
        )
    )
    body = "\n".join(_leader_row(r, scale, ratings.mean) for r in rows)
    return _table("leaderboard", f"<tr>{head}</tr>", body)


def _leader_row(row: LeaderRow, scale: Scale, mean: float) -> str:
    dq = ' <span class="dq-mark" title="disqualified">DQ</span>' if row.disqualified else ""
    bar = ""
    if row.elo is not None and row.lower is not None and row.upper is not None:
        bar = error_bar(scale, row.elo, row.lower, row.upper, mean)
    cells = [
        f'<td class="rank">{"" if row.rank is None else row.rank}</td>',
        f'<td class="entry" title="{_e(row.name)}">{_e(row.name)}{dq}</td>',
        f'<td class="elo" data-value="{_num(row.elo)}">{fmt_elo(row.elo)}</td>',
        f'<td class="margin" data-value="{_num(row.margin)}">{fmt_elo(row.margin)}</td>',
        f'<td class="interval">{bar}</td>',
        _pair_cells(row),
        f'<td class="games">{row.games}</td>',
        f'<td class="score" data-value="{_num(row.score_pct)}">{fmt_pct(row.score_pct)}</td>',
        f'<td class="wins">{row.wins}</td>',
        f'<td class="losses">{row.losses}</td>',
        f'<td class="draws">{row.draws}</td>',
    ]
    cls = ' class="disqualified"' if row.disqualified else ""
    return f'<tr data-entry="{_e(row.name)}"{cls}>{"".join(cells)}</tr>'


def _pair_cells(row: LeaderRow) -> str:
    """The pentanomial counts and the points per table-hand (``data-*``: full numbers)."""
    pairs = row.pairs
    counts = "" if pairs is None else " ".join(map(str, pairs.pentanomial))
    points = None if pairs is None else pairs.points_per_hand
    low, high = (None, None) if points is None else (points.lower, points.upper)
    return (
        f'<td class="pentanomial" data-counts="{counts}">{_e(fmt_pentanomial(pairs))}</td>'
        f'<td class="points" data-value="{_num(None if points is None else points.value)}" '
        f'data-lower="{_num(low)}" data-upper="{_num(high)}">{_e(fmt_points(points))}</td>'
    )


def _matrix_head(names: list[str]) -> str:
    cols = "".join(
        f'<th title="{_e(n)}" data-entry="{_e(n)}">{k}</th>' for k, n in enumerate(names, 1)
    )
    return f'<tr><th class="entry">Entry</th>{cols}</tr>'


def _matrix_row(k: int, name: str, cells: list[str]) -> str:
    return (
        f'<tr data-entry="{_e(name)}"><td class="entry">{k}. {_e(name)}</td>{"".join(cells)}</tr>'
    )


def crosstable_html(standings: Standings, ratings: Ratings, *, games_page: bool = False) -> str:
    """``table#crosstable``: cells ``td.pair[data-opponent]`` with W-L-D and score.

    With ``games_page`` each cell links to that pairing's games in ``games.html``.
    """
    names = all_names(standings, ratings)
    rows = []
    for k, a in enumerate(names, 1):
        cells = []
        for b in names:
            rec = ratings.crosstable.get(a, {}).get(b)
            if a == b:
                cells.append('<td class="self">—</td>')
            elif rec is None:
                cells.append(f'<td class="none" data-opponent="{_e(b)}">·</td>')
            else:
                shade = f"hsl({120 * rec.points / rec.games:.0f}, 60%, 88%)"
                text = f"{rec.wins}-{rec.losses}-{rec.draws}<br>{fmt_pct(rec.score_pct)}"
                if games_page:
                    href = f"games.html#{pairing_anchor(names, a, b)}"
                    text = f'<a href="{href}" title="the games of this pairing">{text}</a>'
                cells.append(
                    f'<td class="pair" data-opponent="{_e(b)}" data-games="{rec.games}" '
                    f'data-points="{_num(rec.points)}" style="background: {shade}">{text}</td>'
                )
        rows.append(_matrix_row(k, a, cells))
    return _table("crosstable", _matrix_head(names), "\n".join(rows))


def los_html(standings: Standings, ratings: Ratings) -> str:
    """``table#los``: likelihood of superiority, row over column, in percent."""
    names = [p.name for p in ratings.players]
    rows = []
    for k, a in enumerate(names, 1):
        cells = []
        for b in names:
            if a == b:
                cells.append('<td class="self">—</td>')
            else:
                v = ratings.los[a][b]
                cells.append(
                    f'<td class="los" data-opponent="{_e(b)}" data-value="{_num(v)}">'
                    f"{100 * v:.0f}%</td>"
                )
        rows.append(_matrix_row(k, a, cells))
    return _table("los", _matrix_head(names), "\n".join(rows))


def faults_html(standings: Standings, ratings: Ratings) -> str:
    """``table#faults``: one row per entry, one column per reason (``td[data-reason]``), a total,
    then the entry's time per decision (``td[data-time]``: wall, CPU, the referee's share, stalls)."""
    reasons = standings.fault_reasons()
    head = "".join(f'<th data-reason="{_e(r)}">{_e(r)}</th>' for r in reasons)
    rows = []
    for name in all_names(standings, ratings):
        counts = standings.faults.get(name, {})
        cells = "".join(f'<td data-reason="{_e(r)}">{counts.get(r, 0)}</td>' for r in reasons)
        times = "".join(
            f'<td data-time="{key}">{_e(text)}</td>' for key, text in time_cells(standings.timing.get(name))
        )
        rows.append(
            f'<tr data-entry="{_e(name)}"><td class="entry">{_e(name)}</td>{cells}'
            f'<td class="total">{sum(counts.values())}</td>{times}</tr>'
        )
    time_head = "".join(f'<th data-time="{key}" title="{_e(why)}">{_e(label)}</th>' for key, label, why in TIME_COLUMNS)
    head = f'<tr><th class="entry">Entry</th>{head}<th class="total">Total</th>{time_head}</tr>'
    return _table("faults", head, "\n".join(rows))


def provenance_html(standings: Standings, ratings: Ratings) -> str:
    """``table#provenance``: image id, SDK and engine version per entry."""
    rows = []
    for name in all_names(standings, ratings):
        prov = standings.provenance.get(name, {})
        cells = "".join(
            f'<td class="{k}"><code>{_e(prov.get(k, ""))}</code></td>' for k in PROVENANCE_KEYS
        )
        rows.append(f'<tr data-entry="{_e(name)}"><td class="entry">{_e(name)}</td>{cells}</tr>')
    head = "".join(f'<th class="{k}">{k.replace("_", " ")}</th>' for k in PROVENANCE_KEYS)
    return _table("provenance", f'<tr><th class="entry">Entry</th>{head}</tr>', "\n".join(rows))
