"""A Docker engine of the rehearsal's own, so its daemon can be restarted without touching the machine's.

:class:`~arena.rehearse.own_faults.OwnDaemon` (the platform-fault tests'
daemon) in a short directory under ``/tmp`` (containerd's socket paths are
short), with the base image imported into it: from the rootfs the setup
script caches (``ARENA_ROOTFS_CACHE``, ``/var/cache/arena/rootfs.tar``), else
copied from the machine's engine.  The ladder's server is then started with
``DOCKER_HOST`` naming it; the bot base image is built there on the first
upload, as on a fresh machine.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from arena.rehearse.own_faults import OwnDaemon, can_make_faults
from arena.rehearse.server import RehearsalError

ROOTFS_TAR = Path(os.environ.get("ARENA_ROOTFS_CACHE", "/var/cache/arena/rootfs.tar"))


@contextlib.contextmanager
def own_engine(base_image: str, *, dockerd_args: tuple[str, ...] = ()) -> Iterator[OwnDaemon]:
    """A running daemon of our own holding ``base_image``; afterwards its containers, daemon and files removed.

    ``dockerd_args``: more arguments for the daemon (a test's own runtime, say).
    """
    why_not = can_make_faults()
    if why_not is not None:
        raise RehearsalError(f"a Docker daemon of the rehearsal's own {why_not}")
    import docker

    machine = docker.from_env(timeout=120)
    try:
        driver = str(machine.info().get("Driver") or "overlay2")
        daemon = OwnDaemon(Path(tempfile.mkdtemp(prefix="arena-dd-", dir="/tmp")), driver, dockerd_args)
        try:
            daemon.start(timeout=120)
            client = daemon.client()
            try:
                repository, _, tag = base_image.partition(":")
                if ROOTFS_TAR.is_file():
                    client.api.import_image_from_file(
                        str(ROOTFS_TAR), repository=repository, tag=tag or "latest"
                    )
                else:
                    client.images.load(machine.images.get(base_image).save())
            finally:
                client.close()
            yield daemon
        finally:
            if daemon.pid is not None:
                with contextlib.suppress(Exception):
                    client = daemon.client()
                    for container in client.api.containers(all=True):
                        client.api.remove_container(container["Id"], force=True)
                    client.close()
            daemon.stop()
            daemon.remove_files()
    finally:
        machine.close()


__all__ = ["ROOTFS_TAR", "own_engine"]
