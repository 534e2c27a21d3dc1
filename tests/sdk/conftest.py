"""Fixtures for the SDK tests: the example bots, loaded from their files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_BOTS = REPO / "example_bots"


def load_example(name: str) -> ModuleType:
    """Import ``example_bots/NAME/bot.py`` as module ``example_bot_NAME``."""
    module_name = f"example_bot_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLE_BOTS / name / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def heuristic() -> ModuleType:
    return load_example("heuristic")


@pytest.fixture(scope="session")
def random_bot() -> ModuleType:
    return load_example("random")
