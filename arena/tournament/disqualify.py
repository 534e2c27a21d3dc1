"""The disqualification policy: an entry that forfeits too much leaves the rest of the tournament.

An entry whose forfeits exceed the policy's share of its played games (once
it has played at least the policy's minimum) is disqualified: its tables not
yet started are skipped, and each of its games not played is stored as a
forfeit (``forfeit:disqualified``), lost by it, so the standings count every
scheduled game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from arena.results.store import ResultsStore, StoredGame
from arena.tables.rows import GameSlot, unplayed_row
from arena.tournament.config import FaultPolicy

#: Ending stored for the games a disqualified entry no longer plays.
DISQUALIFIED = "forfeit:disqualified"


def mark_disqualified(policy: FaultPolicy, store: ResultsStore, entries: Iterable[str]) -> None:
    """Disqualify those of ``entries`` whose forfeits exceed the policy's share of their games."""
    already = store.disqualified()
    for entry in entries:
        if entry in already:
            continue
        played = [r for r in store.games_of(entry) if r.ending != DISQUALIFIED]
        forfeits = [r for r in played if entry in r.forfeit_entries]
        if len(played) >= policy.disqualify_min_games and len(forfeits) > policy.disqualify_share * len(played):
            store.disqualify(entry, f"forfeited {len(forfeits)} of {len(played)} games")


def forfeit_unplayed(
    store: ResultsStore,
    slots: Iterable[GameSlot],
    *,
    ruleset_hash: str,
    images: dict[str, str | None],
    on_row: Callable[[StoredGame], None],
) -> None:
    """Store each unplayed game of a disqualified entry as a forfeit it loses (both out: nobody wins)."""
    disqualified = store.disqualified()
    if not disqualified:
        return
    finished = store.finished_ids()
    for slot in slots:
        if slot.game_id in finished:
            continue
        out = tuple(s for s in slot.sides if s in disqualified)
        if not out:
            continue
        row = unplayed_row(
            slot, ending=DISQUALIFIED, charged=out, reason="disqualified",
            detail=f"disqualified: {disqualified[out[0]]}", ruleset_hash=ruleset_hash, images=images,
        )  # fmt: skip
        store.record_game(row)
        on_row(row)


__all__ = ["DISQUALIFIED", "forfeit_unplayed", "mark_disqualified"]
