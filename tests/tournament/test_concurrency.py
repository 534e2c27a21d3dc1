"""How many tables at a time: ``concurrency = N | "auto"``, ``--concurrency``, and resuming with another value.

"auto" counts the cores this process may use: its CPU affinity capped by its
cgroup's CPU quota (issue 23 item 5), tested on a real cgroup where this
machine lets the test make one, and on fake cgroup file systems for both
cgroup versions.

Concurrency says how a tournament is run, not what it is (the rows are the same
at any value, tests/tournament/test_table_processes.py), so the store does not
bind it: an organiser who stops a run may resume it with more tables at a time
(a bigger machine), and a store claimed before this rule still resumes.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tournament_support import arena, stored_rows

from arena.tables.cores import usable_cores
from arena.tables.settings import MAX_CONCURRENCY, parse_concurrency
from arena.tournament import ConfigError, load_config
from arena.tournament.config import tournament_hash

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"


def tournament_text(concurrency: str) -> str:
    return f"""
[tournament]
name = "cc"
seed = "concurrency"
deals_per_pairing = 1
concurrency = {concurrency}
output = "out"

[rules]
preset = "pagat"
set = {{ max_hands = 2 }}

[[entry]]
name = "greedy"
bot = "cmd:python {BOTS / 'greedy' / 'bot.py'}"

[[entry]]
name = "random"
bot = "cmd:python {BOTS / 'random' / 'bot.py'}"
"""


def write(tmp: Path, concurrency: str) -> Path:
    path = tmp / "cc.toml"
    path.write_text(tournament_text(concurrency))
    return path


def test_auto_is_one_table_per_usable_core(tmp_path):
    assert 1 <= usable_cores() <= len(os.sched_getaffinity(0))  # capped by a CPU quota, if any
    assert load_config(write(tmp_path, '"auto"')).concurrency == usable_cores()
    assert load_config(write(tmp_path, "3")).concurrency == 3
    assert load_config(write(tmp_path, '"AUTO"')).concurrency == usable_cores()
    assert parse_concurrency("7") == 7 and parse_concurrency(" auto ") == usable_cores()


@pytest.mark.parametrize(
    "value", ["0", "-2", '"many"', "2.5", "true", str(MAX_CONCURRENCY + 1), '""', '"\u00b2"', '"' + "9" * 5000 + '"']
)
def test_a_bad_concurrency_is_refused_with_one_line(tmp_path, value):
    path = write(tmp_path, value)
    with pytest.raises(ConfigError, match='concurrency must be a whole number from 1 to 4096 or "auto"'):
        load_config(path)
    result = arena(tmp_path, "tournament", "run", str(path))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "concurrency" in result.stderr and not (tmp_path / "out").exists()


def test_the_command_line_overrides_the_file_and_a_run_resumes_with_another_value(tmp_path):
    path = write(tmp_path, "1")
    first = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show", "--concurrency", "2")
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert summary["concurrency"] == 2 and summary["played"] == summary["games"] == 2
    rows = stored_rows(tmp_path / "out")

    # The file now says auto, the command line 1: same tournament, nothing left to play.
    path.write_text(tournament_text('"auto"'))
    again = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show", "-j", "1")
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    assert resumed["concurrency"] == 1 and resumed["already_done"] == 2 and resumed["played"] == 0
    assert stored_rows(tmp_path / "out") == rows

    shown = arena(tmp_path, "tournament", "run", str(path), "--no-show")
    tables = "1 table" if usable_cores() == 1 else f"{usable_cores()} tables"
    assert shown.returncode == 0 and shown.stdout.splitlines()[0] == f"results go to out ({tables} at a time)"

    for value in ("lots", "\u00b2", "0"):
        bad = arena(tmp_path, "tournament", "run", str(path), "--concurrency", value)
        assert bad.returncode == 2 and "--concurrency must be a whole number" in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1

    # What a tournament is still binds the store.
    path.write_text(tournament_text("1").replace('seed = "concurrency"', 'seed = "another"'))
    refused = arena(tmp_path, "tournament", "run", str(path))
    assert refused.returncode == 2 and "different file" in refused.stderr


def test_a_store_claimed_with_concurrency_in_its_hash_still_resumes(tmp_path):
    """Stores made before concurrency left the hash carry the older hash: the same file resumes
    (and the store is bound to today's hash)."""
    import tomllib

    path = write(tmp_path, "2")
    assert arena(tmp_path, "tournament", "run", str(path), "--no-show").returncode == 0
    older = tournament_hash(tomllib.loads(path.read_text()), run_keys=frozenset())
    db = tmp_path / "out" / "results.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'file_hash'", (older,))
    resumed = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["already_done"] == 2
    # That resume bound the store to today's hash: from now on concurrency is free to change.
    path.write_text(tournament_text("1"))
    changed = arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show")
    assert changed.returncode == 0 and json.loads(changed.stdout)["already_done"] == 2, changed.stderr


def test_sprt_auto_is_an_even_number_of_tables_from_the_cores(monkeypatch):
    from arena.sprt import config as sprt_config

    for cores, tables in [(1, 2), (2, 2), (3, 2), (8, 8), (15, 14)]:
        monkeypatch.setattr(sprt_config, "usable_cores", lambda cores=cores: cores)
        assert sprt_config.sprt_concurrency("auto") == tables
    assert sprt_config.sprt_concurrency(" 6 ") == 6
    for bad in ("x", "\u00b2", "9" * 5000):
        with pytest.raises(sprt_config.SprtConfigError, match="or auto, got"):
            sprt_config.sprt_concurrency(bad)


# ---------------------------------------------------------------- "auto" and CPU quotas


def _quota_cgroup(cpus: float) -> tuple[Path, Path] | None:
    """A real cgroup limited to ``cpus`` CPUs (v2 ``cpu.max`` where the cpu controller is on
    cgroup v2, else v1 ``cpu.cfs_quota_us``): (its directory, its procs file); None if impossible."""
    root = Path("/sys/fs/cgroup")
    name = f"arena-test-cores-{os.getpid()}"
    v2 = root / "cgroup.controllers"
    if v2.is_file() and "cpu" in (root / "cgroup.subtree_control").read_text().split():
        path = root / name
        try:
            path.mkdir()
            (path / "cpu.max").write_text(f"{int(cpus * 100_000)} 100000")
        except OSError:
            _remove_cgroup(path)
            return None
        return path, path / "cgroup.procs"
    v1 = root / "cpu"
    if (v1 / "cpu.cfs_quota_us").is_file():
        path = v1 / name
        try:
            path.mkdir()
            (path / "cpu.cfs_period_us").write_text("100000")
            (path / "cpu.cfs_quota_us").write_text(str(int(cpus * 100_000)))
        except OSError:
            _remove_cgroup(path)
            return None
        return path, path / "cgroup.procs"
    return None


def _remove_cgroup(path: Path) -> None:
    """rmdir a cgroup of this test (empty once its process has been waited for)."""
    for _ in range(50):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)


@pytest.mark.skipif(len(getattr(os, "sched_getaffinity", lambda _: ())(0)) < 2, reason="needs 2 usable CPUs")
def test_auto_counts_a_real_cgroup_cpu_quota():
    """A process in a cgroup allowed 1.5 CPUs on a machine with more gets 1 table, not one per core."""
    made = _quota_cgroup(1.5) if os.geteuid() == 0 else None
    if made is None:
        pytest.skip("cannot make a cgroup with a CPU quota here (the fake file systems below cover the parser)")
    path, procs = made
    code = (
        "import os, sys; sys.stdin.readline()\n"
        "from arena.tables.cores import usable_cores\n"  # the name the tournament and sprt use
        "print(usable_cores(), len(os.sched_getaffinity(0)))\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        procs.write_text(str(child.pid))  # into the limited cgroup before it counts
        out, _ = child.communicate("go\n", timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        _remove_cgroup(path)
    assert child.returncode == 0
    usable, affinity = map(int, out.split())
    assert affinity >= 2 and usable == 1, (usable, affinity)
    assert not path.exists()


def _fake_cgroups(tmp: Path, self_cgroup: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A cgroup file system under ``tmp/fs`` holding ``files`` and a /proc/self/cgroup of ``self_cgroup``."""
    root = tmp / "fs"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    proc = tmp / "cgroup"
    proc.write_text(self_cgroup)
    return root, proc


@pytest.mark.parametrize(
    ("self_cgroup", "files", "quota"),
    [
        # cgroup v2 alone: the job's quota (1.5 CPUs) is on the parent, the leaf says "max".
        ("0::/ci/job\n", {"cgroup.controllers": "cpu io", "ci/cpu.max": "150000 100000", "ci/job/cpu.max": "max 100000"}, 1.5),
        # v2 beside v1 (hybrid): mounted at unified/; the smallest limit on the way up wins.
        ("0::/a/b\n", {"unified/cgroup.controllers": "cpu", "unified/a/cpu.max": "400000 100000",
                       "unified/a/b/cpu.max": "50000 100000"}, 0.5),
        # cgroup v1, a container without a cgroup namespace: it lists its host path, but its own
        # cgroup is mounted as the root (docker run --cpus 2).
        ("12:pids:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n",
         {"cpu,cpuacct/cpu.cfs_quota_us": "200000", "cpu,cpuacct/cpu.cfs_period_us": "100000"}, 2.0),
        # v1 with the path visible, a quota on the leaf.
        ("3:cpu:/slice/unit\n", {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000",
                                  "cpu/slice/unit/cpu.cfs_quota_us": "250000",
                                  "cpu/slice/unit/cpu.cfs_period_us": "100000"}, 2.5),
        # No quota anywhere, or nothing readable.
        ("0::/x\n", {"cgroup.controllers": "cpu", "x/cpu.max": "max 100000"}, None),
        ("3:cpu:/\n", {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, None),
        ("0::/x\n", {"cgroup.controllers": "cpu", "x/cpu.max": "lots of\n"}, None),
        ("garbage\n", {}, None),
    ],
)
def test_the_cpu_quota_is_read_from_either_cgroup_version(tmp_path, self_cgroup, files, quota):
    from arena.tables import cores

    root, proc = _fake_cgroups(tmp_path, self_cgroup, files)
    assert cores.cpu_quota(root, proc) == quota
    affinity = cores.affinity_cores()
    expected = affinity if quota is None else min(affinity, max(1, math.floor(quota)))
    assert cores.usable_cores(root, proc) == expected
    assert cores.cpu_quota(root, tmp_path / "no-such-file") is None


def test_a_quota_below_one_cpu_still_gives_one_table_and_a_large_one_the_affinity(tmp_path):
    from arena.tables import cores

    small = _fake_cgroups(tmp_path / "s", "0::/j\n", {"cgroup.controllers": "cpu", "j/cpu.max": "10000 100000"})
    assert cores.usable_cores(*small) == 1
    large = _fake_cgroups(tmp_path / "l", "0::/j\n", {"cgroup.controllers": "cpu", "j/cpu.max": "6400000 100000"})
    assert cores.usable_cores(*large) == cores.affinity_cores()
