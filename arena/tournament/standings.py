"""Read a tournament's results store into the standings that ratings and publishing use."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from arena.publish import GameRow, Standings, results_from_games
from arena.results.store import CONFIG_KEY, STORE_NAME, ResultsStore, StoredGame, StoreError
from arena.tournament.growth import entry_names
from arena.tournament.schedule import entry_of, table_id

#: A bot's log in its table's log directory: ``<entry>-seat<N>.log`` (``seat<N>.log`` before logs were named).
LOG_NAME = re.compile(r"(?:(?P<entry>.+)-)?seat(?P<seat>\d+)\.log")



def load_standings(directory: Path) -> Standings:
    """The standings of the tournament whose output directory is ``directory``.

    Games of entries removed from the tournament file are left out (they stay
    in the store, and count again if the entry comes back); every version of
    an entry (``name``, ``name@2``) is an entry of its own.
    """
    path = directory / STORE_NAME
    if not path.is_file():
        raise StoreError(f"{directory} is not a tournament output directory (no {STORE_NAME})")
    store = ResultsStore.open_read_only(path)  # reading never writes: a read-only directory works
    try:
        meta = store.meta()
        rows = store.games()
        disqualified = store.disqualified()
        timing = store.entry_times()
        voided = _voided_clusters(store)
    finally:
        store.close()
    rules = json.loads(meta.get("ruleset", "{}") or "{}")
    entries: list[str] = []
    games: list[GameRow] = []
    faults: dict[str, dict[str, int]] = {}
    provenance: dict[str, dict[str, str]] = {}
    current = entry_names(meta.get(CONFIG_KEY))
    if current is not None:
        rows = [r for r in rows if entry_of(r.side0) in current and entry_of(r.side1) in current]
    logs_of: dict[str, tuple[tuple[str, str], ...]] = {}
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
                logs=table_logs(directory, row, logs_of),
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
        results=results_from_games(g for g in games if g.cluster not in voided),
        games=games,
        faults=faults,
        disqualified=set(disqualified),
        provenance=provenance,
        ruleset=rules,
        timing=timing,
    )


def _voided_clusters(store: ResultsStore) -> set[str]:
    """The clusters of the pairs a run gave up (void or abandoned): their stored half leaves the fit.

    The ladder and the run kernel void a pair whose tables failed too often; the
    table that had been stored stays on record (listed, replayable) but must not be
    rated alone, or the deal's luck counts again.  A store from before pairs were
    kept has none.
    """
    try:
        return store.void_clusters()
    except sqlite3.OperationalError:  # no pairs table: written before round 4, opened read-only
        return set()


def table_logs(
    directory: Path, row: StoredGame, cache: dict[str, tuple[tuple[str, str], ...]] | None = None
) -> tuple[tuple[str, str], ...]:
    """The bots' logs of ``row``'s table: (``entry, seat N``; path relative to ``directory``), by seat."""
    table = table_id(row.pairing, row.table_no)
    if cache is not None and table in cache:
        return cache[table]
    found = []
    folder = directory / "logs" / table
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError:
        names = []
    for name in names:
        match = LOG_NAME.fullmatch(name)
        if match is None:
            continue
        who = f"{match['entry']}, seat {match['seat']}" if match["entry"] else f"seat {match['seat']}"
        found.append((int(match["seat"]), who, f"logs/{table}/{name}"))
    logs = tuple((who, path) for _, who, path in sorted(found))
    if cache is not None:
        cache[table] = logs
    return logs
