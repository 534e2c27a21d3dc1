"""What every Docker test shares: the engine, or a skip locally and a failure under CI.

Docker tests must never be skipped in CI (``CI=true``): there a missing engine
or base image fails them; on a developer's machine without Docker they skip.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from arena.sandbox.docker import docker_client

BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm")


def engine_or_skip(what: str = "Docker tests") -> Any:
    """A client for the machine's engine, which must have the base image."""
    try:
        client = docker_client()
        client.images.get(BASE_IMAGE)
    except Exception as exc:  # DockerUnavailable, or the base image is missing
        message = f"{what} need a Docker engine and {BASE_IMAGE} (scripts/docker-setup.sh): {exc}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return client
