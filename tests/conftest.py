"""Fixtures shared by all tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# Before any test module imports grpc: the tests run on the transport the
# referee and the SDK choose where they start (see arena_sdk.transport).
from arena_sdk.transport import prefer_polling_transport

prefer_polling_transport()

REPO = Path(__file__).resolve().parents[1]

# Failures said at once, the disk and engine in the header, the run's budget and its recap
# (tests/run_report.py); under CI, a wedged Docker engine restarted and its test run again
# (tests/engine_guard.py).
pytest_plugins = ["parallel", "run_report", "engine_guard"]

# One run secret for every results store the tests make (arena.match.seeds): a test that compares
# two output directories (a reference run and a resumed one, local and cluster) deals the same cards
# in both. It is not a bot's to know: test_seeds' attacker does not.
os.environ.setdefault("ARENA_RUN_SECRET", "tests-" + "5e" * 32)


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real ``arena`` CLI in a subprocess, in a scratch directory."""

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "arena", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=timeout,
            env={
                "COLUMNS": "200",
                "PATH": "/usr/bin:/bin",
                "HOME": str(tmp_path),
                # Share the machine's wheel cache and any ARENA_* settings (base image...).
                "ARENA_WHEEL_CACHE": str(Path.home() / ".cache" / "arena" / "wheels"),
                **{k: v for k, v in os.environ.items() if k.startswith("ARENA_")},
            },
        )

    return run


def pytest_sessionstart(session: pytest.Session) -> None:
    """Remove what pytest could not: its ``garbage-*`` folders holding trees too deep for its recursive rm.

    The hostile-archive tests make trees 1,500 directories deep (and remove them
    themselves, iteratively); a run killed in between leaves one, and pytest's own
    clean-up of old temporary folders then fails every later run with RecursionError.
    """
    import getpass
    import tempfile

    from arena.sandbox.tree import remove_tree

    root = Path(tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}"
    for garbage in root.glob("garbage-*"):
        remove_tree(garbage, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The images this run's Docker tests built go with it (docker_support imported: some ran)."""
    support = sys.modules.get("docker_support")
    if support is not None:
        support.remove_own_images()


#: Debian's Chromium, driven by Playwright (no browser download); the flags a closed network needs.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip


@pytest.fixture
def browser():  # type: ignore[no-untyped-def]
    """A headless Chromium (Playwright's Browser); fails in CI without one, skips elsewhere."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing (required in CI)")
        pytest.skip(f"{CHROMIUM} is not installed")
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("DBUS_SESSION_BUS_ADDRESS", "disabled:")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()
