"""``arena sprt`` end to end with real bot processes: verdicts, resume after SIGKILL and Ctrl-C, refusals."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"


def bot(name: str) -> str:
    return f"cmd:{sys.executable} {BOTS / name / 'bot.py'}"


#: Short games and a quick clock keep every run in seconds.
FAST = ["--set", "max_hands=4", "--move-time", "0.5"]


def sprt_args(new: str, old: str, *extra: str, out: str = "out") -> list[str]:
    return [
        sys.executable,
        "-m",
        "arena",
        "sprt",
        "--bot",
        bot(new),
        "--bot",
        bot(old),
        *FAST,
        "--out",
        out,
        *extra,
    ]


def arena(cwd: Path, args: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )


def games(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT game_id, deal, table_no, side0, side1, deal_seed, ending, winner, score0, score1, hands "
            "FROM games ORDER BY game_id"
        ).fetchall()


def count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return len(games(db))
    except sqlite3.Error:
        return 0


def test_heuristic_against_random_accepts_h1_in_few_pairs(tmp_path):
    result = arena(tmp_path, sprt_args("heuristic", "random", "--elo0", "0", "--elo1", "200", "--seed", "h1",
                                       "--max-pairs", "40", "--json"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["result"] == "H1" and summary["exit_code"] == 0
    assert summary["pairs"] <= 16, summary["pairs"]
    assert summary["llr"] >= summary["upper"]
    assert summary["elo_model"] == "logistic" and summary["settings"]["elo1"] == 200
    assert summary["points_per_hand"]["value"] > 0
    assert sum(summary["pentanomial"]) == summary["pairs"]

    rows = games(tmp_path / "out" / "results.sqlite")
    by_pair: dict[int, list[tuple]] = {}
    for row in rows:
        by_pair.setdefault(row[1], []).append(row)
    complete = [p for p in by_pair.values() if len(p) == 2]
    assert len(complete) >= summary["pairs"]
    for t1, t2 in complete:
        assert (t1[2], t2[2]) == (1, 2)
        assert t1[5] == t2[5], "the same deal at both tables"
        assert (t1[3], t1[4]) == ("heuristic", "random") and (t2[3], t2[4]) == (
            "random",
            "heuristic",
        )
    # Each batch's two tables ran their own bots: separate log directories, four seats each.
    logs = sorted(p.name for p in (tmp_path / "out" / "logs").iterdir())
    assert logs and all(name.endswith(("-t1", "-t2")) for name in logs)
    for name in logs:
        assert len(list((tmp_path / "out" / "logs" / name).glob("seat*.log"))) == 4
    assert len(list((tmp_path / "out" / "records").glob("*.json"))) == len(rows)

    # The directory is a results store like a tournament's: the ratings commands read it.
    shown = arena(tmp_path, [sys.executable, "-m", "arena", "ratings", "show", "out", "--json"])
    assert shown.returncode == 0, shown.stderr
    entries = {e["name"]: e for e in json.loads(shown.stdout)["entries"]}
    assert entries["heuristic"]["rank"] == 1
    assert entries["heuristic"]["pairs"]["pentanomial"] == summary["pentanomial"], (
        "one count, two readers"
    )
    assert entries["heuristic"]["pairs"]["points_per_hand"] == summary["points_per_hand"]

    # Run again: the stored test is reported, nothing is played.
    again = arena(
        tmp_path, sprt_args("heuristic", "random", "--elo0", "0", "--elo1", "200", "--json")
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["resumed_pairs"] == summary["pairs"]
    assert games(tmp_path / "out" / "results.sqlite") == rows


def test_a_bot_against_a_copy_of_itself_never_accepts_h1(tmp_path):
    result = arena(tmp_path, sprt_args("random", "random", "--elo0", "0", "--elo1", "200", "--seed", "self",
                                       "--max-pairs", "8", "--json"))  # fmt: skip
    summary = json.loads(result.stdout)
    assert summary["result"] in ("H0", "inconclusive"), summary
    assert result.returncode == {"H0": 3, "inconclusive": 4}[summary["result"]]
    assert (summary["new"], summary["old"]) == ("random (new)", "random (old)")
    assert summary["elo"]["lower"] <= 0 <= summary["elo"]["upper"]


def test_a_builtin_bot_against_itself_with_a_close_elo1_never_accepts_h1(tmp_path):
    """Built-in tiers are bot specs for sprt too; with a realistic elo1 (30) and more pairs
    the same bot under two names still must not be found stronger."""
    args = sprt_args("random", "random", "--elo0", "0", "--elo1", "30", "--seed", "self-easy",
                     "--max-pairs", "16", "--concurrency", "4", "--json")  # fmt: skip
    args[args.index("--bot") + 1] = args[args.index("--bot", args.index("--bot") + 1) + 1] = "builtin:easy"
    result = arena(tmp_path, args)
    summary = json.loads(result.stdout)
    assert summary["result"] in ("H0", "inconclusive"), summary
    assert summary["pairs"] >= 1 and sum(summary["pentanomial"]) == summary["pairs"]
    assert (summary["new"], summary["old"]) == ("builtin-easy (new)", "builtin-easy (old)")


def test_text_output_shows_the_test_and_its_verdict(tmp_path):
    result = arena(
        tmp_path, sprt_args("random", "random", "--elo0", "0", "--elo1", "100", "--max-pairs", "2")
    )
    assert result.returncode in (3, 4), result.stderr
    out = result.stdout
    for text in (
        "pentanomial",
        "LLR",
        "Elo",
        "pts/table-hand",
        "logistic",
        "H0: elo <= +0",
        "H1: elo >= +100",
    ):
        assert text in out, text
    assert "inconclusive" in out or "H0 accepted" in out


def test_killed_run_resumes_with_no_pair_lost_or_counted_twice(tmp_path):
    # Bounds far apart (alpha = beta = 0.001) and a pair cap: the test runs its 6 pairs.
    args = ["--elo0", "-50", "--elo1", "50", "--alpha", "0.001", "--beta", "0.001", "--max-pairs", "6",
            "--seed", "kill", "--pairs-per-table", "3", "--json"]  # fmt: skip
    straight = tmp_path / "straight"
    straight.mkdir()
    done = arena(straight, sprt_args("greedy", "heuristic", *args))
    assert done.returncode in (0, 3, 4), done.stderr
    expected = json.loads(done.stdout)
    expected_rows = games(straight / "out" / "results.sqlite")

    resumed = tmp_path / "resumed"
    resumed.mkdir()
    proc = subprocess.Popen(sprt_args("greedy", "heuristic", *args), cwd=resumed,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    db = resumed / "out" / "results.sqlite"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not 3 <= count(db) < len(expected_rows):
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no cleanup at all
    proc.wait(timeout=30)
    partial = games(db)
    assert 3 <= len(partial) < len(expected_rows), "killed mid-way"
    complete_before = len({r[1] for r in partial if sum(1 for s in partial if s[1] == r[1]) == 2})

    again = arena(resumed, sprt_args("greedy", "heuristic", *args))
    assert again.returncode == done.returncode, again.stderr
    summary = json.loads(again.stdout)
    assert summary["resumed_pairs"] == complete_before
    for key in ("result", "pairs", "decided_at", "pentanomial", "llr", "elo", "points_per_hand"):
        assert summary[key] == expected[key], key
    rows = games(db)
    assert [r for r in rows if r in partial] == partial, "nothing stored was changed"
    assert rows == expected_rows, "the same games, each once"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_ctrl_c_stops_cleanly_and_resumes(tmp_path):
    args = sprt_args("random", "random", "--elo0", "0", "--elo1", "50", "--alpha", "0.001", "--beta", "0.001",
                     "--max-pairs", "6", "--pairs-per-table", "3", "--json")  # fmt: skip
    proc = subprocess.Popen(
        args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    db = tmp_path / "out" / "results.sqlite"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and count(db) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    summary = json.loads(out)
    assert summary["result"] == "interrupted" and summary["interrupted"] is True
    assert summary["pairs"] < 6
    # No bot of the stopped run is left running.
    leftovers = subprocess.run(
        ["pgrep", "-f", str(BOTS / "random" / "bot.py")], capture_output=True, text=True
    )
    mine = [pid for pid in leftovers.stdout.split() if _child_of_dir(int(pid), tmp_path)]
    assert not mine, mine

    again = arena(tmp_path, args)
    assert again.returncode in (3, 4), again.stderr
    final = json.loads(again.stdout)
    assert final["resumed_pairs"] == summary["pairs"]
    assert final["result"] == "H0" or final["pairs"] == 6
    rows = games(db)
    by_pair: dict[int, int] = {}
    for r in rows:
        by_pair[r[1]] = by_pair.get(r[1], 0) + 1
    assert sum(1 for n in by_pair.values() if n == 2) >= final["pairs"]


def _child_of_dir(pid: int, directory: Path) -> bool:
    """Whether process ``pid`` runs in ``directory`` (a bot this test's run started)."""
    try:
        return Path(f"/proc/{pid}/cwd").resolve() == directory.resolve()
    except OSError:
        return False


def test_a_changed_command_line_is_refused_for_the_same_out(tmp_path):
    first = arena(tmp_path, sprt_args("random", "greedy", "--elo0", "0", "--elo1", "100", "--max-pairs", "1",
                                      "--seed", "s1", "--json"))  # fmt: skip
    assert first.returncode in (0, 3, 4), first.stderr
    before = games(tmp_path / "out" / "results.sqlite")
    out = str(tmp_path / "out")
    for change in (
        ["--elo1", "150"],
        ["--seed", "other"],
        ["--move-time", "0.7"],
        ["--set", "max_hands=5"],
    ):
        args = sprt_args("random", "greedy", "--elo0", "0", "--elo1", "100", "--max-pairs", "1", "--seed", "s1",
                         out=out)[3:]  # fmt: skip
        args[args.index(change[0]) + 1] = change[1]
        refused = CliRunner().invoke(app, args)  # in-process: the refusal comes before any game
        assert refused.exit_code == 2, refused.stderr
        assert refused.stderr.count("\n") == 1 and change[0] in refused.stderr, refused.stderr
        assert "different test" in refused.stderr
    swapped = CliRunner().invoke(
        app, sprt_args("greedy", "random", "--elo0", "0", "--elo1", "100", out=out)[3:]
    )
    assert swapped.exit_code == 2 and "--bot NEW" in swapped.stderr
    assert games(tmp_path / "out" / "results.sqlite") == before, "nothing was touched"
    # Without --seed the stored seed is used, and a larger --max-pairs extends the test.
    more = arena(
        tmp_path,
        sprt_args("random", "greedy", "--elo0", "0", "--elo1", "100", "--max-pairs", "2", "--json"),
    )
    assert more.returncode in (0, 3, 4), more.stderr
    assert json.loads(more.stdout)["seed"] == "s1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bot", "cmd:x", "--elo0", "0", "--elo1", "5"], "--bot must be given twice"),
        (
            ["--bot", "cmd:x", "--bot", "cmd:y", "--elo0", "5", "--elo1", "5"],
            "elo0 must be below elo1",
        ),
        (
            ["--bot", "cmd:x", "--bot", "cmd:y", "--elo0", "0", "--elo1", "5", "--alpha", "0.6"],
            "alpha must be",
        ),
        (
            [
                "--bot",
                "cmd:x",
                "--bot",
                "cmd:y",
                "--elo0",
                "0",
                "--elo1",
                "5",
                "--concurrency",
                "3",
            ],
            "even number",
        ),
        (
            ["--bot", "cmd:x", "--bot", "cmd:y", "--elo0", "0", "--elo1", "5", "--max-pairs", "0"],
            "--max-pairs",
        ),
        (
            ["--bot", "ftp:x", "--bot", "cmd:y", "--elo0", "0", "--elo1", "5"],
            "must start with cmd:",
        ),
        (
            ["--bot", "cmd:x", "--bot", "cmd:y", "--elo0", "0", "--elo1", "5", "--set", "target=0"],
            "target=0",
        ),
        (
            ["--bot", "cmd:x", "--bot", "cmd:y", "--elo0", "0", "--elo1", "5", "--move-time", "0"],
            "move time",
        ),
        (
            [
                "--bot",
                "docker:arena-no-such-image:0",
                "--bot",
                "cmd:y",
                "--elo0",
                "0",
                "--elo1",
                "5",
            ],
            "arena-no-such-image:0",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, message):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["sprt", *args, "--out", str(out)])  # in-process: fast
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert not out.exists(), "nothing starts on bad input"


def test_a_tournament_directory_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('file_hash', 'abc'), ('name', 't')")
    result = arena(
        tmp_path, sprt_args("random", "greedy", "--elo0", "0", "--elo1", "100", "--seed", "x")
    )
    assert result.returncode == 2 and "holds a tournament" in result.stderr, result.stderr
