"""``write_outputs``: every published file into one directory."""

from __future__ import annotations

import json
from pathlib import Path

from arena.publish.csvfile import results_csv
from arena.publish.document import ratings_document
from arena.publish.games import write_games
from arena.publish.html import render_html
from arena.publish.markdown import render_markdown
from arena.publish.model import Standings
from arena.ratings import Ratings


def write_outputs(
    standings: Standings, ratings: Ratings, out_dir: Path, *, records_dir: Path | None = None, with_notes: bool = False,
    with_logs: bool = False,
) -> dict[str, Path]:
    """Write ``ratings.json``, ``results.csv``, ``leaderboard.md`` and ``index.html``.

    With ``records_dir`` (the tournament directory the games' ``record`` paths are
    relative to) also ``games.html`` and a replay page per game under ``games/``, and
    the crosstable links to them.  Returns the paths keyed ``json``, ``csv``, ``md``,
    ``html`` (and ``games``). Each file is written atomically (a temporary file
    renamed into place).  ``with_notes`` and ``with_logs``: see :func:`~arena.publish.games.write_games`.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    extra: dict[str, Path] = {}
    if records_dir is not None:
        extra["games"] = write_games(
            standings, ratings, out_dir, Path(records_dir), with_notes=with_notes, with_logs=with_logs
        )["page"]
    contents = {
        "json": (
            "ratings.json",
            json.dumps(ratings_document(standings, ratings), indent=2, ensure_ascii=False) + "\n",
        ),
        "csv": ("results.csv", results_csv(standings)),
        "md": ("leaderboard.md", render_markdown(standings, ratings)),
        "html": ("index.html", render_html(standings, ratings, games_page=bool(extra))),
    }
    paths: dict[str, Path] = {}
    for key, (name, text) in contents.items():
        path = out_dir / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8", newline="")
        tmp.replace(path)
        paths[key] = path
    return {**paths, **extra}
