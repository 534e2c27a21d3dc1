"""The ledger: the one stored-game guard, and duplicate pairs whose attempts are stored and bounded."""

from __future__ import annotations

from pathlib import Path

from arena.results.store import PAIR_ABANDONED, PAIR_DONE, PAIR_PLAYING, PAIR_VOID, ResultsStore
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot
from arena.tables.spec import TableGame


def played(game_id: str, scores: tuple[int, int], *, void: str | None = None) -> TableGame:
    return TableGame(
        game_id=game_id, ending="void:platform" if void else "target", winner=None if void else 0, scores=scores,
        hands=5, forfeit_sides=(), forfeit_reason=None, forfeit_detail=None, void=void, strikes=(0, 0),
        decisions=40, think_seconds=0.1, record={"game_id": game_id, "scores": list(scores)},
    )  # fmt: skip


def slot(game_id: str, seq: int = 1, table: int = 1) -> GameSlot:
    return GameSlot(game_id, seq, seq, table, f"L{seq:07d}", "a@1", "b@1", "seed")


def open_ledger(tmp_path: Path) -> Ledger:
    store = ResultsStore(tmp_path / "results.sqlite")
    store.claim("h", "test", "rules")
    return Ledger(store, tmp_path, ruleset_hash="rules", max_pair_attempts=3)


def test_a_late_copy_of_a_stored_game_writes_nothing(tmp_path: Path):
    """The finding: a pair replayed after a restart overwrote its stored game's record (178:80 -> 74:199)."""
    ledger = open_ledger(tmp_path)
    first = ledger.record(slot("L0000001-t1"), played("L0000001-t1", (178, 80)), {})
    assert first.row is not None and (first.row.score0, first.row.score1) == (178, 80)
    record = tmp_path / "records" / "L0000001-t1.json"
    before = record.read_bytes()
    again = ledger.record(slot("L0000001-t1"), played("L0000001-t1", (74, 199)), {})
    assert again.late and again.row is None
    assert record.read_bytes() == before, "the stored game's record was rewritten"
    row = ledger.store.game("L0000001-t1")
    assert row is not None and (row.score0, row.score1) == (178, 80)
    assert b"178" in before and b"199" not in record.read_bytes()


def test_a_void_is_noted_and_nothing_else(tmp_path: Path):
    ledger = open_ledger(tmp_path)
    got = ledger.record(slot("g"), played("g", (0, 0), void="platform down"), {})
    assert got.void == "void:platform" and got.row is None
    assert ledger.store.void_attempts() == {"g": 1}
    assert not ledger.stored("g") and not (tmp_path / "records" / "g.json").exists()


def test_pair_attempts_are_stored_bounded_and_survive_a_restart(tmp_path: Path):
    ledger = open_ledger(tmp_path)
    seq = ledger.plan_pair("a@1", "b@1", cluster="L{seq:07d}")
    assert [p.seq for p in ledger.unfinished_pairs()] == [seq]
    assert ledger.begin_attempt(seq).attempts == 1
    ledger.failed(seq, "table 2: the daemon went away")
    assert ledger.begin_attempt(seq).attempts == 2
    # A restart: a new ledger over the same file sees the attempts so far.
    ledger.store.close()
    ledger = open_ledger(tmp_path)
    assert ledger.begin_attempt(seq).attempts == 3
    assert ledger.begin_attempt(seq) is None, "a fourth start is not allowed"
    pair = ledger.store.pair(seq)
    assert pair.status == PAIR_VOID and "given up after 3 attempts" in pair.reason and "daemon" in pair.reason
    assert ledger.void_clusters() == {"L0000001"}
    assert ledger.unfinished_pairs() == []


def test_a_stop_on_purpose_gives_its_attempt_back(tmp_path: Path):
    ledger = open_ledger(tmp_path)
    seq = ledger.plan_pair("a@1", "b@1")
    for _ in range(5):  # Ctrl-C five times during the same pair: never void
        assert ledger.begin_attempt(seq) is not None
        ledger.stopped(seq)
    assert ledger.store.pair(seq).attempts == 0 and ledger.store.pair(seq).status == PAIR_PLAYING


def test_only_the_missing_tables_are_played_again(tmp_path: Path):
    ledger = open_ledger(tmp_path)
    ids = ("L0000001-t1", "L0000001-t2")
    assert ledger.missing_tables(ids) == (1, 2)
    ledger.record(slot(ids[0]), played(ids[0], (178, 80)), {})
    assert ledger.missing_tables(ids) == (2,)
    ledger.record(slot(ids[1], table=2), played(ids[1], (90, 120)), {})
    assert ledger.missing_tables(ids) == ()


def test_finished_and_abandoned_pairs(tmp_path: Path):
    ledger = open_ledger(tmp_path)
    done, gone = ledger.plan_pair("a@1", "b@1", cluster="L{seq:07d}"), ledger.plan_pair("a@1", "c@1", cluster="L{seq:07d}")
    assert (done, gone) == (1, 2)
    ledger.finish_pair(done)
    ledger.abandon_pair(gone, "c@1 was disabled")
    assert ledger.store.pair(done).status == PAIR_DONE
    assert ledger.store.pair(gone).status == PAIR_ABANDONED
    assert ledger.void_clusters() == {"L0000002"}, "an abandoned pair's stored half is out of the ratings too"


def test_numbers_continue_above_a_floor(tmp_path: Path):
    """A ladder from before the ledger: its old pairs' numbers (and game ids) are never reused."""
    ledger = open_ledger(tmp_path)
    ledger.store.set_meta("pairs_floor", "41")
    assert ledger.plan_pair("a@1", "b@1") == 42


def test_the_results_store_syncs_every_commit_on_every_thread(tmp_path: Path):
    """The finding: results.sqlite was synchronous=NORMAL while ladder.sqlite was FULL: after a power loss a
    pair could be durably done while its games were gone. Every connection (one per thread) is FULL now."""
    import threading

    store = ResultsStore(tmp_path / "results.sqlite")
    seen: list[int] = [store.db.execute("PRAGMA synchronous").fetchone()[0]]
    worker = threading.Thread(target=lambda: seen.append(store.db.execute("PRAGMA synchronous").fetchone()[0]))
    worker.start()
    worker.join()
    assert seen == [2, 2], "2 is FULL"
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
