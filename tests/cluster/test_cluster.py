"""Tournaments on a real Dask cluster (scheduler and workers as separate processes on 127.0.0.1).

Each must store the same rows as the same file run locally; a worker killed
mid-table has its table replayed elsewhere (one row per game); a worker
without an entry's image passes the table on (alone: the run stops; next to
one that has it: the other plays it, one line says so); a scheduler that is
down at start or lost mid-run stops the run cleanly, and running again
resumes; a local run stopped part-way resumes on the cluster; the
``--scheduler`` flag wins over the file's ``[cluster] scheduler``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena_sdk.client import DEFAULT_CONNECT_TIMEOUT_S
from docker_support import BASE_IMAGE, engine_or_skip
from tournament_support import arena, free_port, live_processes, own_bot, stored_rows

DOCKER_BOTS = Path(__file__).resolve().parents[2] / "example_bots"
#: The columns that must agree between runs (not timings, not when).
DOCKER_BOT = "arena-exec-cluster-random:test"


def tournament(tmp: Path, entries: dict[str, str], *, deals: int, max_hands: int = 3, move: float = 1.0) -> Path:
    lines = [
        "[tournament]", 'name = "c"', 'seed = "cluster"', f"deals_per_pairing = {deals}", "concurrency = 2",
        'output = "out"', "", "[rules]", 'preset = "pagat"', f"set = {{ max_hands = {max_hands} }}", "",
        "[time]", f"move = {move}",
    ]  # fmt: skip
    for name, bot in entries.items():
        lines += ["", "[[entry]]", f'name = "{name}"', f'bot = "{bot}"']
    path = tmp / "c.toml"
    path.write_text("\n".join(lines) + "\n")
    return path










def local_then_on_the_cluster(tmp: Path, path: Path, address: str) -> subprocess.Popen[str]:
    """Play ``path`` locally into ``local`` (the reference), then start it on the cluster into ``remote``."""
    reference = arena(tmp, "tournament", "run", str(path), "--no-show", "--out", "local")
    assert reference.returncode == 0, reference.stderr
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--no-show", "--out", "remote",
         "--scheduler", address],
        cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_local_process_tournament_on_the_cluster_stores_the_local_rows(cluster, tmp_path):
    path = tournament(tmp_path, {"random": own_bot(tmp_path, "random"), "greedy": own_bot(tmp_path, "greedy")}, deals=2)
    local = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "local")
    assert local.returncode == 0, local.stderr
    remote = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "remote", "--scheduler", cluster.address)
    assert remote.returncode == 0, remote.stderr
    assert f"on the cluster at {cluster.address}" in remote.stdout
    assert stored_rows(tmp_path / "remote") == stored_rows(tmp_path / "local")
    assert len(stored_rows(tmp_path / "local")) == 4
    assert sorted(p.name for p in (tmp_path / "remote" / "records").iterdir()) == sorted(
        p.name for p in (tmp_path / "local" / "records").iterdir()
    )
    logs = list((tmp_path / "remote" / "logs").rglob("*-seat*.log"))  # named <entry>-seat<N>.log
    assert len(logs) == 8, "every seat's log comes back from the worker"


def test_a_worker_killed_mid_table_has_its_table_replayed_elsewhere(cluster, tmp_path):
    bot = own_bot(tmp_path, "random")
    path = tournament(tmp_path, {"a": bot, "b": bot}, deals=6, max_hands=4)
    run = local_then_on_the_cluster(tmp_path, path, cluster.address)
    try:
        victim = None
        with cluster.client() as client:
            deadline = time.monotonic() + 120
            while victim is None and time.monotonic() < deadline:
                for worker, keys in client.processing().items():
                    if any(str(k).startswith("table-") for k in keys):
                        victim = client.scheduler_info()["workers"][worker]["name"]
                        break
                time.sleep(0.2)
        assert victim is not None, "no table started on the cluster"
        time.sleep(1.0)  # mid-table: its bots are playing
        cluster.workers[victim].send_signal(signal.SIGKILL)
        out, err = run.communicate(timeout=240)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    got = stored_rows(tmp_path / "remote")
    assert got == stored_rows(tmp_path / "local"), "the replayed table gives the same games, one row each"
    with sqlite3.connect(tmp_path / "remote" / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT game_id) FROM games").fetchone() == (12, 12)
    # The killed worker's bots see their referee gone and end; one started just before the
    # kill waits for its referee up to the SDK's connect timeout, then gives up by itself.
    deadline = time.monotonic() + DEFAULT_CONNECT_TIMEOUT_S + 30
    while live_processes(str(tmp_path / "bot-random")) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not live_processes(str(tmp_path / "bot-random"))


def test_a_tls_cluster_plays_the_tournament(tls_cluster, tmp_path):
    path = tournament(tmp_path, {"a": own_bot(tmp_path, "random"), "b": own_bot(tmp_path, "greedy")}, deals=1)
    plain = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "plain",
                  "--scheduler", tls_cluster.address.replace("tls://", "tcp://"), timeout=120)  # fmt: skip
    assert plain.returncode == 2, "the TLS scheduler does not talk plain TCP"
    result = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--no-show", "--scheduler", tls_cluster.address],
        cwd=tmp_path, capture_output=True, text=True, timeout=240, env={**os.environ, **tls_cluster.tls_env()},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len(stored_rows(tmp_path / "out")) == 2


def test_scheduler_down_at_start_is_one_line_and_nothing_is_stored(tmp_path):

    path = tournament(tmp_path, {"a": own_bot(tmp_path, "random"), "b": own_bot(tmp_path, "greedy")}, deals=1)
    result = arena(tmp_path, "tournament", "run", str(path), "--scheduler", f"tcp://127.0.0.1:{free_port()}")
    assert result.returncode == 2
    assert "no Dask scheduler answers at tcp://127.0.0.1:" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "out").exists()


def test_a_public_plain_tcp_scheduler_is_refused(tmp_path):
    path = tournament(tmp_path, {"a": own_bot(tmp_path, "random"), "b": own_bot(tmp_path, "greedy")}, deals=1)
    result = arena(tmp_path, "tournament", "run", str(path), "--scheduler", "tcp://8.8.8.8:8786")
    assert result.returncode == 2 and "is public" in result.stderr and "tls://" in result.stderr
    assert not (tmp_path / "out").exists()


def test_scheduler_lost_mid_run_stops_cleanly_and_the_run_resumes(cluster, tmp_path):
    bot = own_bot(tmp_path, "random")
    path = tournament(tmp_path, {"a": bot, "b": bot, "c": bot}, deals=3, max_hands=3)
    run = local_then_on_the_cluster(tmp_path, path, cluster.address)
    try:
        db = tmp_path / "remote" / "results.sqlite"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # some tables stored, others still to play
            if db.exists():
                with sqlite3.connect(db) as conn, contextlib.suppress(sqlite3.OperationalError):
                    # (the file is made before its tables: a read in between finds none)
                    if conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] >= 3:
                        break
            time.sleep(0.2)
        assert cluster.scheduler is not None
        cluster.scheduler.send_signal(signal.SIGKILL)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 2, err
    assert "lost the Dask scheduler" in err and "run again to resume" in err
    stored = stored_rows(tmp_path / "remote")
    assert 3 <= len(stored) < 18
    again = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "remote")
    assert again.returncode == 0, again.stderr
    assert stored_rows(tmp_path / "remote") == stored_rows(tmp_path / "local")


@pytest.fixture(scope="module")
def docker_bot(tmp_path_factory: pytest.TempPathFactory) -> str:
    from arena.sandbox.build import build_image

    engine = engine_or_skip("cluster Docker tests")
    build_image(DOCKER_BOTS / "random", tag=DOCKER_BOT, base_image=BASE_IMAGE, client=engine)
    return f"docker:{DOCKER_BOT}"


@pytest.mark.docker
def test_docker_tournament_on_the_cluster_stores_the_local_rows(docker_bot, cluster, tmp_path):
    path = tournament(tmp_path, {"r1": docker_bot, "r2": docker_bot}, deals=2)
    local = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "local")
    assert local.returncode == 0, local.stderr
    remote = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "remote", "--scheduler", cluster.address)
    assert remote.returncode == 0, remote.stderr
    assert stored_rows(tmp_path / "remote") == stored_rows(tmp_path / "local") and len(stored_rows(tmp_path / "local")) == 4
    with sqlite3.connect(tmp_path / "remote" / "results.sqlite") as db:
        images = {r[0] for r in db.execute("SELECT image0 FROM games")}
    assert len(images) == 1 and next(iter(images)).startswith("sha256:")


@pytest.mark.docker
def test_a_worker_without_the_image_passes_the_table_on(docker_bot, bare_cluster, tmp_path):
    # This worker's Docker engine is not there: it lacks every image (as a machine
    # whose engine has another image under the tag does; see test_table_task.py).
    bare_cluster.start_worker("blind", env={"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"})
    bare_cluster.wait_for_workers(1)
    path = tournament(tmp_path, {"r1": docker_bot, "r2": docker_bot}, deals=1)
    alone = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--scheduler", bare_cluster.address)
    assert alone.returncode == 2
    lines = alone.stderr.strip().splitlines()
    assert len(lines) == 1 and "no worker can play entry 'r1'" in lines[0] and "tcp://127.0.0.1:" in lines[0], alone.stderr
    assert stored_rows(tmp_path / "out") == [], "nothing played"
    bare_cluster.start_worker("seeing")
    bare_cluster.wait_for_workers(2)
    again = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--scheduler", bare_cluster.address)
    assert again.returncode == 0, again.stderr
    assert len(stored_rows(tmp_path / "out")) == 2


@pytest.mark.docker
def test_a_blind_worker_passes_a_table_on_to_a_seeing_one_within_one_run(docker_bot, bare_cluster, tmp_path):
    # Both workers are up from the start. The blind one's DOCKER_HOST is a socket this test
    # holds: no engine answers there, and its accept() proves the worker was asked to play
    # a table. Until then it has the only table slot, so the first table can go nowhere else;
    # the seeing worker gets its slot while the blind one waits for its engine, so the
    # table has somewhere to go when the blind worker gives it back.
    engine_dir = Path(tempfile.mkdtemp(prefix="arena-eng-", dir="/tmp"))  # AF_UNIX paths are short
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    run = None
    try:
        listener.bind(str(engine_dir / "docker.sock"))
        listener.listen(4)
        bare_cluster.start_worker("blind", env={"DOCKER_HOST": f"unix://{engine_dir}/docker.sock"})
        bare_cluster.start_worker("seeing", tables=0)
        bare_cluster.wait_for_workers(2)
        blind = bare_cluster.address_of("blind")
        path = tournament(tmp_path, {"r1": docker_bot, "r2": docker_bot}, deals=2)
        run = subprocess.Popen(
            [sys.executable, "-m", "arena", "tournament", "run", str(path), "--no-show",
             "--scheduler", bare_cluster.address],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "COLUMNS": "400"},
        )  # fmt: skip
        listener.settimeout(180)
        asked, _ = listener.accept()  # the blind worker looks for its engine: it holds a table
        bare_cluster.give_slots("seeing", 1)
        asked.close()  # ... and finds none
        listener.close()
        out, err = run.communicate(timeout=300)
    finally:
        if run is not None and run.poll() is None:
            run.kill()
            run.wait()
        listener.close()
        shutil.rmtree(engine_dir, ignore_errors=True)
    assert run.returncode == 0, err
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT game_id) FROM games").fetchone() == (4, 4)
        assert db.execute("SELECT COUNT(*) FROM voids").fetchone() == (0,), "passing a table on voids nothing"
        endings = {r[0] for r in db.execute("SELECT ending FROM games")}
    assert not any(e.startswith(("void", "forfeit")) for e in endings), endings
    passed = [line for line in err.splitlines() if "passed on to another worker" in line]
    assert passed, err
    # One line per worker and entry, however many of its tables the blind worker gave back.
    said = [(line.split()[1], line.split(" of entry ")[1].split(":")[0]) for line in passed]
    assert len(said) == len(set(said)), passed
    first = passed[0]
    assert first.startswith(f"worker {blind} lacks image sha256:"), first
    assert f"({DOCKER_BOT}) of entry 'r" in first and "no Docker engine here" in first, first
    assert {worker for worker, _ in said} == {blind}, "only the blind worker passes tables on"
    assert all("\x1b" not in line for line in passed), "plain text on the terminal"


def test_a_worker_and_entry_are_reported_once_and_the_line_prints_literally(capsys):
    from arena.tables.cluster import ClusterTables, print_notice
    from arena.match import TimeControl
    from arena.sandbox.docker import ContainerLimits
    from arena.tables.spec import SeatSpec, TableSpec
    from arena_sdk.engine import resolve_ruleset

    said: list[str] = []
    tables = ClusterTables(None, "tcp://127.0.0.1:8786", notice=said.append)
    seats = tuple(SeatSpec(e, "docker", "bot:1", (), "sha256:" + "ab" * 32) for e in ("r1", "r2", "r1", "r2"))
    spec = TableSpec(
        "p000-t1", "c/p000-t1", "run", resolve_ruleset("pagat", {}), ("g",), ("s",), TimeControl(),
        ContainerLimits(), 5.0, seats,
    )  # fmt: skip
    for worker, entry in [("tcp://w1", "r1"), ("tcp://w1", "r1"), ("tcp://w1", "r2"), ("tcp://w2", "r1")]:
        tables._report_passed_on(spec, worker, entry, "no Docker engine here")
    assert said == [
        f"worker tcp://w1 lacks image sha256:{'ab' * 6} (bot:1) of entry 'r1': no Docker engine here; "
        "table p000-t1 passed on to another worker",
        f"worker tcp://w1 lacks image sha256:{'ab' * 6} (bot:1) of entry 'r2': no Docker engine here; "
        "table p000-t1 passed on to another worker",
        f"worker tcp://w2 lacks image sha256:{'ab' * 6} (bot:1) of entry 'r1': no Docker engine here; "
        "table p000-t1 passed on to another worker",
    ]
    # A worker's error text and an entry's name are not the organiser's: markup and escapes print as text.
    print_notice("worker tcp://w1 lacks image of entry '[bold]x[/]\x1b[2J': gone\nfake line")
    err = capsys.readouterr().err
    assert err == "worker tcp://w1 lacks image of entry '[bold]x[/]': gone fake line\n"


def test_the_scheduler_flag_wins_over_the_file(cluster, tmp_path):
    dead = f"tcp://127.0.0.1:{free_port()}"
    path = tournament(tmp_path, {"a": own_bot(tmp_path, "random"), "b": own_bot(tmp_path, "greedy")}, deals=1)
    path.write_text(path.read_text() + f'\n[cluster]\nscheduler = "{dead}"\n')
    alone = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "file")
    assert alone.returncode == 2 and f"no Dask scheduler answers at {dead}" in alone.stderr, "the file's key is read"
    assert not (tmp_path / "file").exists()
    flagged = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--scheduler", cluster.address)
    assert flagged.returncode == 0, flagged.stderr
    assert f"on the cluster at {cluster.address}" in flagged.stdout
    assert dead not in flagged.stdout + flagged.stderr
    assert len(stored_rows(tmp_path / "out")) == 2


def test_a_local_run_stopped_part_way_resumes_on_the_cluster_to_the_local_results(cluster, tmp_path):
    bot = own_bot(tmp_path, "random")
    path = tournament(tmp_path, {"a": bot, "b": bot, "c": bot}, deals=3, max_hands=3)
    reference = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "local")
    assert reference.returncode == 0, reference.stderr
    expected = stored_rows(tmp_path / "local")
    assert len(expected) == 18
    started = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--no-show", "--out", "moved"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        db = tmp_path / "moved" / "results.sqlite"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # some games stored locally, most still to play
            if db.exists():
                with sqlite3.connect(db) as conn, contextlib.suppress(sqlite3.OperationalError):
                    # (the file is made before its tables: a read in between finds none)
                    if conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] >= 3:
                        break
            time.sleep(0.05)
        started.send_signal(signal.SIGINT)  # Ctrl-C
        out, err = started.communicate(timeout=120)
    finally:
        if started.poll() is None:
            started.kill()
            started.wait()
    assert started.returncode == 130, err
    partial = stored_rows(tmp_path / "moved")
    assert 3 <= len(partial) < 18, "stopped part-way"
    resumed = arena(tmp_path, "tournament", "run", str(path), "--no-show", "--out", "moved", "--scheduler", cluster.address)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {len(partial)} of 18 games already played" in resumed.stdout
    assert f"on the cluster at {cluster.address}" in resumed.stdout
    assert stored_rows(tmp_path / "moved") == expected, "the same games as one local run, none twice"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT game_id) FROM games").fetchone() == (18, 18)
    assert sorted(p.name for p in (tmp_path / "moved" / "records").iterdir()) == sorted(
        p.name for p in (tmp_path / "local" / "records").iterdir()
    )
