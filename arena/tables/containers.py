"""The kernel's side of Docker: image IDs resolved once per run, and the one prune of leftovers.

A run (a tournament, an sprt test, the ladder) resolves each bot's image tag
to an image ID when it starts (:func:`resolve_image_ids`), and every table
starts its containers by that ID, so a tag moved during the run changes
nothing.  Containers carry their run's label (``arena.run``) and their
table's match id, so :func:`prune_run` and :func:`prune_table` remove exactly
one run's (or one table's) leftovers and never another run's on a shared
engine.  Pruning is best effort: what cannot be removed now is removed by the
next run's prune; a tournament's or a test's prune before it starts is strict (an engine error there is
one line that stops it, not hidden).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from arena.errors import ArenaError
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


class PruneFailed(ArenaError):
    """The engine could not list or remove a run's leftover containers before the run (one line: the engine's reason)."""


def prune_run(run_id: str | None, match_prefix: str | None = None, client: Any = None, *, strict: bool = False) -> None:
    """Remove this run's containers (of one table, with ``match_prefix``).

    ``run_id`` None: by ``match_prefix`` alone (containers of runs started
    before containers carried their run's label).  Opens its own Docker client
    unless given one (it runs in worker threads, which must not share the
    coordinator's).  Best effort (what cannot be removed now is removed by the
    next prune), unless ``strict``: the prune before a run writes anything
    raises :class:`PruneFailed` naming the engine's error (no engine, a list
    or a removal it refused), so a run never starts on an engine it cannot
    clean, and never hides why.
    """
    own = client is None
    if own:
        try:
            client = docker_client()
        except DockerUnavailable as exc:
            if strict:
                raise PruneFailed(f"cannot remove this run's leftover containers: {exc}") from None
            return  # nothing can be removed now; the next run's prune removes them
    failed: list[str] = []
    try:
        prune(client, match_prefix, run=run_id, include_running=True, failed=failed)
    except Exception as exc:  # noqa: BLE001 - best effort unless strict: the next run prunes them
        if strict:
            raise PruneFailed(
                f"the Docker engine could not list this run's leftover containers: {_one_line(_engine_reason(exc))}; "
                "check the engine (docker info) and run again"
            ) from None
    finally:
        if own:
            client.close()
    if strict and failed:
        raise PruneFailed(
            f"the Docker engine could not remove {len(failed)} leftover container(s) of this run "
            f"({_one_line(failed[0])}); check the engine (docker info) and run again"
        )


def _engine_reason(exc: Exception) -> object:
    """What the engine said (an API error's explanation, not its URL), else the error itself."""
    return getattr(exc, "explanation", None) or exc


def _one_line(text: object, limit: int = 300) -> str:
    """An engine's error as one short line."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


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


__all__ = ["DOCKER_WAIT_S", "PruneFailed", "prune_run", "prune_table", "resolve_image_ids", "wait_for_docker"]
