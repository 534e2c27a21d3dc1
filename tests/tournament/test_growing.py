"""A tournament grows: entries added to a finished or running tournament's file play only their pairings.

Real tournaments of example bots as local processes, through the CLI: the
stored rows of the first run are kept exactly, the new pairings get new game
ids, a change to what was played is refused naming it, and a removed entry's
games stay in the store but out of the standings.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from arena.tournament.config import tournament_content
from arena.tournament.growth import ChangedTournament, check_growth
from arena.tournament.schedule import deal_seed
from tournament_support import arena

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"


def entry(name: str, bot: str | None = None) -> str:
    command = bot or f"cmd:python {BOTS / name / 'bot.py'}"
    return f'\n[[entry]]\nname = "{name}"\nbot = "{command}"\n'


def text(*entries: str, deals: int = 1, hands: int = 2, concurrency: int = 2) -> str:
    return (
        f'[tournament]\nname = "grow"\nseed = "grow"\ndeals_per_pairing = {deals}\nconcurrency = {concurrency}\n'
        f'output = "out"\n\n[rules]\npreset = "pagat"\nset = {{ max_hands = {hands} }}\n' + "".join(entries)
    )


def rows(out: Path) -> list[tuple]:
    """Every stored game as written (finished_at included: a row played again would differ)."""
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute("SELECT * FROM games ORDER BY game_id").fetchall()


def run(tmp: Path, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return arena(tmp, "tournament", "run", str(path), "--json", "--no-show", *args)


def rated(tmp: Path) -> list[str]:
    shown = arena(tmp, "ratings", "show", "out", "--json")
    assert shown.returncode == 0, shown.stderr
    return sorted(e["name"] for e in json.loads(shown.stdout)["entries"])


def test_an_entry_added_to_a_finished_tournament_plays_only_its_pairings(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(text(entry("greedy"), entry("random")))
    first = run(tmp_path, path)
    assert first.returncode == 0, first.stderr
    before = rows(tmp_path / "out")
    assert [r[0] for r in before] == ["p000-d000-t1", "p000-d000-t2"]

    # Added first in the file: positions move, the stored pairing's number does not.
    path.write_text(text(entry("heuristic"), entry("greedy"), entry("random")))
    grown = run(tmp_path, path)
    assert grown.returncode == 0, grown.stderr
    summary = json.loads(grown.stdout)
    assert (summary["games"], summary["already_done"], summary["played"], summary["unfinished"]) == (6, 2, 4, [])
    assert "entries added: heuristic" in grown.stderr
    after = rows(tmp_path / "out")
    assert [r for r in after if r[0].startswith("p000-")] == before, "every stored row is kept as it was"
    new = {(r[5], r[6]) for r in after if not r[0].startswith("p000-")}
    assert new == {("heuristic", "greedy"), ("greedy", "heuristic"), ("heuristic", "random"), ("random", "heuristic")}
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        secret = db.execute("SELECT value FROM meta WHERE key='deal_secret'").fetchone()[0]
        seeds = db.execute("SELECT side0, side1, deal_seed FROM games").fetchall()
    for side0, side1, seed in seeds:  # deals follow the names, whatever the order in the file
        assert seed == deal_seed("grow", side0, side1, 0, secret)
    assert rated(tmp_path) == ["greedy", "heuristic", "random"]

    again = run(tmp_path, path)
    assert json.loads(again.stdout)["played"] == 0 and rows(tmp_path / "out") == after


def test_a_change_to_what_was_played_is_refused_naming_it(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(text(entry("greedy"), entry("random")))
    assert run(tmp_path, path).returncode == 0
    before = rows(tmp_path / "out")
    path.write_text(text(entry("greedy"), entry("random"), entry("heuristic"), hands=3))
    refused = run(tmp_path, path)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "different file" in lines[0], refused.stderr
    assert '[rules] set: {"max_hands": 2} -> {"max_hands": 3}' in lines[0]
    path.write_text(text(entry("greedy"), entry("random", f"cmd:python {BOTS / 'heuristic' / 'bot.py'}")))
    refused = run(tmp_path, path)
    assert refused.returncode == 2 and "entry 'random': bot" in refused.stderr and "new name" in refused.stderr
    assert rows(tmp_path / "out") == before, "a refusal changes nothing"


def test_a_removed_entry_leaves_the_standings_and_comes_back(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(text(entry("greedy"), entry("random"), entry("heuristic")))
    assert run(tmp_path, path).returncode == 0
    before = rows(tmp_path / "out")
    assert len(before) == 6

    path.write_text(text(entry("greedy"), entry("heuristic")))
    removed = run(tmp_path, path)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(removed.stdout)["played"] == 0
    assert "entries removed: random" in removed.stderr
    assert rows(tmp_path / "out") == before, "its games stay in the store"
    assert rated(tmp_path) == ["greedy", "heuristic"]

    path.write_text(text(entry("greedy"), entry("random", f"cmd:python {BOTS / 'greedy' / 'bot.py'}"), entry("heuristic")))
    other = run(tmp_path, path)  # back under its name, but another bot: its stored games are not this one's
    assert other.returncode == 2 and "entry 'random': played before with bot" in other.stderr, other.stderr
    path.write_text(text(entry("greedy"), entry("random"), entry("heuristic")))
    back = run(tmp_path, path)
    assert back.returncode == 0 and json.loads(back.stdout)["played"] == 0
    assert rated(tmp_path) == ["greedy", "heuristic", "random"]


def test_a_running_tournament_plays_entries_added_meanwhile(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(text(entry("greedy"), entry("random"), deals=3, hands=3, concurrency=1))
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--json", "--no-show"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _stored(tmp_path / "out"):
            time.sleep(0.05)
        assert _stored(tmp_path / "out"), "no game stored in time"
        path.write_text(path.read_text() + entry("heuristic"))  # the first table is still playing
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert (summary["games"], summary["played"], summary["unfinished"]) == (18, 18, []), summary
    assert "entries added: heuristic" in err
    assert len(rows(tmp_path / "out")) == 18


def _stored(out: Path) -> int:
    try:
        return len(rows(out))
    except sqlite3.Error:
        return 0


def test_bot_logs_are_named_by_entry_and_seat(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(text(entry("greedy"), entry("random")))
    assert run(tmp_path, path).returncode == 0
    logs = tmp_path / "out" / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["p000-t1", "p000-t2"]
    assert sorted(p.name for p in (logs / "p000-t1").iterdir()) == [
        "greedy-seat0.log", "greedy-seat2.log", "random-seat1.log", "random-seat3.log",
    ]  # fmt: skip
    assert sorted(p.name for p in (logs / "p000-t2").iterdir()) == [
        "greedy-seat1.log", "greedy-seat3.log", "random-seat0.log", "random-seat2.log",
    ]  # fmt: skip


def test_a_store_from_before_contents_were_kept_grows_after_one_run_of_its_file(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(text(entry("greedy"), entry("random")))
    assert run(tmp_path, path).returncode == 0
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:  # as such a store was written
        db.execute("DELETE FROM meta WHERE key='config'")
        db.execute("DROP TABLE pairings")
    before = rows(tmp_path / "out")
    grown = text(entry("heuristic"), entry("greedy"), entry("random"))
    path.write_text(grown)
    refused = run(tmp_path, path)
    assert refused.returncode == 2 and "restore the original file and run it once" in refused.stderr
    path.write_text(text(entry("greedy"), entry("random")))
    again = run(tmp_path, path)
    assert again.returncode == 0 and json.loads(again.stdout)["played"] == 0, again.stderr
    path.write_text(grown)
    accepted = run(tmp_path, path)
    assert accepted.returncode == 0 and json.loads(accepted.stdout)["played"] == 4, accepted.stderr
    assert [r for r in rows(tmp_path / "out") if r[0].startswith("p000-")] == before


def test_growth_is_told_from_a_change():
    base = text(entry("greedy"), entry("random"), entry("heuristic"))
    gauntlet = base.replace('name = "greedy"\n', 'name = "greedy"\nopponents = ["random"]\n')

    def content(source: str) -> str:
        return tournament_content(tomllib.loads(source))

    widened = check_growth(content(gauntlet), content(base))
    assert (widened.added, widened.removed, widened.widened) == ((), (), ("greedy",))
    with pytest.raises(ChangedTournament, match="entry 'greedy': opponents narrowed .*heuristic"):
        check_growth(content(base), content(gauntlet))
    env = base.replace('name = "random"\n', 'name = "random"\nenv = { LEVEL = "2" }\n')
    with pytest.raises(ChangedTournament, match="entry 'random': env"):
        check_growth(content(base), content(env))
    with pytest.raises(ChangedTournament, match=r"\[tournament\] seed: \"grow\" -> \"other\""):
        check_growth(content(base), content(base.replace('seed = "grow"', 'seed = "other"')))
    # How it runs is not what it is: concurrency and [cluster] are not in the content.
    runs = base.replace("concurrency = 2", "concurrency = 3") + '\n[cluster]\nscheduler = "tcp://127.0.0.1:8786"\n'
    assert content(runs) == content(base)
