"""``arena sprt`` plays each table in its own OS process (the tournament's table processes).

The two tables of a pair run in two different processes, neither of them the
coordinator; more tables at once give the same pairs; a table process killed
mid-game voids its game, only its missing table is played again, each pair is
counted once, and no process is left behind.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tournament_support import live_processes, own_bot

#: Short games and a quick clock; bounds far apart so every run plays its ``--max-pairs``.
FAST = ["--set", "max_hands=4", "--move-time", "0.5"]
WIDE = ["--elo0", "-50", "--elo1", "50", "--alpha", "0.001", "--beta", "0.001"]
#: What must agree between two runs of one test (everything but timings and when).
COMPARED = (
    "game_id, deal, table_no, side0, side1, deal_seed, ending, winner, score0, score1, hands, "
    "strikes0, strikes1, decisions, forfeit_reason"
)
#: The summary fields that say what the test found.
VERDICT = ("result", "pairs", "decided_at", "pentanomial", "llr", "elo", "score", "points_per_hand")


def sprt(tmp: Path, out: str, concurrency: int, *extra: str) -> list[str]:
    """The command line of a test greedy (NEW) against heuristic (OLD), with bot copies only this test runs."""
    return [
        sys.executable, "-m", "arena", "sprt", "--bot", own_bot(tmp, "greedy"), "--bot", own_bot(tmp, "heuristic"),
        *FAST, *WIDE, "--seed", "processes", "--concurrency", str(concurrency), "--out", out, "--json", *extra,
    ]  # fmt: skip


def rows(out: Path) -> list[tuple]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute(f"SELECT {COMPARED} FROM games ORDER BY game_id").fetchall()


def voids(out: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute("SELECT game_id, reason FROM voids ORDER BY game_id").fetchall()


def ancestors(pid: int) -> list[int]:
    """``pid``'s parent, its parent, ... up to init (empty once ``pid`` is gone)."""
    chain = []
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return chain
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
        chain.append(pid)
    return chain


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def bots(marker: str, coordinator: int) -> dict[int, int]:
    """The bot processes of this test's bot copies: pid -> parent.

    The coordinator's command line names the bots too, and so does a child it
    forks before that child execs: neither is a bot (their argv has ``sprt``).
    """
    found = {}
    for pid, parent in live_processes(marker).items():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if pid != coordinator and b"sprt" not in argv:
            found[pid] = parent
    return found


def watch(proc: subprocess.Popen[str], marker: str, timeout: float = 240) -> tuple[int, set[int]]:
    """Until ``proc`` ends: the most table processes seen at once, and every table process seen.

    A table process is the parent of the bots it started (each seat a process
    whose command line holds ``marker``): a descendant of ``proc`` (the
    coordinator), never ``proc`` itself. (Bots whose table process was just
    killed belong to whoever adopts orphans until they are stopped: not counted.)
    """
    most, tables = 0, set()
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        parents = set(bots(marker, proc.pid).values())
        assert proc.pid not in parents, "a table runs in its own process, not the coordinator's"
        for parent in parents - tables:
            if proc.pid in ancestors(parent):
                tables.add(parent)
        most = max(most, len(parents & tables))
        time.sleep(0.02)
    return most, tables


def finish(proc: subprocess.Popen[str]) -> tuple[int, dict]:
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (0, 3, 4), err
    return proc.returncode, json.loads(out)


def no_leftovers(marker: str, pids: set[int]) -> None:
    deadline = time.monotonic() + 20
    while (live_processes(marker) or any(alive(p) for p in pids)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not live_processes(marker), "no bot is left running"
    assert not [p for p in pids if alive(p)], "no table process is left running"


def test_tables_run_in_their_own_processes_with_the_same_pairs_at_any_concurrency(tmp_path):
    marker = str(tmp_path / "bot-")
    # --concurrency 2: one pair batch at a time, its two tables in two processes.
    two = subprocess.Popen(sprt(tmp_path, "two", 2, "--max-pairs", "4", "--pairs-per-table", "2"),
                           cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    most, tables = watch(two, marker)
    code, summary = finish(two)
    assert most == 2, "both tables of a pair at the same time, each in its own process"
    assert len(tables) == 4, "two batches, two fresh table processes each"
    no_leftovers(marker, tables)

    # --concurrency 4: both batches at once, four table processes.
    four = subprocess.Popen(sprt(tmp_path, "four", 4, "--max-pairs", "4", "--pairs-per-table", "2"),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    most4, tables4 = watch(four, marker)
    code4, summary4 = finish(four)
    assert most4 >= 3, f"the tables of two batches in parallel processes (at most {most4} seen at once)"
    assert len(tables4) == 4
    no_leftovers(marker, tables4)

    assert code4 == code and summary["pairs"] == 4
    for key in VERDICT:
        assert summary4[key] == summary[key], key
    assert rows(tmp_path / "four") == rows(tmp_path / "two"), "the same games, whichever process played them"
    assert len(rows(tmp_path / "two")) == 8 and not voids(tmp_path / "two")


def test_a_killed_table_process_voids_its_game_and_the_pair_is_played_again(tmp_path):
    marker = str(tmp_path / "bot-")
    args = ("--max-pairs", "3", "--pairs-per-table", "3")
    reference = subprocess.run(sprt(tmp_path, "reference", 2, *args), cwd=tmp_path, capture_output=True,
                               text=True, timeout=240)  # fmt: skip
    assert reference.returncode in (0, 3, 4), reference.stderr
    expected = json.loads(reference.stdout)

    run = subprocess.Popen(sprt(tmp_path, "out", 2, *args), cwd=tmp_path, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        seats: dict[int, int] = {}
        while len(set(seats.values())) < 2 and time.monotonic() < deadline:
            seats = bots(marker, run.pid)
            time.sleep(0.02)
        tables = set(seats.values())
        assert len(tables) == 2 and run.pid not in tables, "the pair's two tables, each its own process"
        victim = min(tables)
        time.sleep(0.5)  # mid-game
        os.kill(victim, signal.SIGKILL)
        _, later = watch(run, marker)
    finally:
        code, summary = finish(run)
    assert code == reference.returncode
    for key in VERDICT:
        assert summary[key] == expected[key], key
    assert summary["pairs"] == 3 and sum(summary["pentanomial"]) == 3, "each pair counted once"
    assert summary["voided_games"] >= 1
    out = tmp_path / "out"
    assert rows(out) == rows(tmp_path / "reference"), "the voided game was played again: the same results"
    assert len(rows(out)) == 6, "each game stored once"
    died = voids(out)
    assert died and all("the table process died (signal 9)" in reason for _, reason in died), died
    assert len(later - tables) == 1, "only the missing table was played again, by one new table process"
    no_leftovers(marker, tables | later)
