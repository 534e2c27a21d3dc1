"""Tables in their own processes: a killed table process is a void that is replayed, with no leftovers;
the same rows at concurrency 1 and 2; forfeits stored structurally; safe entry names; a read-only store
for reading; the output directory and the publish command printed; --out."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.results.store import StoredGame, ResultsStore
from tournament_support import arena, cannot_write_prefix, live_processes, own_bot, stored_rows





def tournament(tmp: Path, *, deals: int, concurrency: int, max_hands: int = 3, name: str = "tp") -> Path:
    text = f"""
[tournament]
name = "{name}"
seed = "processes"
deals_per_pairing = {deals}
concurrency = {concurrency}
output = "out"

[rules]
preset = "pagat"
set = {{ max_hands = {max_hands} }}

[[entry]]
name = "random"
bot = "{own_bot(tmp, 'random')}"

[[entry]]
name = "greedy"
bot = "{own_bot(tmp, 'greedy')}"

[[entry]]
name = "heuristic"
bot = "{own_bot(tmp, 'heuristic')}"
"""
    path = tmp / f"{name}.toml"
    path.write_text(text)
    return path








def test_same_rows_at_concurrency_1_and_2_and_the_output_is_named(tmp_path):
    one = arena(tmp_path, "tournament", "run", str(tournament(tmp_path, deals=2, concurrency=1)), "--no-show")
    assert one.returncode == 0, one.stderr
    two = arena(
        tmp_path, "tournament", "run", str(tournament(tmp_path, deals=2, concurrency=2)), "--no-show", "--out", "two"
    )
    assert two.returncode == 0, two.stderr
    assert stored_rows(tmp_path / "out") == stored_rows(tmp_path / "two")
    assert len(stored_rows(tmp_path / "two")) == 12
    assert two.stdout.splitlines()[0] == "results go to two (2 tables at a time)"
    assert "results are in two; publish them with: arena ratings publish two" in two.stdout
    # The file's hash guard holds for --out: another file into the same directory is refused.
    other = tournament(tmp_path, deals=3, concurrency=2, name="other")
    refused = arena(tmp_path, "tournament", "run", str(other), "--out", "two")
    assert refused.returncode == 2 and "different file" in refused.stderr


def test_a_killed_table_process_voids_its_game_which_is_replayed_without_leftovers(tmp_path):
    # Six games per table: the first table is still playing when it is killed
    # (with three, a fast machine finished it within the pause below).
    path = tournament(tmp_path, deals=6, concurrency=1, max_hands=4)
    reference = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "reference")
    assert reference.returncode == 0, reference.stderr
    run = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--no-show", "--json"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    marker = str(tmp_path / "bot-")
    try:
        deadline = time.monotonic() + 120
        bots: dict[int, int] = {}
        while len(bots) < 4 and time.monotonic() < deadline:
            bots = live_processes(marker)
            time.sleep(0.05)
        assert len(bots) == 4, "the first table's four bots started"
        (table_process,) = set(bots.values())
        assert table_process != run.pid, "the table runs in its own process"
        time.sleep(0.3)  # the bots have joined: mid-game
        os.kill(table_process, signal.SIGKILL)
        out, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert stored_rows(tmp_path / "out") == stored_rows(tmp_path / "reference"), "the voided games were played again, same results"
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        voids = db.execute("SELECT reason FROM voids").fetchall()
    assert voids and all("the table process died (signal 9)" in r for (r,) in voids)
    deadline = time.monotonic() + 20
    while live_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not live_processes(marker), "no bot of the killed table is left"


def test_entry_names_are_restricted_to_a_safe_set(tmp_path):
    path = tournament(tmp_path, deals=1, concurrency=1)
    path.write_text(path.read_text().replace('name = "greedy"', 'name = "x,y"'))
    result = arena(tmp_path, "tournament", "run", str(path))
    assert result.returncode == 2
    assert "name 'x,y' is not allowed" in result.stderr and "letters, digits" in result.stderr
    assert not (tmp_path / "out").exists()


def _row(game_id: str, charged: tuple[str, ...]) -> StoredGame:
    return StoredGame(
        game_id=game_id, pairing=0, deal=0, table_no=1, cluster="p000-d000", side0="a", side1="b",
        deal_seed="s", ending="forfeit:crash", winner=None, score0=0, score1=0, hands=1,
        forfeit_entry=charged[0] if len(charged) == 1 else None, forfeit_reason="crash", forfeit_detail="",
        strikes0=0, strikes1=0, decisions=1, think_seconds=0.0, ruleset_hash="h", engine_version="e",
        sdk_version="s", image0=None, image1=None, record=None, finished_at="now", forfeit_entries=charged,
    )  # fmt: skip


def test_forfeits_are_stored_one_row_per_entry_and_old_stores_are_migrated(tmp_path):
    store = ResultsStore(tmp_path / "results.sqlite")
    store.claim("hash", "t", "rules")
    assert store.record_game(_row("g1", ("a", "b")))
    assert not store.record_game(_row("g1", ("a",))), "a second copy of a game is ignored"
    assert store.record_game(_row("g2", ("b",)))
    assert [r.forfeit_entries for r in store.games()] == [("a", "b"), ("b",)]
    assert [r.game_id for r in store.games_of("a")] == ["g1", "g2"]
    assert store.db.execute("SELECT game_id, entry FROM forfeits ORDER BY 1, 2").fetchall() == [
        ("g1", "a"), ("g1", "b"), ("g2", "b"),
    ]  # fmt: skip
    # A store written before forfeits were structural (comma-joined names) is read into the table once.
    store.db.execute("DELETE FROM forfeits")
    store.db.execute("UPDATE games SET forfeit_entry='a,b' WHERE game_id='g1'")
    store.close()
    again = ResultsStore(tmp_path / "results.sqlite")
    assert [r.forfeit_entries for r in again.games()] == [("a", "b"), ("b",)]
    again.close()


def test_ratings_read_a_read_only_results_directory(tmp_path):
    path = tournament(tmp_path, deals=1, concurrency=2)
    done = arena(tmp_path, "tournament", "run", str(path), "--no-show")
    assert done.returncode == 0, done.stderr
    # A directory its reader cannot write (as root, without the privileges that write anywhere).
    frozen = Path(tempfile.mkdtemp(prefix="arena-ro-"))
    site = Path(tempfile.mkdtemp(prefix="arena-site-"))
    try:
        shutil.copy2(tmp_path / "out" / "results.sqlite", frozen / "results.sqlite")
        (frozen / "results.sqlite").chmod(0o444)
        frozen.chmod(0o555)
        site.chmod(0o777)
        prefix = cannot_write_prefix()
        for command in (["show", str(frozen)], ["publish", str(frozen), "--out", str(site / "out")]):
            result = subprocess.run(
                [*prefix, sys.executable, "-m", "arena", "ratings", *command], cwd=site,
                capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200", "HOME": str(site)},
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
        assert "greedy" in result.stdout or (site / "out" / "index.html").exists()
        assert sorted(p.name for p in frozen.iterdir()) == ["results.sqlite"], "nothing written next to the store"
    finally:
        frozen.chmod(0o755)
        shutil.rmtree(frozen)
        shutil.rmtree(site)


@pytest.mark.parametrize("scheduler", ["localhost:8786", "tcp://nohost", "http://127.0.0.1:1"])
def test_a_bad_scheduler_in_the_file_is_refused(tmp_path, scheduler):
    path = tournament(tmp_path, deals=1, concurrency=1)
    path.write_text(path.read_text() + f'\n[cluster]\nscheduler = "{scheduler}"\n')
    result = arena(tmp_path, "tournament", "run", str(path))
    assert result.returncode == 2 and "scheduler must be tcp://HOST:PORT" in result.stderr


def test_the_cluster_table_is_not_part_of_the_tournament(tmp_path):
    from arena.tournament import load_config

    path = tournament(tmp_path, deals=1, concurrency=1)
    plain = load_config(path)
    path.write_text(path.read_text() + '\n[cluster]\nscheduler = "tcp://127.0.0.1:8786"\n')
    clustered = load_config(path)
    assert clustered.scheduler == "tcp://127.0.0.1:8786" and plain.scheduler is None
    assert clustered.file_hash == plain.file_hash
