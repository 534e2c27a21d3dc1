"""The table a ladder shows now: the one definition ``show``, the site, the API and the export read.

Which table depends on the phase (:func:`arena.ladder.course.calendar.phase`):

- ``before`` and ``open``: the live standings of the active versions (the ladder's one
  standings definition, :mod:`arena.ladder.games.standings`), each row with its verdict
  towards the next (``separated``, ``tied``, ``open``: the final evaluation's rule,
  :func:`arena.ladder.course.final.verdicts`, shown but not used for places);
- ``final``: the final table as it stands (the final versions only; what the loop last
  wrote, else computed from the standings given);
- ``frozen``: the **stored** final table, exactly as frozen: the final versions (a
  final version since replaced by a practice upload included), tied groups sharing
  their best place, an open pair graded as tied, and no version that became active
  after the deadline (it never played a rated game and is not final).

:func:`board` is pure (the callers read the stores); :func:`read_board` reads them for
the commands (``arena ladder show``, ``arena ladder export``), and the site calls
:func:`board` with the loop's published standings.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from arena.ladder.course import final
from arena.ladder.course.calendar import FINAL, FROZEN, Calendar, iso, phase
from arena.ladder.course.final_store import FinalStore, Frozen
from arena.ladder.games.leaderboard import ladder_book
from arena.ladder.games.standings import Standing, StandingsBook
from arena.ladder.store import LadderStore
from arena.results.store import ResultsStore

#: ``kind``: the live standings of the active versions, or the final table (during or after the final evaluation).
LIVE = "live"
FINAL_TABLE = "final"


@dataclasses.dataclass(frozen=True)
class BoardRow:
    """One line of the table shown (the same keys in every output)."""

    rank: int | None
    """Its place (1 = first); in the final table a tied group's best place; None: no rating."""
    team: str
    version: int
    entry: str
    elo: float | None
    low: float | None
    high: float | None
    pairs: int
    games: int
    points_per_hand: float | None
    tie_group: int | None
    """Graded as tied with its neighbours in this group (final table only); None: not tied."""
    verdict: str | None
    """Towards the row below: ``separated``, ``tied`` or ``open`` (None for the last, or unrated)."""
    los_next: float | None
    """The likelihood it is stronger than the row below."""

    @property
    def tied(self) -> bool:
        return self.tie_group is not None


@dataclasses.dataclass(frozen=True)
class Board:
    """The table shown at ``at``: its phase, what kind it is, and whether it is settled."""

    phase: str
    kind: str
    at: str
    rows: tuple[BoardRow, ...]
    settled: bool | None = None
    """The final table: every neighbour pair separated or tied (None for the live standings)."""
    warning: str | None = None
    """The final table's loud line when pairs are still open (graded as tied)."""
    frozen_at: str | None = None
    reason: str | None = None
    """Why the final table froze (settled, or ``final_until`` passed)."""
    los: float = 0.95
    resolution: float = 40.0
    """The verdicts' rule (``[final]``; the stored table's own once frozen)."""
    source: final.FinalTable | None = None
    """The final table itself (``GET /api/final`` gives it whole); None for the live standings."""

    def to_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "table": self.kind, "at": self.at, "settled": self.settled,
                "warning": self.warning, "frozen_at": self.frozen_at, "reason": self.reason,
                "rule": {"los": self.los, "resolution": self.resolution},
                "rows": [dataclasses.asdict(r) for r in self.rows]}  # fmt: skip


def _version_of(entry: str) -> tuple[str, int]:
    team, _, number = entry.rpartition("@")
    return team, int(number) if number.isdigit() else 0


def _from_final(table: final.FinalTable) -> tuple[BoardRow, ...]:
    return tuple(
        BoardRow(rank=r.rank, team=r.team, version=_version_of(r.entry)[1], entry=r.entry, elo=r.elo, low=r.low,
                 high=r.high, pairs=r.pairs, games=r.games, points_per_hand=r.points_per_hand,
                 tie_group=r.tie_group, verdict=r.next_verdict, los_next=r.los_next)  # fmt: skip
        for r in table.rows
    )


def _from_live(rows: Sequence[Standing], calendar: Calendar) -> tuple[BoardRow, ...]:
    # The spread from the two intervals (no pair counts): the site's published standings carry none,
    # and the live verdicts must read the same in every output.
    after = {v.upper: v for v in final.verdicts(rows, calendar.los, calendar.resolution)}
    out = []
    for s in rows:
        team, number = _version_of(s.entry)
        v = after.get(s.entry)
        out.append(BoardRow(rank=s.rank, team=team, version=number, entry=s.entry, elo=s.elo, low=s.low, high=s.high,
                            pairs=s.pairs, games=s.games, points_per_hand=s.points_per_hand, tie_group=None,
                            verdict=v.state if v else None, los_next=v.los if v else None))  # fmt: skip
    return tuple(out)


def board(
    now: datetime.datetime,
    calendar: Calendar,
    frozen: Frozen | None,
    live_final: Mapping[str, Any] | None,
    standings: Sequence[Standing],
    played: Mapping[frozenset[str], int] | None = None,
) -> Board:
    """The table to show at ``now`` (the module docstring): the frozen final table, the live final one, or the standings.

    ``standings``: the listed versions' rows (the final versions once the final evaluation
    began, else the active ones); ``played`` as :func:`arena.ladder.course.final.verdicts`, for a
    final table the loop has not written yet (the live standings' verdicts take their intervals alone).
    """
    current = phase(now, calendar, settled=frozen is not None)
    if current == FROZEN and frozen is not None:
        table = final.FinalTable.from_dict(frozen.body)
        return Board(current, FINAL_TABLE, table.at, _from_final(table), table.settled, table.warning,
                     frozen.frozen_at, frozen.reason, table.los, table.resolution, table)  # fmt: skip
    if current in (FINAL, FROZEN):  # FROZEN with nothing stored yet: the loop stores it at its next look
        table = (final.FinalTable.from_dict(live_final) if live_final is not None
                 else final.final_table(standings, iso(now), calendar.los, calendar.resolution, played))  # fmt: skip
        return Board(current, FINAL_TABLE, table.at, _from_final(table), table.settled, table.warning,
                     los=table.los, resolution=table.resolution, source=table)  # fmt: skip
    return Board(current, LIVE, iso(now), _from_live(standings, calendar), los=calendar.los,
                 resolution=calendar.resolution)  # fmt: skip


def read_board(
    store: LadderStore, results: ResultsStore, calendar: Calendar, now: datetime.datetime
) -> tuple[Board, StandingsBook, int]:
    """The table to show at ``now``, from the stores (read only): the board, the standings' book, the games stored."""
    finals = FinalStore(store.path)
    try:
        frozen = finals.frozen()
        live_final = finals.live()
        fixed = finals.final_versions()
    finally:
        finals.close()
    games = results.games()
    book = ladder_book(store, results, games)
    after_deadline = phase(now, calendar, settled=frozen is not None) in (FINAL, FROZEN) and fixed is not None
    listed = [f.entry for f in fixed or []] if after_deadline else [v.entry for v in store.active_versions()]
    return board(now, calendar, frozen, live_final, book.standings(listed), book.pairs_played()), book, len(games)


__all__ = ["FINAL_TABLE", "LIVE", "Board", "BoardRow", "board", "read_board"]
