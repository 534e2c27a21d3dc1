"""Read a tournament's results store into the standings that ratings and publishing use."""

from __future__ import annotations

import json
from pathlib import Path

from arena.publish import GameRow, Standings, results_from_games
from arena.results.store import ResultsStore, StoreError

STORE_NAME = "results.sqlite"


def load_standings(directory: Path) -> Standings:
    """The standings of the tournament whose output directory is ``directory``."""
    path = directory / STORE_NAME
    if not path.is_file():
        raise StoreError(f"{directory} is not a tournament output directory (no {STORE_NAME})")
    store = ResultsStore.open_read_only(path)  # reading never writes: a read-only directory works
    try:
        meta = store.meta()
        rows = store.games()
        disqualified = store.disqualified()
        timing = store.entry_times()
    finally:
        store.close()
    rules = json.loads(meta.get("ruleset", "{}") or "{}")
    entries: list[str] = []
    games: list[GameRow] = []
    faults: dict[str, dict[str, int]] = {}
    provenance: dict[str, dict[str, str]] = {}
    for row in rows:
        for side, image in ((row.side0, row.image0), (row.side1, row.image1)):
            if side not in entries:
                entries.append(side)
            provenance.setdefault(
                side,
                {"image_id": image or "local process", "sdk_version": row.sdk_version, "engine_version": row.engine_version},
            )
        score = 0.5 if row.winner is None else (1.0 if row.winner == row.side0 else 0.0)
        games.append(
            GameRow(
                game_id=row.game_id, entry_a=row.side0, entry_b=row.side1, score=score, ending=row.ending,
                cluster=row.cluster, scores_a=row.score0, scores_b=row.score1, hands=row.hands,
                pairing=row.pairing, deal=row.deal, table=row.table_no, record=row.record,
            )  # fmt: skip
        )
        if row.forfeit_reason:
            for entry in row.forfeit_entries:
                counts = faults.setdefault(entry, {})
                counts[row.forfeit_reason] = counts.get(row.forfeit_reason, 0) + 1
        for side, strikes in ((row.side0, row.strikes0), (row.side1, row.strikes1)):
            if strikes:
                counts = faults.setdefault(side, {})
                counts["strikes"] = counts.get("strikes", 0) + strikes
    return Standings(
        title=meta.get("name", directory.name),
        ruleset_preset=str(rules.get("preset", "?")),
        ruleset_hash=meta.get("ruleset_hash", "?"),
        entries=sorted(entries),
        results=results_from_games(games),
        games=games,
        faults=faults,
        disqualified=set(disqualified),
        provenance=provenance,
        ruleset=rules,
        timing=timing,
    )
