"""One ``arena tournament run`` per output directory: a second is refused in one line naming the first's pid
and changes nothing; once the first is killed (-9) the next one resumes it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from runlock_support import Gate, arena_process, end_own_processes, fingerprint, kill_runner, one_line, wait_for
from tournament_support import arena


def tournament(gate: Gate) -> str:
    """Two entries, one pairing: two tables of two deals each, the bots held at their second game."""
    return f"""
[tournament]
name = "locked"
seed = "lock"
deals_per_pairing = 2
concurrency = 2
output = "out"

[rules]
preset = "pagat"
set = {{ max_hands = 1 }}

[time]
move = 600.0
hard_cap = 900.0

[[entry]]
name = "north"
bot = "{gate.spec}"

[[entry]]
name = "south"
bot = "{gate.spec}"
"""


def stored(out: Path) -> int:
    try:
        with sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_second_run_of_the_same_output_is_refused_and_a_killed_one_is_taken_over(tmp_path: Path):
    gate = Gate(tmp_path, hold_at=2)
    (tmp_path / "t.toml").write_text(tournament(gate))
    out = tmp_path / "out"
    first = arena_process(["tournament", "run", "t.toml", "--json", "--no-show"], tmp_path)
    try:
        wait_for(lambda: gate.waiting() >= 2 and stored(out) == 2, "the first deal stored at both tables, both held")
        before = fingerprint(out)
        # The same file, and the same directory through --out: refused alike, before anything is printed.
        for extra in (["--json"], ["--out", "out"]):
            second = arena(tmp_path, "tournament", "run", "t.toml", "--no-show", *extra)
            assert second.returncode == 2, second.stdout + second.stderr
            line = one_line(second.stderr)
            assert f"out is in use by arena tournament run (pid {first.pid}, since " in line, line
            assert not second.stdout.strip(), second.stdout
            assert fingerprint(out) == before, "the refused run touched nothing"

        shown = arena(tmp_path, "ratings", "show", "out", "--json")
        assert shown.returncode == 0, shown.stderr
        assert len(json.loads(shown.stdout)["entries"]) == 2, "read-only commands work meanwhile"

        kill_runner(first)
        gate.open()
        resumed = arena(tmp_path, "tournament", "run", "t.toml", "--json", "--no-show")
        assert resumed.returncode == 0, resumed.stderr
        summary = json.loads(resumed.stdout)
        assert (summary["already_done"], summary["played"], summary["unfinished"]) == (2, 2, []), summary
        assert not (out / ".arena-run.lock").exists()
    finally:
        kill_runner(first)
        gate.open()
        end_own_processes(str(tmp_path))
