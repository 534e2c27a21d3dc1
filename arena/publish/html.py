"""``index.html``: a static, self-contained page (inline CSS, inline SVG, no scripts).

The page is the template ``templates/index.html``; this module gathers what it shows.
Stable hooks for tests and scrapers: ``table#leaderboard``, ``#crosstable``, ``#los``,
``#faults``, ``#provenance``; each body row has ``data-entry="NAME"``; leaderboard
cells have classes ``rank entry elo margin interval games score wins losses draws``
(``elo``/``margin``/``score`` carry the unrounded number in ``data-value``), and
``pentanomial`` (``data-counts``) and ``points`` (``data-value``/``-lower``/``-upper``).
Every name is escaped (the templates autoescape), and a Content-Security-Policy (in the
template) forbids scripts outright.
"""

from __future__ import annotations

from arena.publish.games import pairing_anchor
from arena.publish.model import PROVENANCE_KEYS, Standings
from arena.publish.rows import LeaderRow, all_names, interval_text, leaderboard, rules_text
from arena.publish.svg import ErrorBar, Scale, error_bar
from arena.publish.templating import render
from arena.publish.timecells import TIME_COLUMNS, time_cells
from arena.ratings import PairRecord, Ratings

#: One crosstable cell: the column entry, the row entry's record against it (None: never
#: met) and the link to the pairing's games (None: no games page).
Cell = tuple[str, PairRecord | None, str | None]


def render_html(standings: Standings, ratings: Ratings, *, games_page: bool = False) -> str:
    """The page, as a string; with ``games_page`` the crosstable links to ``games.html``."""
    names = all_names(standings, ratings)
    return render(
        "index.html",
        standings=standings,
        ratings=ratings,
        rules=rules_text(standings),
        interval_note=interval_text(ratings),
        leaderboard=leader_rows(standings, ratings),
        names=names,
        crosstable=crosstable(names, ratings, games_page=games_page),
        rated=[p.name for p in ratings.players],
        los=ratings.los,
        reasons=standings.fault_reasons(),
        faults=[
            (name, standings.faults.get(name, {}), time_cells(standings.timing.get(name)))
            for name in names
        ],
        time_columns=TIME_COLUMNS,
        provenance_keys=PROVENANCE_KEYS,
        provenance=[(name, standings.provenance.get(name, {})) for name in names],
    )


def leader_rows(standings: Standings, ratings: Ratings) -> list[tuple[LeaderRow, ErrorBar | None]]:
    """The leaderboard's rows, each with its error bar (None when unrated); all bars share
    one scale so they line up."""
    rows = leaderboard(standings, ratings)
    rated = [r for r in rows if r.elo is not None]
    scale = Scale.spanning(
        [v for r in rated for v in (r.lower, r.upper) if v is not None], ratings.mean
    )
    return [
        (
            row,
            error_bar(scale, row.elo, row.lower, row.upper, ratings.mean)
            if row.elo is not None and row.lower is not None and row.upper is not None
            else None,
        )
        for row in rows
    ]


def crosstable(
    names: list[str], ratings: Ratings, *, games_page: bool = False
) -> list[tuple[str, list[Cell]]]:
    """Each entry with its cells against every entry (itself included, shown as "—")."""
    return [
        (
            a,
            [
                (
                    b,
                    ratings.crosstable.get(a, {}).get(b),
                    f"games.html#{pairing_anchor(names, a, b)}" if games_page and a != b else None,
                )
                for b in names
            ],
        )
        for a in names
    ]
