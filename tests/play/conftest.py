"""Fixtures of the ``arena play`` tests: Debian's Chromium, driven by Playwright."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from play_support import CHROMIUM, FLAGS


@pytest.fixture
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing (required in CI)")
        pytest.skip(f"{CHROMIUM} is not installed")
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("DBUS_SESSION_BUS_ADDRESS", "disabled:")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            yield b
        finally:
            b.close()
