"""``arena sprt`` on the ledger's pair model: attempts stored with the pair (a kill -9 keeps them), only the
missing table played again beside the stored game (its record and logs never change), and a pair that fails
its attempts says what happened."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import trio
from arena_sdk.engine import resolve_ruleset
from runlock_support import Gate, arena_process, end_own_processes, fingerprint, kill_runner, wait_for
from test_sprt_play import NEW, OLD, FakeTables, played
from tournament_support import arena

from arena.match import TimeControl
from arena.ratings.sprt import Settings
from arena.results.store import ResultsStore
from arena.sprt import SprtConfig, run_sprt
from arena.sprt.config import game_id
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot
from arena.tables.spec import TableResult

#: One pair, one deal a table; the held bot's clock far above the hold.
ARGS = ["--set", "max_hands=1", "--move-time", "600", "--hard-cap", "900", "--elo0", "0", "--elo1", "50",
        "--max-pairs", "1", "--pairs-per-table", "1", "--seed", "ledger", "--out", "out", "--json"]  # fmt: skip


def stored_ids(out: Path) -> set[str]:
    try:
        with sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True) as db:
            return {r[0] for r in db.execute("SELECT game_id FROM games")}
    except sqlite3.Error:
        return set()


def pair_row(out: Path) -> tuple:
    with sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True) as db:
        return db.execute("SELECT seq, status, attempts, cluster FROM pairs").fetchall()


def test_a_kill_during_a_pair_keeps_its_attempt_and_plays_only_the_missing_table(tmp_path: Path):
    # NEW holds at its game at table 2 (where it sits second): table 1's game is stored, table 2's is not.
    gate = Gate(tmp_path, hold_in=("d000000-t2",))
    args = ["sprt", "--bot", gate.spec, "--bot", f"cmd:python {Path(__file__).parents[2] / 'example_bots/random/bot.py'}",
            *ARGS]  # fmt: skip
    out = tmp_path / "out"
    first = arena_process(args, tmp_path)
    try:
        wait_for(lambda: gate.waiting() >= 1 and stored_ids(out) == {"d000000-t1"}, "table 1 stored, table 2 held")
        kill_runner(first)  # kill -9 in the middle of the pair
        end_own_processes(str(tmp_path))  # (its held bot, as a machine's restart would)
        assert pair_row(out) == [(0, "playing", 1, "d000000")], "the pair and its first attempt are stored"
        stored_record = fingerprint(out / "records")
        stored_logs = fingerprint(out / "logs" / "d000000-t1")
        with sqlite3.connect(out / "results.sqlite") as db:
            stored_row = db.execute("SELECT * FROM games WHERE game_id='d000000-t1'").fetchone()

        gate.open()
        again = arena(tmp_path, *args)
        assert again.returncode in (0, 3, 4), again.stderr
        summary = json.loads(again.stdout)
        assert summary["pairs"] == 1 and summary["games"] == 2, summary
        assert pair_row(out) == [(0, "done", 2, "d000000")], "the attempt survived the kill: this was the second"
        assert stored_ids(out) == {"d000000-t1", "d000000-t2"}
        records = fingerprint(out / "records")
        assert sorted(records) == ["d000000-t1.json", "d000000-t2.json"]
        assert records["d000000-t1.json"] == stored_record["d000000-t1.json"], "the stored game's record unchanged"
        assert fingerprint(out / "logs" / "d000000-t1") == stored_logs, "the stored game's logs unchanged"
        with sqlite3.connect(out / "results.sqlite") as db:
            assert db.execute("SELECT * FROM games WHERE game_id='d000000-t1'").fetchone() == stored_row
        logs = sorted(p.name for p in (out / "logs").iterdir())
        assert logs == ["d000000-2-t2", "d000000-t1", "d000000-t2"], "only table 2 played again, its logs beside"
        assert list((out / "logs" / "d000000-2-t2").glob("seat*.log")), "the replayed table's bots logged there"
    finally:
        kill_runner(first)
        gate.open()
        end_own_processes(str(tmp_path))


def config(out: Path, **extra) -> SprtConfig:
    settings = {"max_pairs": 1, "pairs_per_table": 1, **extra}
    return SprtConfig(new=NEW, old=OLD, settings=Settings(0, 50), rules=resolve_ruleset("pagat", {}),
                      time_control=TimeControl(), seed="s", out=out, **settings)  # fmt: skip


def test_a_pair_whose_table_keeps_failing_says_what_happened_and_replays_only_that_table(tmp_path: Path, monkeypatch):
    from arena.sprt import runner

    starts: list[str] = []

    async def table(spec, on_game, stop):
        starts.append(spec.table_id)
        if spec.table_id.endswith("-t2"):
            return TableResult(spec.table_id, [], {}, error="SeatStartError: the seat's container did not start")
        on_game(played(spec.game_ids[0]))
        return TableResult(spec.table_id, [], {})

    monkeypatch.setattr(runner, "LocalTables", lambda: FakeTables(table))
    report = run_sprt(config(tmp_path / "out"))
    assert report.result == "failed"
    assert report.failure == (
        "pair 0 could not be played in 3 attempts: table 2 failed (SeatStartError: the seat's container did not start)"
    )
    assert sorted(starts[:2]) == ["d000000-t1", "d000000-t2"]
    assert starts[2:] == ["d000000-2-t2", "d000000-3-t2"], "table 1's stored game is not replayed"
    assert report.void_pairs == ((0, "table 2 failed (SeatStartError: the seat's container did not start)"),)
    store = ResultsStore(tmp_path / "out" / "results.sqlite")
    try:
        pair = store.pair(0)
        assert pair is not None and (pair.status, pair.attempts) == ("void", 3)
        assert pair.reason.startswith("given up after 3 attempts: table 2 failed (SeatStartError")
        assert store.void_clusters() == {"d000000"}, "the stored half leaves the ratings"
        assert store.void_attempts() == {"d000000-t2": 3}
    finally:
        store.close()

    # Resumed: the given-up pair is not played again (its attempts are spent); it is said, and left out.
    notices: list[str] = []
    starts.clear()
    monkeypatch.setattr(runner, "LocalTables", lambda: FakeTables(table))
    from arena.sprt.runner import Progress

    again = run_sprt(config(tmp_path / "out"), Progress(on_notice=notices.append))
    assert notices == [
        "pair 0 was given up before (given up after 3 attempts: table 2 failed (SeatStartError: the seat's container "
        "did not start)): it is left out of the test"
    ]
    assert sorted(starts[:2]) == ["d000001-t1", "d000001-t2"], "the test goes on with the next pair"


def test_a_void_game_is_the_reason_said(tmp_path: Path, monkeypatch):
    from arena.sprt import runner

    async def table(spec, on_game, stop):
        game = played(spec.game_ids[0])
        if spec.table_id.endswith("-t1"):
            game = game.__class__(**{**game.__dict__, "void": "void:platform", "ending": "void:platform"})
        on_game(game)
        return TableResult(spec.table_id, [], {})

    monkeypatch.setattr(runner, "LocalTables", lambda: FakeTables(table))
    report = run_sprt(config(tmp_path / "out"))
    assert report.failure == "pair 0 could not be played in 3 attempts: its game at table 1 was void (void:platform)"


def test_games_another_writer_stored_complete_the_pair_instead_of_failing_it(tmp_path: Path, monkeypatch):
    """Two runs on one directory (before the lock): each game arrived as a copy of a stored one.

    The old runner read that as "pair 0 could not be played in 3 attempts (its games were voided)".
    """
    from arena.sprt import runner

    out = tmp_path / "out"
    other: list[Ledger] = []

    async def table(spec, on_game, stop):
        await trio.sleep(0)
        if not other:  # the other writer: its own connection to the same store
            other.append(Ledger(ResultsStore(out / "results.sqlite"), out, ruleset_hash=resolve_ruleset("pagat", {}).hash))
        gid = spec.game_ids[0]
        number = int(gid[-1])
        slot = GameSlot(gid, 0, 0, number, "d000000", *(("new-bot", "old-bot") if number == 1 else ("old-bot", "new-bot")), "s")
        other[0].record(slot, played(gid), {})
        on_game(played(gid))  # the same game, now a copy of a stored one
        return TableResult(spec.table_id, [], {})

    monkeypatch.setattr(runner, "LocalTables", lambda: FakeTables(table))
    try:
        report = run_sprt(config(out))
    finally:
        for ledger in other:
            ledger.store.close()
    assert report.failure is None and report.result != "failed", report.failure
    assert report.snapshot.status.pairs == 1, "the pair the other writer stored is counted"
    assert game_id(0, 1) == "d000000-t1"
