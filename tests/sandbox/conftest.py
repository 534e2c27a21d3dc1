"""Docker fixtures: a real engine, images built offline once per run, no leftovers.

Without an engine these tests skip locally; under CI (CI=true) they fail
instead, because Docker tests must never be skipped there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox.build import build_image
from arena.sandbox.docker import DockerUnavailable
from docker_support import BASE_IMAGE, build_once, engine_or_skip, remove_own

REPO = Path(__file__).resolve().parents[2]
IMAGES = {
    "random": (REPO / "example_bots" / "random", "arena-random:test"),
    "heuristic": (REPO / "example_bots" / "heuristic", "arena-heuristic:test"),
    "probe": (REPO / "tests" / "sandbox" / "probe_bot", "arena-probe:test"),
    "referee": (REPO / "docker" / "referee", "arena-referee:test"),
}


@pytest.fixture(scope="session")
def docker() -> Iterator[Any]:
    """A client for the real engine; fails at the end if this test run left containers.

    Only this test run's containers count (label ``arena.test``): the engine
    may be shared with other runs.
    """
    client = engine_or_skip()
    yield client
    left = remove_own(client)
    client.close()
    assert not left, f"containers left behind: {left}"


@pytest.fixture(scope="session")
def images(docker: Any) -> dict[str, str]:
    """The example bots, the probe bot and the referee, built offline once per run (tags by short name)."""
    built = {}
    for name, (source, tag) in IMAGES.items():
        build_once(docker, tag, lambda s=source, t=tag: build_image(s, tag=t, base_image=BASE_IMAGE, client=docker))
        built[name] = tag
    return built


__all__ = ["DockerUnavailable"]
