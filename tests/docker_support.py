"""What every Docker test shares: the engine, or a skip locally and a failure under CI.

Docker tests must never be skipped in CI (``CI=true``): there a missing engine
or base image fails them; on a developer's machine without Docker they skip.

The engine may be shared with other arena runs (other test runs, a
tournament): every container this test run starts carries the label
``arena.test=<this run's id>`` (through ``ARENA_LABELS``, which subprocesses
inherit), and fixtures count, wait for and remove only those.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from typing import Any

import pytest

from arena.sandbox.docker import LABELS_ENV, docker_client

BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm")
TEST_LABEL = "arena.test"
TEST_RUN = f"pytest-{os.getpid()}-{uuid.uuid4().hex[:8]}"
os.environ[LABELS_ENV] = ",".join(filter(None, [os.environ.get(LABELS_ENV, ""), f"{TEST_LABEL}={TEST_RUN}"]))


def own_containers(client: Any, **filters: Any) -> list[dict[str, Any]]:
    """This test run's containers (any state; the list's own fields, no inspect)."""
    labels = [f"{TEST_LABEL}={TEST_RUN}", *filters.pop("label", [])]
    return list(client.api.containers(all=True, filters={"label": labels, **filters}))


def remove_own(client: Any) -> list[str]:
    """Remove this test run's containers (and their volumes); returns their names."""
    names = []
    for info in own_containers(client):
        with contextlib.suppress(Exception):
            client.api.remove_container(info["Id"], force=True, v=True)
            names.append(str((info.get("Names") or [info["Id"][:12]])[0]).lstrip("/"))
    return names


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
