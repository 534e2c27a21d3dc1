"""The ladder's leaderboard for grading: one table, from the stores, at a timestamp.

``arena ladder export DIR --csv FILE --json FILE`` (:mod:`arena.commands.ladder_export`)
writes what :func:`export` returns. It reads ``DIR``'s two stores directly (read-only;
fine while the server runs) and uses the standings' one definition
(:mod:`arena.ladder.standings`): every stored game, voided pairs out, the listed rows
the active versions of enabled teams. The columns and the JSON schema are in
docs/ladder.md ("Standings and grading").
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import io
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from arena.ladder.config import load_ladder_config
from arena.ladder.standings import Standing, StandingsBook
from arena.ladder.state import pair_cluster
from arena.ladder.store import LadderStore
from arena.results.store import ResultsStore, StoredGame

#: The export's format version (the JSON's ``format``): a change of columns changes it.
FORMAT = 1
#: The CSV's columns, in order (the JSON rows have the same keys).
COLUMNS = (
    "rank", "team", "version", "entry", "elo", "low", "high", "plus_minus",
    "pairs", "games", "points_per_hand", "at",
)  # fmt: skip


def voided_clusters(store: LadderStore, results: ResultsStore) -> set[str]:
    """The clusters of the pairs the ladder gave up (void or abandoned): their stored halves leave the fit.

    The run's ledger keeps them in ``results.sqlite``; a ladder from before it kept its
    pairs in ``ladder.sqlite``, whose voided ones count too.
    """
    rows = store.db.execute("SELECT seq FROM pairs WHERE status IN ('void', 'abandoned')").fetchall()
    found = {pair_cluster(int(seq)) for (seq,) in rows}
    with contextlib.suppress(sqlite3.OperationalError):  # a results store from before the ledger, read-only
        found |= results.void_clusters()
    return found


def ladder_book(
    store: LadderStore, results: ResultsStore, games: Iterable[StoredGame], expunged: Iterable[str] = ()
) -> StandingsBook:
    """The standings' counts for a ladder: ``games`` with the ladder's voided pairs excluded."""
    return StandingsBook(games, excluded_clusters=voided_clusters(store, results), expunged=expunged)


def ladder_standings(
    store: LadderStore, results: ResultsStore, games: Iterable[StoredGame], expunged: Iterable[str] = ()
) -> list[Standing]:
    """The ladder's leaderboard (what the site, ``arena ladder show`` and the export show)."""
    listed = [v.entry for v in store.active_versions()]
    return ladder_book(store, results, games, expunged).standings(listed)


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of the export: a listed version's place."""

    rank: int | None
    team: str
    version: int
    entry: str
    elo: float | None
    low: float | None
    high: float | None
    plus_minus: float | None
    pairs: int
    games: int
    points_per_hand: float | None


@dataclasses.dataclass(frozen=True)
class Export:
    """The leaderboard at ``at`` (UTC, ISO 8601), with how it was computed."""

    ladder: str
    at: str
    games: int
    error_bars: str
    note: str
    rows: tuple[Row, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "ladder": self.ladder,
            "at": self.at,
            "games": self.games,
            "method": {"error_bars": self.error_bars, "note": self.note, "interval": 0.95},
            "standings": [dataclasses.asdict(r) for r in self.rows],
        }


def export(directory: Path, *, at: datetime.datetime | None = None) -> Export:
    """The leaderboard of the ladder in ``directory``, from its stores (read only).

    Raises an :class:`~arena.errors.ArenaError` (one line) for a directory that is not a ladder.
    """
    config = load_ladder_config(directory)
    stamp = (at or datetime.datetime.now(datetime.UTC)).astimezone(datetime.UTC).isoformat(timespec="seconds")
    store = LadderStore(config.ladder_path)
    try:
        results = ResultsStore.open_read_only(config.results_path)
        try:
            book = ladder_book(store, results, results.games())
        finally:
            results.close()
        versions = {v.entry: v for v in store.active_versions()}
    finally:
        store.close()
    fitted = book.ratings()
    rows = []
    for s in book.standings(versions):
        v = versions[s.entry]
        half = None if s.low is None or s.high is None else (s.high - s.low) / 2.0
        rows.append(
            Row(rank=s.rank, team=v.team, version=v.number, entry=s.entry, elo=s.elo, low=s.low,
                high=s.high, plus_minus=half, pairs=s.pairs, games=s.games,
                points_per_hand=s.points_per_hand)
        )
    return Export(
        ladder=config.name,
        at=stamp,
        games=book.games,
        error_bars=fitted.error_method if fitted else "none",
        note=fitted.error_note if fitted else "fewer than two versions have played each other",
        rows=tuple(rows),
    )


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    text = str(value)
    # Team names start with a letter or digit; a store edited by hand must not smuggle a
    # spreadsheet formula into the grading sheet.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(table: Export) -> str:
    """The export as CSV: a header row, then one row per version (best first; unrated: empty rank)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in table.rows:
        values = {**dataclasses.asdict(r), "at": table.at}
        writer.writerow([_cell(values[c]) for c in COLUMNS])
    return out.getvalue()


def to_json(table: Export) -> str:
    """The export as JSON (schema in docs/ladder.md)."""
    return json.dumps(table.to_dict(), indent=2) + "\n"


__all__ = [
    "COLUMNS",
    "FORMAT",
    "Export",
    "Row",
    "export",
    "ladder_book",
    "ladder_standings",
    "pair_cluster",
    "to_csv",
    "to_json",
    "voided_clusters",
]
