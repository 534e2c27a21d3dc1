"""Headless Chromium for the page tests: a fresh profile, no network chatter, bounded wait."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with a fresh profile under ``tmp`` and no network chatter
    (bounded wait)."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing (required in CI)")
        pytest.skip(f"{CHROMIUM} is not installed")
    profile = tmp / f"profile-{time.monotonic_ns()}"
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        *args,
    ]
    # No D-Bus here: without this Chromium waits seconds for a session bus.
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": "disabled:", "HOME": str(tmp)}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc
