"""One ``arena sprt`` per ``--out``: a second is refused in one line naming the first's pid and changes nothing;
``arena ratings show`` reads the directory meanwhile; once the first is killed (-9) the next one resumes it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from runlock_support import Gate, arena_process, end_own_processes, fingerprint, kill_runner, one_line, wait_for
from tournament_support import arena

#: One pair at a time, two pairs per table: each table's bots hold at their second game, pair 0 stored.
#: A move time far above the hold, so the held bots are never struck.
ARGS = ["--set", "max_hands=1", "--move-time", "600", "--hard-cap", "900", "--elo0", "0", "--elo1", "50",
        "--max-pairs", "2", "--pairs-per-table", "2", "--seed", "lock", "--out", "out", "--json"]  # fmt: skip


def stored(out: Path) -> int:
    try:
        with sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_second_sprt_on_the_same_out_is_refused_and_a_killed_one_is_taken_over(tmp_path: Path):
    gate = Gate(tmp_path, hold_at=2)
    args = ["sprt", "--bot", gate.spec, "--bot", gate.spec, *ARGS]
    out = tmp_path / "out"
    first = arena_process(args, tmp_path)
    try:
        wait_for(lambda: gate.waiting() >= 2 and stored(out) == 2, "pair 0 stored, both tables held")
        before = fingerprint(out)
        second = arena(tmp_path, *args)
        assert second.returncode == 2, second.stdout + second.stderr
        line = one_line(second.stderr)
        assert f"out is in use by arena sprt (pid {first.pid}, since " in line, line
        assert fingerprint(out) == before, "the refused test touched nothing in --out"
        assert not second.stdout.strip(), "nothing was started: no report"

        shown = arena(tmp_path, "ratings", "show", "out", "--json")
        assert shown.returncode == 0, shown.stderr
        entries = json.loads(shown.stdout)["entries"]
        assert len(entries) == 2 and all(e["games"] == 2 for e in entries), "read-only commands work meanwhile"

        kill_runner(first)
        gate.open()
        resumed = arena(tmp_path, *args)
        assert resumed.returncode in (0, 3, 4), resumed.stderr
        summary = json.loads(resumed.stdout)
        assert summary["resumed_pairs"] == 1 and summary["pairs"] == 2, summary
        assert not (out / ".arena-run.lock").exists(), "the lock file goes with the run that held it"
    finally:
        kill_runner(first)
        gate.open()
        end_own_processes(str(tmp_path))


def test_a_refused_test_makes_no_directory_for_bad_input(tmp_path: Path):
    """Bad options are refused before the directory is locked (and so made)."""
    done = subprocess.run(
        [sys.executable, "-m", "arena", "sprt", "--bot", "builtin:easy", "--bot", "builtin:easy",
         "--elo0", "0", "--elo1", "50", "--concurrency", "3", "--out", "never"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "--concurrency" in done.stderr
    assert not (tmp_path / "never").exists()
