"""Start each image of a run once before any game: an image that cannot start is known at once.

An image's own configuration can stop every container of it from starting
(``VOLUME /sys/x``: the sandbox's read-only tmpfs over a VOLUME path cannot be
mounted under ``/sys``; a missing entrypoint).  Met only at a game's start,
that costs every table of the entry a container start; a run (a tournament,
``arena sprt``, ``arena match run``, ``arena bot check``) instead starts one
container of each image here, with a seat's settings, and removes it at once.

The verdict is the seat start's own (:func:`arena.sandbox.docker.start_once`):
the image's fault (:class:`~arena.sandbox.docker.BotStartFailed`, decided
against a known-good image and a retry) gives the reason; a fault of the
platform (:class:`~arena.sandbox.docker.SeatStartError`: the daemon, a full
disk) is raised, since it says nothing about the image.  Reasons quote the
daemon and the image (paths chosen by the bot's author): print them through
:func:`arena.text.safe_text`.

Every preflight container carries a run label (``arena.run``): a run's own
id, or a label of one invocation (:func:`preflight_run`) for a command that
has none.  :func:`preflight_images` prunes its run's preflight containers
when it ends, so one whose removal failed is not left behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from arena.sandbox.docker import (
    PREFLIGHT_MATCH,
    BotStartFailed,
    ContainerLimits,
    ImageNotFound,
    SeatStartError,
    docker_client,
    image_id,
    prune_preflight,
    start_once,
)


def preflight_run() -> str:
    """A run label of its own for one command's preflight (``arena match run``, ``arena bot check``, ``arena sprt``)."""
    return f"{PREFLIGHT_MATCH}-{uuid.uuid4().hex[:12]}"


def preflight_image(client: Any, image: str, *, run: str, limits: ContainerLimits | None = None) -> str | None:
    """Start one container of ``image`` with a seat's settings and remove it; None if it started.

    Returns why it cannot start when that is the image's own fault; raises
    :class:`SeatStartError` when the platform failed and
    :class:`~arena.sandbox.docker.ImageNotFound` for an image the engine
    lacks.  The container carries ``run`` (label ``arena.run``).  Bounded by
    the Docker client's timeout; the container runs no longer than its
    removal takes.
    """
    try:
        image_id(client, image)  # ImageNotFound, one clear line, before anything is started
    except ImageNotFound:
        raise
    except Exception as exc:  # the daemon did not answer: says nothing of the image
        raise SeatStartError(f"the Docker engine could not inspect {image}: {type(exc).__name__}: {exc}") from exc
    try:
        start_once(client, image, run=run, limits=limits)
    except BotStartFailed as exc:
        return str(exc)
    return None


def preflight_images(
    images: Mapping[str, str | None],
    *,
    run: str,
    client: Any = None,
    limits: ContainerLimits | None = None,
) -> dict[str, str]:
    """For each name whose image cannot start, why (names with ``None``, local commands, are skipped).

    Each distinct image is started once, whatever the number of names that
    use it; ``run``'s preflight containers are pruned at the end.  Opens its
    own Docker client unless given one.
    """
    wanted = {name: image for name, image in images.items() if image}
    if not wanted:
        return {}
    own = client is None
    client = client or docker_client()
    try:
        verdicts = {image: preflight_image(client, image, limits=limits, run=run) for image in dict.fromkeys(wanted.values())}
    finally:
        prune_preflight(client, run)
        if own:
            client.close()
    return {name: why for name, image in wanted.items() if (why := verdicts[image]) is not None}


__all__ = ["PREFLIGHT_MATCH", "preflight_image", "preflight_images", "preflight_run", "prune_preflight"]
