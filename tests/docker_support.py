"""What every Docker test shares: the engine, or a skip locally and a failure under CI.

Docker tests must never be skipped in CI (``CI=true``): there a missing engine
or base image fails them; on a developer's machine without Docker they skip.

The engine may be shared with other arena runs (other test runs, a
tournament): every container this test run starts carries the label
``arena.test=<this run's id>`` (through ``ARENA_LABELS``, which subprocesses
inherit), and fixtures count, wait for and remove only those.  On parallel
workers (``pytest -n N``) each worker is a run of its own in that sense: its
own label, its own leftovers check; images under fixed tags are built once
for the whole run (:func:`build_once`).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from parallel import run_dir, run_lock

from arena.sandbox.docker import LABELS_ENV, docker_client

BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm")
TEST_LABEL = "arena.test"
TEST_RUN = f"pytest-{os.getpid()}-{uuid.uuid4().hex[:8]}"
os.environ[LABELS_ENV] = ",".join(filter(None, [os.environ.get(LABELS_ENV, ""), f"{TEST_LABEL}={TEST_RUN}"]))


def own_containers(client: Any, **filters: Any) -> list[dict[str, Any]]:
    """This test run's containers (any state; the list's own fields, no inspect)."""
    labels = [f"{TEST_LABEL}={TEST_RUN}", *filters.pop("label", [])]
    return list(client.api.containers(all=True, filters={"label": labels, **filters}))


#: How long :func:`remove_own` may take in all (a wedged engine holds each removal up to its client timeout).
REMOVE_OWN_S = 60.0


def _described(info: dict[str, Any]) -> str:
    """A leftover named so that a failure says whose it was: name, image, state and the arena's labels."""
    name = str((info.get("Names") or [info["Id"][:12]])[0]).lstrip("/")
    labels = {k: v for k, v in (info.get("Labels") or {}).items() if k.startswith("arena.") and k != TEST_LABEL}
    return f"{name} ({info.get('Image', '?')}, {info.get('State', '?')}, {labels})"


def remove_own(client: Any, within: float = REMOVE_OWN_S) -> list[str]:
    """Remove this test run's containers (and their volumes) at once; returns their names.

    The removals run side by side and are waited for ``within`` seconds in
    all: a session's teardown must not outlast the run (seen in CI: ten
    containers of a wedged engine, a minute each, in three fixtures).
    """
    try:
        found = own_containers(client)
    except Exception:  # noqa: BLE001 - an engine that cannot list them: nothing to name
        return []
    names = [_described(info) for info in found]

    def remove(container_id: str) -> None:
        with contextlib.suppress(Exception):
            client.api.remove_container(container_id, force=True, v=True)

    threads = [threading.Thread(target=remove, args=(info["Id"],), daemon=True) for info in found]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + within
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
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


#: The tags of ladder versions' images (arena.ladder.versions.builds.image_tag).
LADDER_IMAGES = "arena-ladder-"


def remove_own_images(within: float = 120.0) -> int:
    """Remove the ladder images this test run built (label ``arena.test=<run>``); how many.

    Every ladder a test starts builds its versions under a tag of its own
    (``arena-ladder-<id>:vN``): kept, they add up run after run on a machine
    whose engine CI reuses (368 images, 11 GB seen).  Images under fixed tags
    (``arena-random:test``...) stay: the next run's build of the same tag
    reuses their layers.  Bounded like :func:`remove_own`; an engine that is
    not there removes nothing.
    """
    removed: list[str] = []

    def remove_all() -> None:
        try:
            client = docker_client(timeout=30)
        except Exception:  # noqa: BLE001 - no engine: nothing was built
            return
        try:
            for image in client.images.list(filters={"label": f"{TEST_LABEL}={TEST_RUN}"}):
                if not all(tag.startswith(LADDER_IMAGES) for tag in image.tags):
                    continue
                with contextlib.suppress(Exception):
                    client.images.remove(image.id, force=True)
                    removed.append(image.id)
        finally:
            client.close()

    thread = threading.Thread(target=remove_all, name="remove-own-images", daemon=True)
    thread.start()
    thread.join(within)
    return len(removed)


def build_once(client: Any, tag: str, build: Callable[[], object]) -> str:
    """``tag`` built once in this run, whichever worker of ``pytest -n`` asks first; returns ``tag``.

    ``build`` makes the image under ``tag`` (``arena.sandbox.build.build_image``
    or a plain ``docker build``).  The first caller runs it under a lock of the
    run (``tests/parallel.py``) and records the image's ID; later callers, in
    this process or another worker, find the same image under ``tag`` and build
    nothing.  A tag some test has since moved or removed is built again.
    """
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", tag)
    record = run_dir() / "images" / f"{name}.id"
    with run_lock(f"image-{name}"):
        with contextlib.suppress(Exception):  # no record yet, no such image, or another image under the tag
            if client.images.get(tag).id == record.read_text().strip():
                return tag
        build()
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(str(client.images.get(tag).id))
    return tag
