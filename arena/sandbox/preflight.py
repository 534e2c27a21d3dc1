"""Start each image of a run once before any game: an image that cannot start is known at once.

An image's own configuration can stop every container of it from starting
(``VOLUME /sys/x``: the sandbox's read-only tmpfs over a VOLUME path cannot be
mounted under ``/sys``; a missing entrypoint).  Met only at a game's start,
that costs every table of the entry a container start; a run (a tournament,
``arena sprt``, ``arena match run``, ``arena bot check``) instead starts one
container of each image here, with a seat's settings, and removes it at once.

The verdict is the seat start's own (:func:`arena.sandbox.docker._create_and_start`):
the image's fault (:class:`~arena.sandbox.docker.BotStartFailed`, decided
against a known-good image) gives the reason; a fault of the platform
(:class:`~arena.sandbox.docker.SeatStartError`: the daemon, a full disk) is
raised, since it says nothing about the image.  Reasons quote the daemon and
the image (paths chosen by the bot's author): print them through
:func:`arena.text.safe_text`.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.sandbox.docker import (
    MATCH_LABEL,
    RUN_LABEL,
    BotStartFailed,
    ContainerLimits,
    SeatStartError,
    _create_and_start,
    docker_client,
    image_id,
    release_proc_dir,
)

#: The match label of a preflight container (with the run's ``arena.run``, so the run's prune finds a leftover).
PREFLIGHT_MATCH = "preflight"


def preflight_image(
    client: Any, image: str, *, limits: ContainerLimits | None = None, run: str | None = None
) -> str | None:
    """Start one container of ``image`` with a seat's settings and remove it; None if it started.

    Returns why it cannot start when that is the image's own fault; raises
    :class:`SeatStartError` when the platform failed and
    :class:`~arena.sandbox.docker.ImageNotFound` for an image the engine lacks.  Bounded by the Docker
    client's timeout; the container runs no longer than its removal takes.
    """
    image_id(client, image)  # ImageNotFound, one clear line, before anything is started
    labels = {MATCH_LABEL: PREFLIGHT_MATCH, **({RUN_LABEL: run} if run else {})}
    with tempfile.TemporaryDirectory(prefix="arena-preflight-") as tmp:
        try:
            container, _pipe = _create_and_start(client, image, {}, Path(tmp), limits or ContainerLimits(), labels, None)
        except BotStartFailed as exc:
            return str(exc)
        except Exception as exc:
            raise SeatStartError(f"the Docker engine could not start a container: {type(exc).__name__}: {exc}") from exc
        try:
            with contextlib.suppress(Exception):  # the run's prune removes it if this fails
                client.api.remove_container(container.id, force=True, v=True)
        finally:
            release_proc_dir()
    return None


def preflight_images(
    images: Mapping[str, str | None],
    *,
    client: Any = None,
    limits: ContainerLimits | None = None,
    run: str | None = None,
) -> dict[str, str]:
    """For each name whose image cannot start, why (names with ``None``, local commands, are skipped).

    Each distinct image is started once, whatever the number of names that
    use it.  Opens its own Docker client unless given one.
    """
    wanted = {name: image for name, image in images.items() if image}
    if not wanted:
        return {}
    own = client is None
    client = client or docker_client()
    try:
        verdicts = {image: preflight_image(client, image, limits=limits, run=run) for image in dict.fromkeys(wanted.values())}
    finally:
        if own:
            client.close()
    return {name: why for name, image in wanted.items() if (why := verdicts[image]) is not None}


__all__ = ["PREFLIGHT_MATCH", "preflight_image", "preflight_images"]
