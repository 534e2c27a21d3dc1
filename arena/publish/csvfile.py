"""``results.csv``: one row per game, with the provenance every result carries."""

from __future__ import annotations

import csv
import io

from arena.publish.model import Standings
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


def results_csv(standings: Standings) -> str:
    """The games as CSV text (RFC 4180 quoting), in the order of ``standings.games``.

    Values are written as they are: a spreadsheet user opening untrusted names should
    import the file as text.
    """
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(COLUMNS)
    for g in standings.games:
        pa = standings.provenance.get(g.entry_a, {})
        pb = standings.provenance.get(g.entry_b, {})
        out.writerow(
            [
                g.game_id,
                g.entry_a,
                g.entry_b,
                fmt_score(g.score),
                g.ending,
                g.cluster,
                g.scores_a,
                g.scores_b,
                standings.ruleset_hash,
                pa.get("image_id", ""),
                pa.get("sdk_version", ""),
                pa.get("engine_version", ""),
                pb.get("image_id", ""),
                pb.get("sdk_version", ""),
                pb.get("engine_version", ""),
            ]
        )
    return buf.getvalue()
