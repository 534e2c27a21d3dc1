"""``arena match run`` and ``arena bot check`` start each image once before playing (issue 24, item 5).

An image whose own configuration stops its containers from starting
(:mod:`arena.sandbox.preflight`) ends the command with one clear line and a
non-zero exit instead of a game that cannot be played (or a traceback).
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
from arena.sandbox.preflight import preflight_image

#: Exit status when the platform (the Docker engine) failed, not the input.
EXIT_PLATFORM = 1


def start_problem(client: Any, image: str, limits: ContainerLimits | None = None) -> str | None:
    """Why ``image`` cannot start a seat's container (its own fault), None if it starts; exits on a platform fault."""
    try:
        return preflight_image(client, image, limits=limits)
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
    try:
        for image in images:
            try:
                why = start_problem(client, image, limits)
            except ImageNotFound as exc:
                fail(str(exc))
            if why is not None:
                fail(f"docker:{image}: {why}", EXIT_BAD_INPUT)
    finally:
        client.close()


__all__ = ["EXIT_PLATFORM", "check_images_start", "start_problem"]
