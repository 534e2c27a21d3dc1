"""Whether the Docker engine can start a container now: an answer to a ping is not enough.

A Docker 20.10 engine caught in libnetwork's deadlock (moby/libnetwork#2679)
still answers pings, ``ps``, ``create`` and builds of cached steps, but never
starts or removes a container again.  :func:`engine_starts` asks for the one
thing every seat needs: a tiny container of ``image`` (``true``, no network,
read-only, 16 MiB, 8 processes) created, started, waited for and removed,
all within ``timeout`` seconds, in a thread of its own so that a call the
engine never answers cannot hold the caller.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from typing import Any

from arena.sandbox.docker import LABEL, DockerUnavailable, docker_client, env_labels

#: The label of a probe's container (a probe the engine could not remove is found by it).
PROBE_LABEL = "arena.engine-probe"
#: How long a probe may take: a healthy engine starts and removes its container in about a second.
START_PROBE_S = 30.0


def engine_starts(image: str, *, labels: Mapping[str, str] | None = None, timeout: float = START_PROBE_S) -> str | None:
    """None if the engine started (and removed) a container of ``image`` in time; else what went wrong, in a line.

    An engine without ``image`` is asked only to answer (a missing base image
    is the organiser's to mend, not an outage to wait for).
    """
    outcome: list[str | None] = []
    worker = threading.Thread(
        target=lambda: outcome.append(_start_and_remove(image, dict(labels or {}), timeout)),
        name="arena-engine-probe", daemon=True,
    )  # fmt: skip
    worker.start()
    worker.join(timeout + 5)
    if not outcome:
        return f"the Docker engine did not start a container within {timeout:g} s (it may answer pings all the same)"
    return outcome[0]


def _start_and_remove(image: str, labels: dict[str, str], timeout: float) -> str | None:
    import docker.errors
    from docker.types import LogConfig

    try:
        client = docker_client(timeout)
    except DockerUnavailable as exc:
        return f"no Docker engine answers ({exc})"
    container_id = None
    try:
        host_config = client.api.create_host_config(
            network_mode="none", read_only=True, cap_drop=["ALL"], mem_limit=16 << 20, memswap_limit=16 << 20,
            pids_limit=8, log_config=LogConfig(type="none"), security_opt=["no-new-privileges"],
        )  # fmt: skip
        container_id = client.api.create_container(
            image, ["true"], user="65534:65534", network_disabled=True, host_config=host_config,
            labels={**env_labels(), **labels, LABEL: "1", PROBE_LABEL: "1"},
        )["Id"]  # fmt: skip
        client.api.start(container_id)
        code = int(client.api.wait(container_id, timeout=timeout).get("StatusCode", -1))
        return None if code == 0 else f"the Docker engine's probe container exited with {code}"
    except docker.errors.ImageNotFound:
        return None  # it answered; the probe's image is not there to ask more
    except Exception as exc:  # noqa: BLE001 - whatever stopped it, the engine did not start a container
        return f"the Docker engine could not start a container ({type(exc).__name__}: {str(exc)[:200]})"
    finally:
        if container_id is not None:
            with contextlib.suppress(Exception):
                client.api.remove_container(container_id, force=True, v=True)
        client.close()


def prober(image: str, *, labels: Mapping[str, str] | None = None, timeout: float = START_PROBE_S) -> Any:
    """A probe for :class:`arena.ladder.common.engine_watch.EngineWatch`: True when the engine starts a container."""
    return lambda: engine_starts(image, labels=labels, timeout=timeout) is None


__all__ = ["PROBE_LABEL", "START_PROBE_S", "engine_starts", "prober"]
