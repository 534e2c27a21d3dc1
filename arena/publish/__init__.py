"""Publishing standings: rich tables, ``ratings.json``, ``results.csv``, ``leaderboard.md``,
a static ``index.html``, and the games with their replay pages (docs/replay.md).

The HTML pages are Jinja2 templates (``templates/``, rendered by :mod:`arena.publish.templating`
with autoescaping). Imports ``arena.ratings``, the rules engine (to replay records), the
standard library, ``rich`` and ``jinja2``, never the referee or the tournament runner::

    from arena.publish import Standings, GameRow, results_from_games, write_outputs
    from arena.ratings import fit
    standings = Standings(title, preset, rules_hash, entries, results_from_games(games), games,
                          faults, disqualified, provenance)
    ratings = fit(standings.results)
    write_outputs(standings, ratings, Path("out"))
"""

from arena.publish.csvfile import results_csv
from arena.publish.document import ratings_document
from arena.publish.html import render_html
from arena.publish.markdown import md_escape, render_markdown
from arena.publish.model import EntryTiming, GameRow, Standings, results_from_games
from arena.publish.rows import LeaderRow, leaderboard
from arena.publish.tables import rich_tables
from arena.publish.write import write_outputs

__all__ = [
    "EntryTiming",
    "GameRow",
    "LeaderRow",
    "Standings",
    "leaderboard",
    "md_escape",
    "ratings_document",
    "render_html",
    "render_markdown",
    "results_csv",
    "results_from_games",
    "rich_tables",
    "write_outputs",
]
