"""Docker fixtures of the hostile-bot suite: a real engine, images built offline once per session.

The same contract as ``tests/sandbox/conftest.py``: without an engine the
tests skip locally and fail under CI (``CI=true``), because Docker tests must
never be skipped there.  ``images`` builds lazily: a test pays only for the
images it asks for (``images["zoo"]`` is the one image of every hostile bot).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox.build import build_image
from docker_support import BASE_IMAGE, build_once, engine_or_skip, remove_own

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SOURCES = {
    "random": (REPO / "example_bots" / "random", "arena-random:test"),
    "heuristic": (REPO / "example_bots" / "heuristic", "arena-heuristic:test"),
    "probe": (REPO / "tests" / "sandbox" / "probe_bot", "arena-probe:test"),
    "referee": (REPO / "docker" / "referee", "arena-referee:test"),
    "zoo": (HERE / "zoo", "arena-hostile:test"),
}


@pytest.fixture(scope="session")
def docker() -> Iterator[Any]:
    """A client for the real engine; fails at the end if this test run left containers.

    Only this test run's containers count (label ``arena.test``, see
    ``tests/docker_support.py``): another run on the same engine may have
    containers of its own.
    """
    client = engine_or_skip()
    yield client
    left = remove_own(client)
    client.close()
    assert not left, f"containers left behind: {left}"


class Images(Mapping[str, str]):
    """Image tags by short name, each built offline on first use (once per run: the sandbox tests share them)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.built: dict[str, str] = {}

    def __getitem__(self, name: str) -> str:
        if name not in self.built:
            source, tag = SOURCES[name]
            build_once(self.client, tag, lambda: build_image(source, tag=tag, base_image=BASE_IMAGE, client=self.client))
            self.built[name] = tag
        return self.built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(SOURCES)

    def __len__(self) -> int:
        return len(SOURCES)


@pytest.fixture(scope="session")
def images(docker: Any) -> Images:
    """Tags of the example bots, the probe bot, the referee and the hostile zoo (built when first asked)."""
    return Images(docker)
