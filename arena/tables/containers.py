"""The kernel's side of Docker: image IDs resolved once per run, and the one prune of leftovers.

A run (a tournament, an sprt test, the ladder) resolves each bot's image tag
to an image ID when it starts (:func:`resolve_image_ids`), and every table
starts its containers by that ID, so a tag moved during the run changes
nothing.  Containers carry their run's label (``arena.run``) and their
table's match id, so :func:`prune_run` and :func:`prune_table` remove exactly
one run's (or one table's) leftovers and never another run's on a shared
engine.  Pruning is best effort: what cannot be removed now is removed by the
next run's prune.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from arena.referee.botspec import BotSpec
from arena.sandbox.docker import DockerUnavailable, docker_client, image_id, prune
from arena.tables.spec import TableSpec

#: Before replaying voided games, how long to wait for a Docker engine that
#: does not answer (it was restarted): retries spent while it is down are lost.
DOCKER_WAIT_S = 300.0


def resolve_image_ids(bots: Mapping[str, BotSpec], client: Any) -> dict[str, str | None]:
    """Each named bot's image ID (``docker`` bots), None for the others.

    Raises :class:`~arena.sandbox.docker.ImageNotFound` for a tag this engine
    does not have.
    """
    return {name: image_id(client, bot.target) if bot.kind == "docker" else None for name, bot in bots.items()}


def prune_run(run_id: str | None, match_prefix: str | None = None, client: Any = None) -> None:
    """Remove this run's containers (of one table, with ``match_prefix``); best effort.

    ``run_id`` None: by ``match_prefix`` alone (containers of runs started
    before containers carried their run's label).  Opens its own Docker client
    unless given one (it runs in worker threads, which must not share the
    coordinator's).
    """
    own = client is None
    if own:
        try:
            client = docker_client()
        except DockerUnavailable:
            return  # nothing can be removed now; the next run's prune removes them
    try:
        prune(client, match_prefix, run=run_id, include_running=True)
    except Exception:  # noqa: BLE001 - best effort: the next run prunes them
        pass
    finally:
        if own:
            client.close()


def prune_table(spec: TableSpec, client: Any = None) -> None:
    """Remove one table's containers (this run's): those a dead table process or a failing engine left."""
    prune_run(spec.run_id, spec.match_id, client)


def wait_for_docker(run_id: str, stop: threading.Event, wait_s: float = DOCKER_WAIT_S) -> None:
    """Wait (at most ``wait_s``) for the Docker engine to answer, then prune the run's leftovers."""
    deadline = time.monotonic() + wait_s
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            docker_client().close()
            break
        except DockerUnavailable:
            time.sleep(0.5)
    prune_run(run_id)


__all__ = ["DOCKER_WAIT_S", "prune_run", "prune_table", "resolve_image_ids", "wait_for_docker"]
