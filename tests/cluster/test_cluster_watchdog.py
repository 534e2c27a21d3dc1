"""No table waits forever on a cluster, and no scheduler is reached without authentication (issue 23, items 1 and 4).

The hang: tables were submitted pinned to the worker addresses known at that
moment; a worker restarted by its nanny comes back on a new port, the task
waits in Dask's ``no-worker`` state and the coordinator waited with it.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tournament_support import arena, own_bot

from arena.tables.cluster import ClusterError, check_address

HERE = Path(__file__).resolve().parent


def _tournament(tmp: Path, bot_a: str, bot_b: str) -> Path:
    path = tmp / "c.toml"
    path.write_text(
        "[tournament]\nname = \"w\"\nseed = \"watchdog\"\ndeals_per_pairing = 1\nconcurrency = 1\noutput = \"out\"\n\n"
        "[rules]\npreset = \"pagat\"\nset = { max_hands = 1 }\n\n"
        f"[[entry]]\nname = \"killer\"\nbot = \"{bot_a}\"\n\n[[entry]]\nname = \"random\"\nbot = \"{bot_b}\"\n"
    )
    return path


def test_a_worker_restarted_by_its_nanny_plays_the_table_again(bare_cluster, tmp_path):
    """The table's own bot kills its worker once; the nanny brings it back on a new port and the table is played."""
    bare_cluster.start_worker("only", tables=1, nanny=True)
    bare_cluster.wait_for_workers(1)
    before = bare_cluster.address_of("only")
    killer = f"cmd:{sys.executable} {HERE / 'bots' / 'kills_its_worker.py'} {tmp_path / 'killed-once'}"
    path = _tournament(tmp_path, killer, own_bot(tmp_path, "random"))
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--no-show", "--scheduler", bare_cluster.address],
        cwd=tmp_path, capture_output=True, text=True, timeout=420,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "killed-once").exists(), "the bot killed its worker"
    assert bare_cluster.address_of("only") != before, "the nanny restarted the worker on another address"
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone() == (2,)
    assert time.monotonic() - started < 400


def test_plain_tcp_on_a_private_network_needs_insecure(tmp_path):
    """Checked before anything connects: nothing is sent to the private address."""
    with pytest.raises(ClusterError, match="--insecure"):
        check_address("tcp://10.11.12.13:8786")
    assert check_address("tcp://10.11.12.13:8786", insecure=True) == "tcp://10.11.12.13:8786"
    assert check_address("tcp://127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    with pytest.raises(ClusterError, match="public"):
        check_address("tcp://8.8.8.8:8786", insecure=True)
    path = _tournament(tmp_path, own_bot(tmp_path, "random"), own_bot(tmp_path, "greedy"))
    refused = arena(tmp_path, "tournament", "run", str(path), "--scheduler", "tcp://192.168.77.77:8786")
    assert refused.returncode == 2 and "--insecure" in refused.stderr and "tls://" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert not (tmp_path / "out").exists()


def test_tls_without_a_client_certificate_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT", raising=False)
    monkeypatch.delenv("DASK_DISTRIBUTED__COMM__TLS__CA_FILE", raising=False)
    path = _tournament(tmp_path, own_bot(tmp_path, "random"), own_bot(tmp_path, "greedy"))
    refused = arena(tmp_path, "tournament", "run", str(path), "--scheduler", "tls://127.0.0.1:1")
    assert refused.returncode == 2 and "mutual TLS" in refused.stderr, refused.stderr
    assert not (tmp_path / "out").exists()


class _JustKilledScheduler:
    """A Dask client whose scheduler was just SIGKILLed: its cached info lists no worker, and it is closing."""

    def __init__(self, status: str) -> None:
        self.status = status
        self.submitted = 0

    def scheduler_info(self, n_workers: int = -1) -> dict:
        return {"workers": {}}

    def submit(self, *args: object, **kwargs: object) -> object:
        self.submitted += 1
        raise OSError("Client is closed")


@pytest.mark.parametrize("status", ["closed", "connecting"])
def test_a_scheduler_killed_mid_run_is_said_lost_not_no_worker_for_no_entry(status):
    """The finding (a full run): SIGKILL of the scheduler ended a run with "no worker can play entry : " (no entry)."""
    import threading

    import trio

    from arena.tables.cluster import ClusterTables
    from arena.tables.players import RunStopped

    client = _JustKilledScheduler(status)
    tables = ClusterTables(client, "tcp://127.0.0.1:8786", notice=lambda line: None)
    with pytest.raises(RunStopped) as stopped:
        trio.run(tables.play, object(), lambda game: None, threading.Event())
    assert "lost the Dask scheduler" in str(stopped.value) and "run again to resume" in str(stopped.value)
    assert "no worker can play" not in str(stopped.value)
