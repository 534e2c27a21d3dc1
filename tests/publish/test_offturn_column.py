"""The CPU a bot used while not asked reaches the stored times, the published time table and the match's table.

Off-turn CPU was recorded per game (``meta.offturn``) but summed nowhere: a
tournament's table could not tell a bot that thinks on the others' turns.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from arena.commands.match import timing_table
from arena.publish.timecells import TIME_COLUMNS, time_cells
from arena.results.store import ResultsStore
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot
from arena.tables.spec import TableGame


def record(game_id: str, offturn: dict[str, dict[str, float]] | None) -> dict:
    """A two-player record whose decisions carry times; ``offturn`` per seat (A, B), if measured."""
    actions = [{"seat": seat, "ms": 10.0, "cpu_ms": 8.0} for _ in range(5) for seat in ("A", "B")]
    found: dict = {"game_id": game_id, "ruleset": {"players": 2}, "hands": [{"actions": actions}]}
    if offturn is not None:
        found["meta"] = {"offturn": offturn}
    return found


def store_game(ledger: Ledger, game_id: str, seq: int, rec: dict) -> None:
    game = TableGame(
        game_id=game_id, ending="target", winner=0, scores=(300, 100), hands=1, forfeit_sides=(),
        forfeit_reason=None, forfeit_detail=None, void=None, strikes=(0, 0), decisions=10,
        think_seconds=0.1, record=rec,
    )  # fmt: skip
    ledger.record(GameSlot(game_id, seq, seq, 1, f"c{seq}", "pondering", "quiet", "s"), game, {})


def test_offturn_cpu_is_summed_per_entry_and_published(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    store.claim("h", "t", "rules")
    ledger = Ledger(store, tmp_path, ruleset_hash="rules", max_pair_attempts=3)
    store_game(ledger, "g1", 1, record("g1", {"A": {"cpu_ms": 900.0, "ms": 1000.0}, "B": {"cpu_ms": 4.0, "ms": 1000.0}}))
    store_game(ledger, "g2", 2, record("g2", {"A": {"cpu_ms": 700.0, "ms": 1000.0}, "B": {"cpu_ms": 6.0, "ms": 1000.0}}))
    store_game(ledger, "g3", 3, record("g3", None))  # an older arena's record: not measured, not zero
    times = store.entry_times()
    assert times["pondering"].offturn_games == 2 and times["pondering"].offturn_cpu_ms_per_game == 800.0
    assert times["quiet"].offturn_cpu_ms_per_game == 5.0
    assert times["pondering"].as_json()["offturn_cpu_ms_per_game"] == 800.0
    cells = dict(time_cells(times["pondering"]))
    assert cells["offturn"] == "800" and "offturn" in [key for key, _, _ in TIME_COLUMNS]

    alone = ResultsStore(tmp_path / "other.sqlite")
    alone.claim("h", "t", "rules")
    Ledger(alone, tmp_path, ruleset_hash="rules", max_pair_attempts=3).record(
        GameSlot("g5", 1, 1, 1, "c1", "old", "older", "s"),
        TableGame(
            game_id="g5", ending="target", winner=0, scores=(1, 0), hands=1, forfeit_sides=(), forfeit_reason=None,
            forfeit_detail=None, void=None, strikes=(0, 0), decisions=10, think_seconds=0.1, record=record("g5", None),
        ),  # fmt: skip
        {},
    )
    assert dict(time_cells(alone.entry_times()["old"]))["offturn"] == "–", "never measured is not zero"


def test_a_store_from_before_offturn_gains_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE side_times (game_id TEXT NOT NULL, side INTEGER NOT NULL, entry TEXT NOT NULL,"
        " decisions INTEGER NOT NULL, wall_s REAL NOT NULL, max_s REAL NOT NULL, cpu_s REAL,"
        " cpu_decisions INTEGER NOT NULL, ref_s REAL NOT NULL, lag_s REAL NOT NULL, timeouts INTEGER NOT NULL,"
        " PRIMARY KEY (game_id, side))"
    )
    old.execute("INSERT INTO side_times VALUES ('g', 0, 'bot', 10, 0.1, 0.02, 0.05, 10, 0.001, 0.0, 0)")
    old.commit()
    old.close()

    before = ResultsStore.open_read_only(path)  # read-only: nothing may be written, the old columns still read
    assert before.entry_times()["bot"].offturn_cpu_ms_per_game is None and before.entry_times()["bot"].decisions == 10
    before.close()

    store = ResultsStore(path)
    columns = {row[1] for row in store.db.execute("PRAGMA table_info(side_times)")}
    assert {"offturn_cpu_s", "offturn_s"} <= columns
    timing = store.entry_times()["bot"]
    assert timing.decisions == 10 and timing.offturn_cpu_ms_per_game is None


def test_the_match_time_table_shows_offturn_cpu_when_measured() -> None:
    games = [
        SimpleNamespace(record=record("g1", {"A": {"cpu_ms": 1200.0, "ms": 2000.0}, "B": {"cpu_ms": 3.0, "ms": 2000.0}})),
        SimpleNamespace(record=record("g2", {"A": {"cpu_ms": 800.0, "ms": 2000.0}, "B": {"cpu_ms": 5.0, "ms": 2000.0}})),
    ]
    report = SimpleNamespace(
        config=SimpleNamespace(rules=SimpleNamespace(players=2)), seat_bots=(0, 1), games=games,
        totals=[SimpleNamespace(name="pondering"), SimpleNamespace(name="quiet")],
    )  # fmt: skip
    console = Console(width=200, record=True)
    console.print(timing_table(report))  # type: ignore[arg-type]
    text = console.export_text()
    assert "off-turn" in text
    ponder = next(line for line in text.splitlines() if "pondering" in line)
    quiet = next(line for line in text.splitlines() if "quiet" in line)
    assert ponder.rstrip(" │|").split()[-1] == "2000" and quiet.rstrip(" │|").split()[-1] == "8"

    unmeasured = SimpleNamespace(**{**vars(report), "games": [SimpleNamespace(record=record("g", None))]})
    console = Console(width=200, record=True)
    console.print(timing_table(unmeasured))  # type: ignore[arg-type]
    assert "off-turn" not in console.export_text()
