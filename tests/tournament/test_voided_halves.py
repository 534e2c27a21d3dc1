"""A pair the run gave up (void after its attempts, or abandoned) keeps its stored half on record, out of the fit.

Found on the ladder: ``arena ratings show DIR`` rated the stored half of a voided
pair (the ladder's own standings left it out), so the two disagreed.
"""

from __future__ import annotations

from pathlib import Path

from arena.results.store import ResultsStore
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot
from arena.tables.spec import TableGame
from arena.tournament.standings import load_standings


def played(game_id: str, winner: int) -> TableGame:
    return TableGame(
        game_id=game_id, ending="target", winner=winner, scores=(300, 100) if winner == 0 else (100, 300),
        hands=5, forfeit_sides=(), forfeit_reason=None, forfeit_detail=None, void=None, strikes=(0, 0),
        decisions=40, think_seconds=0.1, record={"game_id": game_id},
    )  # fmt: skip


def store_pair(ledger: Ledger, seq: int, tables: int) -> None:
    ledger.plan_pair("a@1", "b@1", cluster="L{seq:07d}")
    for table in range(1, tables + 1):
        game_id = f"L{seq:07d}-t{table}"
        # a@1 wins both tables of a pair: side0 is a@1 at table 1, b@1 at table 2 (seats swapped)
        slot = GameSlot(game_id, seq, seq, table, f"L{seq:07d}", *(("a@1", "b@1") if table == 1 else ("b@1", "a@1")), "s")
        ledger.record(slot, played(game_id, 0 if table == 1 else 1), {})


def test_the_stored_half_of_a_voided_pair_is_listed_and_not_rated(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    store.claim("h", "test", "rules")
    ledger = Ledger(store, tmp_path, ruleset_hash="rules", max_pair_attempts=3)
    store_pair(ledger, 1, tables=2)  # a whole pair
    store_pair(ledger, 2, tables=1)  # one table stored, then the pair is given up
    ledger.void_pair(2, "table 2 failed 3 times")
    store.close()

    standings = load_standings(tmp_path)
    assert {g.game_id for g in standings.games} == {"L0000001-t1", "L0000001-t2", "L0000002-t1"}
    assert sorted(r.cluster for r in standings.results) == ["L0000001", "L0000001"]
