"""From a played game to a stored one: the one place a results row is built and written.

Every runner (tournaments, ``arena sprt``, the ladder) knows where a game sits
in its run (a :class:`GameSlot`) and gets a :class:`~arena.tables.spec.TableGame`
back from a table; :func:`store_played` writes the game's record, durably,
and then its row (so a row never points at a missing record), and
:func:`game_row` / :func:`unplayed_row` are the only builders of a
:class:`~arena.results.store.StoredGame`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena_sdk import __version__ as SDK_VERSION
from arena_sdk.engine import ENGINE_VERSION

from arena.match.output import stage_record
from arena.match.timing import team_timing
from arena.results.store import ResultsStore, SideTime, StoredGame, now, storage_error
from arena.tables.spec import TableGame


@dataclasses.dataclass(frozen=True)
class GameSlot:
    """Where one game sits in its run: the row's columns that do not come from playing it."""

    game_id: str
    pairing: int
    deal: int
    table_no: int
    """1: the pairing's first entry is side 0; 2: the second entry is."""
    cluster: str
    """The duplicate pair (the same deal, sides swapped): what the intervals are robust to."""
    side0: str
    side1: str
    deal_seed: str

    @property
    def sides(self) -> tuple[str, str]:
        return (self.side0, self.side1)


def side_times(record: Mapping[str, Any], sides: tuple[str, str]) -> tuple[SideTime, ...]:
    """Each side's time figures from a game's record (the sides whose decisions carry times)."""
    return tuple(
        SideTime.from_figures(side, sides[side], figures)
        for side, figures in enumerate(team_timing(record))
        if figures is not None
    )


def game_row(
    slot: GameSlot, played: TableGame, *, ruleset_hash: str, images: Mapping[str, str | None]
) -> StoredGame:
    """The stored row of a game a table played."""
    sides = slot.sides
    charged = tuple(sides[side] for side in played.forfeit_sides)
    return StoredGame(
        game_id=slot.game_id, pairing=slot.pairing, deal=slot.deal, table_no=slot.table_no,
        cluster=slot.cluster, side0=slot.side0, side1=slot.side1, deal_seed=slot.deal_seed,
        ending=played.ending, winner=None if played.winner is None else sides[played.winner],
        score0=played.scores[0], score1=played.scores[1], hands=played.hands,
        forfeit_entry=charged[0] if len(charged) == 1 else None,
        forfeit_reason=played.forfeit_reason, forfeit_detail=played.forfeit_detail,
        strikes0=played.strikes[0], strikes1=played.strikes[1], decisions=played.decisions,
        think_seconds=played.think_seconds, ruleset_hash=ruleset_hash,
        engine_version=ENGINE_VERSION, sdk_version=SDK_VERSION,
        image0=images.get(slot.side0), image1=images.get(slot.side1),
        record=f"records/{slot.game_id}.json", finished_at=now(),
        forfeit_entries=charged, side_times=side_times(played.record, sides),
    )  # fmt: skip


def unplayed_row(
    slot: GameSlot,
    *,
    ending: str,
    charged: tuple[str, ...],
    reason: str,
    detail: str,
    ruleset_hash: str,
    images: Mapping[str, str | None],
) -> StoredGame:
    """The row of a game never played, lost by the ``charged`` entries (both: nobody wins)."""
    winner = None
    if len(charged) == 1:
        winner = slot.side1 if charged[0] == slot.side0 else slot.side0
    return StoredGame(
        game_id=slot.game_id, pairing=slot.pairing, deal=slot.deal, table_no=slot.table_no,
        cluster=slot.cluster, side0=slot.side0, side1=slot.side1, deal_seed=slot.deal_seed,
        ending=ending, winner=winner, score0=0, score1=0, hands=0,
        forfeit_entry=charged[0] if len(charged) == 1 else None, forfeit_entries=charged,
        forfeit_reason=reason, forfeit_detail=detail, strikes0=0, strikes1=0,
        decisions=0, think_seconds=0.0, ruleset_hash=ruleset_hash,
        engine_version=ENGINE_VERSION, sdk_version=SDK_VERSION,
        image0=images.get(slot.side0), image1=images.get(slot.side1), record=None, finished_at=now(),
    )  # fmt: skip


def store_played(
    store: ResultsStore,
    output: Path,
    slot: GameSlot,
    played: TableGame,
    *,
    ruleset_hash: str,
    images: Mapping[str, str | None],
) -> StoredGame | None:
    """Write a finished game's record (durably), then its row; None if the game was already stored.

    The record is written in full under a temporary name of its own, put in
    place inside the row's transaction once the row is new, and committed with
    it: a row never points to a missing record, and of two writers reporting
    the same game at once, the stored row's record is that row's game (the
    other writer's file is removed, never put in place).
    Raises :class:`~arena.results.store.StoreError` (``DiskFull`` when out of
    space) when either cannot be written; what was stored before is kept.
    """
    records = output / "records"
    row = game_row(slot, played, ruleset_hash=ruleset_hash, images=images)
    try:
        staged = stage_record(records, played, durable=True)  # type: ignore[arg-type]  # reads only game_id and record
    except OSError as exc:
        raise storage_error(exc, records) from None
    try:
        return row if store.record_game(row, in_place=staged.publish) else None
    except OSError as exc:  # the record could not be put in place: the row was rolled back with it
        raise storage_error(exc, records) from None
    finally:
        staged.discard()


__all__ = ["GameSlot", "game_row", "side_times", "store_played", "unplayed_row"]
