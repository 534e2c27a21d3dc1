"""Docker fixtures: a real engine, images built offline once per session, no leftovers.

Without an engine these tests skip locally; under CI (CI=true) they fail
instead, because Docker tests must never be skipped there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox.build import build_image
from arena.sandbox.docker import LABEL, DockerUnavailable, docker_client

REPO = Path(__file__).resolve().parents[2]
BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm")
IMAGES = {
    "random": (REPO / "example_bots" / "random", "arena-random:test"),
    "heuristic": (REPO / "example_bots" / "heuristic", "arena-heuristic:test"),
    "probe": (REPO / "tests" / "sandbox" / "probe_bot", "arena-probe:test"),
    "referee": (REPO / "docker" / "referee", "arena-referee:test"),
}


def _labelled(client: Any) -> list[Any]:
    return client.containers.list(all=True, filters={"label": [LABEL]})


@pytest.fixture(scope="session")
def docker() -> Iterator[Any]:
    """A client for the real engine; fails at the end if labelled containers are left."""
    try:
        client = docker_client()
        client.images.get(BASE_IMAGE)
    except Exception as exc:  # DockerUnavailable or the base image missing
        message = f"Docker tests need an engine and {BASE_IMAGE} (scripts/docker-setup.sh): {exc}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    before = {c.id for c in _labelled(client)}
    yield client
    left = [c.name for c in _labelled(client) if c.id not in before]
    assert not left, f"containers left behind: {left}"


@pytest.fixture(scope="session")
def images(docker: Any) -> dict[str, str]:
    """The example bots and the probe bot, built offline (tags by short name)."""
    built = {}
    for name, (source, tag) in IMAGES.items():
        build_image(source, tag=tag, base_image=BASE_IMAGE, client=docker)
        built[name] = tag
    return built


__all__ = ["DockerUnavailable"]
