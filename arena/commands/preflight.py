"""``arena match run`` and ``arena bot check`` start each image once before playing (issue 24, item 5).

An image whose own configuration stops its containers from starting
(:mod:`arena.sandbox.preflight`) ends the command with one clear line and a
non-zero exit instead of a game that cannot be played (or a traceback).
Each invocation labels its preflight containers with a run of its own
(:func:`~arena.sandbox.preflight.preflight_run`) and prunes that run when it
is done, so a container whose removal failed is not left behind.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arena.commands.common import EXIT_BAD_INPUT, fail
from arena.referee.botspec import BotSpec
from arena.sandbox.docker import (
    ContainerLimits,
    DockerUnavailable,
    ImageNotFound,
    SeatStartError,
    docker_client,
)
from arena.sandbox.preflight import preflight_image, preflight_run, prune_preflight

#: Exit status when the platform (the Docker engine) failed, not the input.
EXIT_PLATFORM = 1


def start_problem(client: Any, image: str, run: str, limits: ContainerLimits | None = None) -> str | None:
    """Why ``image`` cannot start a seat's container (its own fault), None if it starts; exits on a platform fault.

    The container carries the label of ``run`` (prune it with
    :func:`~arena.sandbox.preflight.prune_preflight` when done).
    """
    try:
        return preflight_image(client, image, run=run, limits=limits)
    except SeatStartError as exc:
        fail(f"could not check that {image} starts: {exc}", EXIT_PLATFORM)


def check_images_start(bots: Iterable[BotSpec], limits: ContainerLimits | None = None) -> None:
    """Start each ``docker:`` bot's image once; ``error: docker:IMAGE: why`` and exit 2 for one that cannot."""
    images = list(dict.fromkeys(bot.target for bot in bots if bot.kind == "docker"))
    if not images:
        return
    try:
        client = docker_client()
    except DockerUnavailable as exc:
        fail(str(exc))
    run = preflight_run()
    try:
        for image in images:
            try:
                why = start_problem(client, image, run, limits)
            except ImageNotFound as exc:
                fail(str(exc))
            if why is not None:
                fail(f"docker:{image}: {why}", EXIT_BAD_INPUT)
    finally:
        prune_preflight(client, run)
        client.close()


__all__ = ["EXIT_PLATFORM", "check_images_start", "start_problem"]
