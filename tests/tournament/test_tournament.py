"""Tournaments end to end: schedule, validation, resume after SIGKILL and Ctrl-C, faults."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.tournament import ConfigError, load_config, schedule
from arena.tournament.schedule import tables
from tournament_support import arena

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"

TOURNAMENT = f"""
[tournament]
name = "t"
seed = "resume-test"
deals_per_pairing = 2
concurrency = 2
output = "out"

[rules]
preset = "pagat"
set = {{ max_hands = 4 }}

[[entry]]
name = "heuristic"
bot = "cmd:python {BOTS / 'heuristic' / 'bot.py'}"

[[entry]]
name = "greedy"
bot = "cmd:python {BOTS / 'greedy' / 'bot.py'}"

[[entry]]
name = "random"
bot = "cmd:python {BOTS / 'random' / 'bot.py'}"
"""


def write(tmp: Path, text: str = TOURNAMENT, name: str = "t.toml") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / name
    path.write_text(text)
    return path




def results(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT game_id, side0, side1, ending, winner, score0, score1, hands FROM games ORDER BY game_id"
        ).fetchall()


def count(db: Path) -> int:
    """Games stored so far (0 while the store is being created)."""
    if not db.exists():
        return 0
    try:
        return len(results(db))
    except sqlite3.OperationalError:
        return 0


def test_schedule_is_deterministic_and_duplicate(tmp_path):
    config = load_config(write(tmp_path))
    games = schedule(config)
    assert games == schedule(load_config(write(tmp_path / "again")))
    assert len(games) == 3 * 2 * 2
    by_cluster: dict[str, list] = {}
    for g in games:
        by_cluster.setdefault(g.cluster, []).append(g)
    for pair in by_cluster.values():
        a, b = pair
        assert a.deal_seed == b.deal_seed and (a.side0, a.side1) == (b.side1, b.side0), "same deal, sides swapped"
    other = load_config(write(tmp_path / "other", TOURNAMENT.replace("resume-test", "other-seed")))
    assert {g.deal_seed for g in schedule(other)}.isdisjoint({g.deal_seed for g in games})
    assert [t.table_id for t in tables(games)][:2] == ["p000-t1", "p000-t2"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace('concurrency = 2', 'concurrency = 2\ncolour = "red"'), "unknown key(s) colour"),
        (lambda t: t.replace('name = "greedy"', 'name = "heuristic"'), "duplicate entry name 'heuristic'"),
        (lambda t: t.replace("deals_per_pairing = 2", "deals_per_pairing = 0"), "deals_per_pairing must be >= 1"),
        (lambda t: t.replace("max_hands = 4", "target = 0"), "target=0 is out of range"),
        (lambda t: t.replace('preset = "pagat"', 'preset = "nope"'), "unknown preset 'nope'"),
        (lambda t: t.replace('seed = "resume-test"\n', ""), "seed is required"),
        (lambda t: t + '\n[[entry]]\nname = "x"\nbot = "ftp:thing"\n', "must start with cmd:"),
        (lambda t: t.replace("[rules]", "[rules\n"), "not valid TOML"),
    ],
)
def test_bad_tournament_files_are_refused_before_anything_starts(tmp_path, change, message):
    path = write(tmp_path, change(TOURNAMENT))
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(path)
    result = arena(tmp_path, "tournament", "run", str(path))
    assert result.returncode == 2 and message in result.stderr
    assert not (tmp_path / "out").exists(), "nothing starts on a bad file"


def test_missing_image_is_refused(tmp_path):
    text = TOURNAMENT + '\n[[entry]]\nname = "ghost"\nbot = "docker:arena-no-such-image:0"\n'
    result = arena(tmp_path, "tournament", "run", str(write(tmp_path, text)))
    assert result.returncode == 2
    assert "arena-no-such-image:0" in result.stderr or "Docker" in result.stderr


def test_killed_run_resumes_to_exactly_the_uninterrupted_results(tmp_path):
    straight = tmp_path / "straight"
    done = arena(straight, "tournament", "run", str(write(straight)), "--json", "--no-show")
    assert done.returncode == 0, done.stderr
    expected = results(straight / "out" / "results.sqlite")
    assert len(expected) == 12

    resumed = tmp_path / "resumed"
    path = write(resumed)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--json", "--no-show"],
        cwd=resumed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    db = resumed / "out" / "results.sqlite"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if 3 <= count(db) < 12:
            break
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no cleanup at all
    proc.wait(timeout=30)
    partial = results(db)
    assert 3 <= len(partial) < 12, "killed mid-way"
    again = arena(resumed, "tournament", "run", str(path), "--json", "--no-show")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["already_done"] == len(partial) and summary["played"] == 12 - len(partial)
    assert results(db) == expected, "no game lost, none counted twice, same outcomes"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert len(list((resumed / "out" / "records").glob("*.json"))) == 12


def test_ctrl_c_stops_cleanly_and_resumes(tmp_path):
    path = write(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--json", "--no-show"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    db = tmp_path / "out" / "results.sqlite"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and count(db) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    summary = json.loads(out)
    assert summary["interrupted"] is True and summary["unfinished"]
    again = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show")
    assert again.returncode == 0 and json.loads(again.stdout)["unfinished"] == []


def test_changed_file_is_refused_on_resume(tmp_path):
    path = write(tmp_path, TOURNAMENT.replace("deals_per_pairing = 2", "deals_per_pairing = 1"))
    assert arena(tmp_path, "tournament", "run", str(path), "--no-show").returncode == 0
    path.write_text(TOURNAMENT)
    result = arena(tmp_path, "tournament", "run", str(path))
    assert result.returncode == 2 and "different file" in result.stderr


def test_crashing_entry_is_scored_with_reasons_and_disqualified(tmp_path):
    crasher = tmp_path / "crash.py"
    crasher.write_text("import sys\nsys.exit(3)\n")
    text = TOURNAMENT.replace(f"cmd:python {BOTS / 'random' / 'bot.py'}", f"cmd:python {crasher}")
    text = text.replace("[rules]", "[faults]\ndisqualify_min_games = 2\ndisqualify_share = 0.5\n\n[rules]")
    path = write(tmp_path, text)
    result = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show")
    assert result.returncode == 0, result.stderr
    rows = results(tmp_path / "out" / "results.sqlite")
    assert len(rows) == 12
    theirs = [r for r in rows if "random" in (r[1], r[2])]
    assert all(r[4] != "random" for r in theirs), "the crashing entry never wins"
    endings = {r[3] for r in theirs}
    assert "forfeit:crash" in endings
    assert endings <= {"forfeit:crash", "forfeit:disqualified"}
    shown = arena(tmp_path, "ratings", "show", "out", "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    text_doc = json.dumps(doc)
    assert "crash" in text_doc and "random" in text_doc


def test_ratings_publish_writes_every_format(tmp_path):
    path = write(tmp_path, TOURNAMENT.replace("deals_per_pairing = 2", "deals_per_pairing = 1"))
    assert arena(tmp_path, "tournament", "run", str(path), "--no-show").returncode == 0
    result = arena(tmp_path, "ratings", "publish", "out", "--out", "site", "--json")
    assert result.returncode == 0, result.stderr
    paths = json.loads(result.stdout)
    assert {Path(p).name for p in paths.values()} == {
        "ratings.json", "results.csv", "leaderboard.md", "index.html", "games.html",
    }
    assert len(list((tmp_path / "site" / "games").glob("p*-t*.html"))) == 6  # a replay page per game
    csv_lines = (tmp_path / "site" / "results.csv").read_text().strip().splitlines()
    assert len(csv_lines) == 1 + 6
    table = arena(tmp_path, "ratings", "show", "out")
    assert table.returncode == 0 and "heuristic" in table.stdout
    missing = arena(tmp_path, "ratings", "show", "nowhere")
    assert missing.returncode == 2 and "not a tournament output directory" in missing.stderr
