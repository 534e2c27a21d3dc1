"""``results.csv``: one row per game, with the provenance every result carries."""

from __future__ import annotations

import csv
import io

from arena.publish.model import PROVENANCE_KEYS, Standings
from arena.publish.rows import fmt_score

COLUMNS = (
    "game_id",
    "entry_a",
    "entry_b",
    "score_a",
    "ending",
    "cluster",
    "scores_a",
    "scores_b",
    "ruleset_hash",
    "image_a",
    "sdk_a",
    "engine_a",
    "image_b",
    "sdk_b",
    "engine_b",
)


#: A text cell starting with one of these is a formula to a spreadsheet (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet runs as a formula.

    The usual rule (OWASP "CSV injection"): a cell that starts with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return gets a leading ``'``, which
    spreadsheets show as text and hide.  Only text columns (names, ids, endings,
    versions) go through it; numbers are written as numbers.
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def results_csv(standings: Standings) -> str:
    """The games as CSV text (RFC 4180 quoting), in the order of ``standings.games``.

    Text cells that a spreadsheet would run as a formula get a leading ``'``
    (:func:`safe_cell`); a reader that wants the raw name strips it, or uses
    ``ratings.json``, which holds every name exactly.
    """
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(COLUMNS)
    for g in standings.games:
        pa = standings.provenance.get(g.entry_a, {})
        pb = standings.provenance.get(g.entry_b, {})
        out.writerow(
            [
                safe_cell(g.game_id),
                safe_cell(g.entry_a),
                safe_cell(g.entry_b),
                fmt_score(g.score),
                safe_cell(g.ending),
                safe_cell(g.cluster),
                g.scores_a,
                g.scores_b,
                safe_cell(standings.ruleset_hash),
                *(safe_cell(str(pa.get(k, ""))) for k in PROVENANCE_KEYS),
                *(safe_cell(str(pb.get(k, ""))) for k in PROVENANCE_KEYS),
            ]
        )
    return buf.getvalue()
