"""Fixtures of the referee tests: a short socket path, a bot directory, bot logs."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    """A short directory for the Unix socket (tmp_path can exceed the 107-byte limit)."""
    path = Path(tempfile.mkdtemp(prefix="arena-ref-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def unix_address(sock_dir: Path) -> str:
    return f"unix:{sock_dir}/referee.sock"


@pytest.fixture(params=["unix", "tcp"])
def bind_address(request: pytest.FixtureRequest, sock_dir: Path) -> str:
    """What to bind: a Unix socket, or 127.0.0.1 with a port picked by the system."""
    return f"unix:{sock_dir}/referee.sock" if request.param == "unix" else "127.0.0.1:0"


@pytest.fixture
def bot_dir(tmp_path: Path) -> Path:
    path = tmp_path / "bots"
    path.mkdir()
    return path


@pytest.fixture
def log_dir(tmp_path: Path) -> Iterator[Path]:
    """Where host_match writes the bots' output; printed at teardown (shown on failure)."""
    path = tmp_path / "logs"
    yield path
    for log in sorted(path.glob("*.log")) if path.exists() else []:
        print(f"----- {log.name}\n{log.read_text(errors='replace')[-3000:]}")
