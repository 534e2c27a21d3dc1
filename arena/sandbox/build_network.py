"""The network a build's steps run in: a namespace with only ``lo``, and no libnetwork endpoint.

The classic builder runs each step (``RUN``, and the metadata steps) in an
intermediate container with the network mode the build asks for.  With
``networkmode=none`` every step container is an endpoint on the engine's
shared ``none`` network, the path of the libnetwork deadlock of Docker 20.10
before 20.10.27 (see :data:`arena.sandbox.docker.NO_NETWORK`): a build step
ending at the moment a seat ends can wedge the engine.  The build API has no
``NetworkDisabled``; it does take ``container:ID``, which makes each step join
another container's network namespace without an endpoint of its own.  So a
build gets a *holder*: a container of the build's base image with networking
disabled (its namespace holds only ``lo``), running ``sleep`` under tight
limits, removed after the build.  The steps share its ``lo`` and nothing else.

An image with no ``sleep`` cannot hold the namespace: the build then runs with
``networkmode=none`` (offline still, with an endpoint) and says so in its log.
An engine that does not start the holder in time (a wedged one) raises
:class:`~arena.sandbox.docker.DockerUnavailable`: the platform's fault, never the build's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from arena.sandbox.docker import LABEL, NO_NETWORK, DockerUnavailable, env_labels

#: The label of a build's holder container (leftovers are found by :data:`LABEL` as any other).
HOLDER_LABEL = "arena.build-network"
#: The longest a holder lives if nobody removes it (a killed builder), for a build with no timeout.
HOLDER_LIFETIME_S = 6 * 3600
#: A holder outlives its build's timeout by this much, then ends by itself (and the engine's
#: prune, or its run's, removes what is left of it).
HOLDER_MARGIN_S = 120


def holder_lifetime(timeout_s: float | None) -> int:
    """Seconds a holder sleeps: its build's timeout and a margin, or :data:`HOLDER_LIFETIME_S`."""
    return HOLDER_LIFETIME_S if timeout_s is None else int(timeout_s) + HOLDER_MARGIN_S


def holder_settings(image: str, labels: dict[str, str], lifetime_s: int = HOLDER_LIFETIME_S) -> dict[str, Any]:
    """The ``containers.run`` arguments of a holder: no network, nothing writable, tiny limits."""
    return {
        "image": image,
        "entrypoint": ["sleep"],
        "command": [str(lifetime_s)],
        **NO_NETWORK,
        "read_only": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "user": "65534:65534",
        "mem_limit": 16 << 20,
        "memswap_limit": 16 << 20,
        "pids_limit": 4,
        "log_config": {"type": "none", "config": {}},
        "healthcheck": {"test": ["NONE"]},
        "labels": {**env_labels(), **labels, LABEL: "1", HOLDER_LABEL: "1"},
        "auto_remove": True,  # a holder whose builder was killed goes when its sleep ends
        "detach": True,
    }


@contextlib.contextmanager
def build_network(
    client: Any, image: str, on_note: Callable[[str], None] | None = None, *, timeout_s: float | None = None,
    labels: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """The ``networkmode`` for one build whose steps run on ``image``: ``container:<holder>``.

    The holder is removed when the block ends, however it ends; a builder
    killed meanwhile leaves one that ends by itself ``HOLDER_MARGIN_S`` after
    the build's ``timeout_s`` would have.  If it cannot start, ``"none"`` is
    yielded and ``on_note`` (if given) is told why.  ``labels`` go on the
    holder too (a run's ``arena.run``: the run's next start prune finds it).
    """
    import docker.errors

    settings = holder_settings(image, dict(labels or {}), holder_lifetime(timeout_s))
    settings.pop("detach")
    holder = None
    try:
        holder = client.containers.create(**settings)
        holder.start()
    except docker.errors.APIError as exc:  # the engine refused it (no such image, no sleep): offline all the same
        _remove(holder)
        if on_note is not None:
            on_note(f"the build's steps run on the engine's none network ({type(exc).__name__}: {exc})")
        yield "none"
        return
    except Exception as exc:  # no answer in time, or no engine: the platform's, never the build's
        _remove(holder)
        raise DockerUnavailable(
            f"the Docker engine did not start the build's network holder ({type(exc).__name__}: {exc})"
        ) from None
    try:
        yield f"container:{holder.id}"
    finally:
        _remove(holder)


def _remove(container: Any) -> None:
    if container is not None:
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)


__all__ = ["HOLDER_LABEL", "build_network", "holder_lifetime", "holder_settings"]
