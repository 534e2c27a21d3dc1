"""A real Dask cluster on 127.0.0.1: a ``dask scheduler`` and ``dask worker`` processes (separate OS processes)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from tournament_support import free_port

pytest.importorskip("distributed", reason="the cluster tests need Dask distributed (pip install -e '.[cluster]')")

DASK = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
WORKER = [sys.executable, "-m", "distributed.cli.dask_worker"]


class Cluster:
    """A scheduler and its workers, each its own process; everything is stopped at the end."""

    def __init__(self, log_dir: Path, tls: tuple[Path, Path] | None = None) -> None:
        self.log_dir = log_dir
        self.port = free_port()
        #: (certificate, key): the certificate is also the CA (self-signed for 127.0.0.1).
        self.tls = tls
        self.address = f"{'tls' if tls else 'tcp'}://127.0.0.1:{self.port}"
        self.scheduler: subprocess.Popen[bytes] | None = None
        self.workers: dict[str, subprocess.Popen[bytes]] = {}

    def _spawn(self, argv: list[str], name: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = (self.log_dir / f"{name}.log").open("wb")
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})

    def tls_args(self) -> list[str]:
        if self.tls is None:
            return []
        cert, key = self.tls
        return ["--tls-ca-file", str(cert), "--tls-cert", str(cert), "--tls-key", str(key)]

    def tls_env(self) -> dict[str, str]:
        """The coordinator's side of TLS, through Dask's configuration (docs/cluster.md)."""
        if self.tls is None:
            return {}
        cert, key = self.tls
        return {
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(cert),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(cert),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(key),
        }

    def start_scheduler(self) -> None:
        protocol = ["--protocol", "tls"] if self.tls else []
        self.scheduler = self._spawn(
            [*DASK, "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard", *protocol, *self.tls_args()],
            "scheduler",
        )

    def start_worker(
        self, name: str, tables: int = 1, env: Mapping[str, str] | None = None, *, nanny: bool = False
    ) -> None:
        """A worker with ``tables`` table slots (0: none until the test gives it some; one thread still).

        ``nanny``: under a nanny process, which restarts the worker (on a new port) when it dies.
        """
        self.workers[name] = self._spawn(
            [
                *WORKER, self.address, "--host", "127.0.0.1", "--name", name, "--nthreads", str(max(1, tables)),
                "--resources", f"TABLES={tables}", "--nanny" if nanny else "--no-nanny", "--no-dashboard",
                "--death-timeout", "30", *self.tls_args(),
            ],  # fmt: skip
            f"worker-{name}",
            env,
        )

    def client(self):  # type: ignore[no-untyped-def]
        from distributed import Client
        from distributed.security import Security

        security = None
        if self.tls is not None:
            cert, key = self.tls
            security = Security(tls_ca_file=str(cert), tls_client_cert=str(cert), tls_client_key=str(key))
        # Generous: on a loaded machine a fresh interpreter takes long to import Dask.
        return Client(self.address, timeout=180, set_as_default=False, security=security)

    def wait_for_workers(self, n: int, timeout: float = 180) -> None:
        with self.client() as client:
            client.wait_for_workers(n, timeout=timeout)

    def address_of(self, name: str) -> str:
        """The address the scheduler knows worker ``name`` by (what the coordinator's lines name)."""
        with self.client() as client:
            workers = client.scheduler_info(n_workers=-1)["workers"]
        return next(addr for addr, info in workers.items() if info.get("name") == name)

    def give_slots(self, name: str, tables: int, timeout: float = 60) -> None:
        """Give a running worker ``tables`` table slots, and wait until the scheduler counts them."""

        # Nested, so cloudpickle ships it by value (the worker cannot import the tests).
        async def set_slots(dask_worker) -> None:  # type: ignore[no-untyped-def]
            await dask_worker.set_resources(TABLES=tables)

        address = self.address_of(name)
        with self.client() as client:
            client.run(set_slots, workers=[address])
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                info = client.scheduler_info(n_workers=-1)["workers"].get(address, {})
                if (info.get("resources") or {}).get("TABLES") == tables:
                    return
                time.sleep(0.1)
        raise TimeoutError(f"worker {name} did not get {tables} table slots")

    def stop(self) -> None:
        for process in [*self.workers.values(), self.scheduler]:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in [*self.workers.values(), self.scheduler]:
            if process is None:
                continue
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.1, deadline - time.monotonic()))
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A scheduler with two workers (one table each)."""
    c = Cluster(tmp_path)
    try:
        c.start_scheduler()
        time.sleep(0.5)
        c.start_worker("w1")
        c.start_worker("w2")
        c.wait_for_workers(2)
        yield c
    finally:
        c.stop()


@pytest.fixture
def tls_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A scheduler and one worker that speak TLS only (a self-signed certificate for 127.0.0.1)."""
    if shutil.which("openssl") is None:
        pytest.skip("the TLS cluster test needs the openssl command")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    c = Cluster(tmp_path, tls=(cert, key))
    try:
        c.start_scheduler()
        time.sleep(0.5)
        c.start_worker("w1", tables=2)
        c.wait_for_workers(1)
        yield c
    finally:
        c.stop()


@pytest.fixture
def bare_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A scheduler only; the test starts the workers it needs."""
    c = Cluster(tmp_path)
    try:
        c.start_scheduler()
        yield c
    finally:
        c.stop()
