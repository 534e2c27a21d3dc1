"""`arena ladder export`: the grading table, from a real ladder directory, matches the standings."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from standings_support import pair, random_ladder

from arena.ladder.config import load_ladder_config
from arena.ladder.course.export import COLUMNS, FORMAT, export, to_csv
from arena.ladder.games.leaderboard import ladder_standings
from arena.ladder.service import open_results
from arena.ladder.games.ids import CLUSTER_FORMAT
from arena.ladder.store import LadderStore
from arena.results.store import ResultsStore
from arena.tables.ledger import Ledger
from arena.ratings import Result, fit

ARENA = str(Path(sys.executable).with_name("arena"))
TEAMS = ["alpha", "beta", "gamma", "delta"]
STRENGTH = {"alpha@1": 150.0, "beta@1": 50.0, "gamma@1": -50.0, "delta@1": -150.0, "alpha@2": 100.0}


def arena(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([ARENA, *args], check=False, capture_output=True, text=True, timeout=180)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ladder directory: four teams, alpha on its second version (its first retired),
    delta disabled, 160 stored pairs, and pair 7 voided after one of its games was stored."""
    directory = tmp_path_factory.mktemp("ladder")
    arena("ladder", "init", str(directory))
    config = load_ladder_config(directory)
    store = LadderStore(config.ladder_path)

    def activate(team: str, note: str = "") -> None:
        v = store.add_version(team, note, 10)
        for status in ("queued", "building", "validating"):
            store.transition(v.id, status)
        store.activate(v, {})

    for team in TEAMS:
        store.add_team(team)
        activate(team)
    activate("alpha", "v2")
    results = open_results(config, store.meta()["ladder_id"])
    ledger = Ledger(results, directory, ruleset_hash=config.rules.hash)
    games = list(random_ladder(sorted(STRENGTH), 160, seed=11, strengths=STRENGTH))
    for g in games:
        if g.table_no == 1:
            assert ledger.plan_pair(g.side0, g.side1, cluster=CLUSTER_FORMAT) == g.pairing
        if g.pairing == 7 and g.table_no == 2:
            continue  # the pair's second table never finished: the pair is voided
        results.record_game(g)
        if g.table_no == 2:
            ledger.finish_pair(g.pairing)
    ledger.void_pair(7, "the platform failed it three times")
    store.set_team_disabled("delta", True)
    results.close()
    store.close()
    return directory


def stored(directory: Path):  # type: ignore[no-untyped-def]
    from arena.results.store import ResultsStore

    results = ResultsStore.open_read_only(directory / "results.sqlite")
    try:
        return results.games()
    finally:
        results.close()


def test_the_export_matches_the_standings_and_the_fit(ladder: Path, tmp_path: Path) -> None:
    arena("ladder", "export", str(ladder), "--csv", str(tmp_path / "grades.csv"), "--json", str(tmp_path / "grades.json"))
    rows = list(csv.DictReader((tmp_path / "grades.csv").read_text().splitlines()))
    data = json.loads((tmp_path / "grades.json").read_text())
    assert tuple(rows[0]) == COLUMNS
    # The listed rows: the active versions of enabled teams (alpha@2, beta, gamma).
    assert [r["entry"] for r in rows] == [s["entry"] for s in data["standings"]]
    assert {r["entry"] for r in rows} == {"alpha@2", "beta@1", "gamma@1"}
    assert [r["rank"] for r in rows] == ["1", "2", "3"]
    # The same definition as the site's: every stored game but the voided pair's half.
    games = stored(ladder)
    store = LadderStore(ladder / "ladder.sqlite")
    try:
        results = ResultsStore.open_read_only(ladder / "results.sqlite")
        expected = {s.entry: s for s in ladder_standings(store, results, games)}
        results.close()
    finally:
        store.close()
    counted = [g for g in games if g.cluster != "L0000007"]
    full = fit([Result(g.side0, g.side1, float(g.winner == g.side0), g.cluster) for g in counted])
    for r, j in zip(rows, data["standings"], strict=True):
        s, p = expected[r["entry"]], full[r["entry"]]
        assert s.elo == pytest.approx(p.elo, abs=1e-9) and j["elo"] == pytest.approx(p.elo, abs=1e-9)
        assert (j["low"], j["high"]) == (pytest.approx(p.lower), pytest.approx(p.upper))
        assert float(r["elo"]) == pytest.approx(p.elo, abs=0.005)
        assert float(r["plus_minus"]) == pytest.approx(p.margin, abs=0.005)
        assert int(r["pairs"]) == j["pairs"] == s.pairs
        assert int(r["games"]) == j["games"] == p.record.games  # games against disabled delta count
        assert r["team"] == r["entry"].split("@")[0] and r["version"] == r["entry"].split("@")[1]
        assert r["at"] == data["at"]
        assert float(r["points_per_hand"]) == pytest.approx(j["points_per_hand"], abs=0.005)
    assert data["format"] == FORMAT and data["games"] == len(counted) == len(games) - 1
    assert data["method"]["error_bars"] == full.error_method and data["method"]["interval"] == 0.95


def test_stdout_and_one_line_errors(ladder: Path, tmp_path: Path) -> None:
    out = arena("ladder", "export", str(ladder))  # neither option: CSV on stdout
    assert out.stdout.splitlines()[0] == ",".join(COLUMNS) and len(out.stdout.splitlines()) == 4
    as_json = json.loads(arena("ladder", "export", str(ladder), "--json", "-").stdout)
    assert len(as_json["standings"]) == 3
    both = arena("ladder", "export", str(ladder), "--csv", "-", "--json", "-", check=False)
    assert both.returncode != 0 and len(both.stderr.strip().splitlines()) == 1
    missing = arena("ladder", "export", str(tmp_path / "nowhere"), check=False)
    assert missing.returncode != 0 and "not a ladder directory" in missing.stderr
    assert "Traceback" not in missing.stderr and len(missing.stderr.strip().splitlines()) == 1


def test_the_export_reads_while_the_server_holds_a_write(ladder: Path) -> None:
    """Works while the server runs: a writer in the middle of a transaction does not block it,
    and what it has not committed is not in the table."""
    config = load_ladder_config(ladder)
    results = open_results(config, LadderStore(config.ladder_path).meta()["ladder_id"])
    before = export(config)
    try:
        results.db.execute("BEGIN IMMEDIATE")
        for g in pair(999, "beta@1", "gamma@1", 2):
            results.db.execute(
                "INSERT INTO games(game_id, pairing, deal, table_no, cluster, side0, side1, deal_seed, ending, "
                "winner, score0, score1, hands, strikes0, strikes1, decisions, think_seconds, ruleset_hash, "
                "engine_version, sdk_version, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (g.game_id, g.pairing, g.deal, g.table_no, g.cluster, g.side0, g.side1, g.deal_seed, g.ending,
                 g.winner, g.score0, g.score1, g.hands, 0, 0, 1, 0.0, "r", "e", "s", g.finished_at),
            )  # fmt: skip
        done = arena("ladder", "export", str(ladder), "--json", "-")
        during = json.loads(done.stdout)
        assert during["games"] == before.games
        assert [r["elo"] for r in during["standings"]] == [r.elo for r in before.rows]
    finally:
        results.db.execute("ROLLBACK")
        results.close()


def test_csv_cells_cannot_start_a_formula() -> None:
    from arena.ladder.course.export import Export, Row

    row = Row(None, "=cmd()", 1, "=cmd()@1", None, None, None, None, 0, 0, None)
    text = to_csv(Export("x", "2026-12-06T00:00:00+00:00", 0, "none", "", (row,)))
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[1][1] == "'=cmd()" and parsed[1][0] == ""
