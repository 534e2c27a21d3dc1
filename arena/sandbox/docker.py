"""Run a bot in a Docker container: one container per seat, no network, tight limits.

Each container gets ``network_mode="none"``, the match's socket directory
mounted at ``/arena`` (and nothing else of the host), a read-only root with a
small tmpfs at ``/tmp``, no capabilities, ``no-new-privileges``, a non-root
user, memory (= memory + swap), CPU and process limits, capped logs and a
label to find leftovers.  Stopping sends TERM, waits, then KILL; containers
are always removed.  Nothing here knows Spades.

The Docker SDK is synchronous; its calls run in worker threads, never on the
per-decision path.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

LABEL = "arena.managed"
MATCH_LABEL = "arena.match"
#: The run identity of the tournament (output directory) a container belongs to.
RUN_LABEL = "arena.run"
SOCKET_DIR_IN_CONTAINER = "/arena"
DEFAULT_USER = "10001:10001"
#: How long the daemon gets to answer when a container ended mid-match.
PLATFORM_CHECK_TIMEOUT_S = 5.0


class DockerUnavailable(RuntimeError):
    """No Docker engine answers, or the docker package is missing."""


class ImageNotFound(RuntimeError):
    """The image to run does not exist on this engine."""


@dataclasses.dataclass(frozen=True)
class ContainerLimits:
    """Resource limits for one seat's container."""

    memory: str = "256m"
    cpus: float = 1.0
    pids: int = 64
    tmpfs_size: str = "16m"
    log_cap_bytes: int = 1 << 20
    user: str = DEFAULT_USER


def docker_client() -> Any:
    """A client for the local engine; :class:`DockerUnavailable` with the reason if none."""
    try:
        import docker  # imported here: local-process matches must work without it
    except ImportError as exc:  # pragma: no cover - declared dependency
        raise DockerUnavailable(f"the docker Python package is not installed ({exc})") from None
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except Exception as exc:
        raise DockerUnavailable(
            f"no Docker engine answers ({type(exc).__name__}); start one "
            f"(see scripts/docker-setup.sh) or use cmd: bots"
        ) from None
    return client


def image_id(client: Any, image: str) -> str:
    """The ID of ``image``; :class:`ImageNotFound` if the engine does not have it."""
    import docker.errors

    try:
        return str(client.images.get(image).id)
    except docker.errors.ImageNotFound:
        raise ImageNotFound(
            f"image {image!r} not found on this Docker engine; build it with `arena bot build`"
        ) from None


def container_settings(
    image: str,
    env: Mapping[str, str],
    socket_dir: Path,
    limits: ContainerLimits,
    labels: Mapping[str, str],
    name: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``containers.run`` for one seat (ARCHITECTURE.md section 6)."""
    return {
        "image": image,
        "environment": dict(env),
        "network_mode": "none",
        "volumes": {str(socket_dir): {"bind": SOCKET_DIR_IN_CONTAINER, "mode": "rw"}},
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,noexec,nosuid,size={limits.tmpfs_size}"},
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "user": limits.user,
        "mem_limit": limits.memory,
        "memswap_limit": limits.memory,
        "nano_cpus": int(limits.cpus * 1e9),
        "pids_limit": limits.pids,
        "log_config": {"type": "json-file", "config": {"max-size": "1m", "max-file": "1"}},
        "labels": {LABEL: "1", **labels},
        "detach": True,
        "name": name,
    }


def _ping_anew(client: Any) -> None:
    """Ping the daemon on a new connection (raises if it does not answer).

    A stopping daemon closes its socket to new connections at once but keeps
    serving those already open (the client's pooled keep-alive ones) until
    it has stopped every container: only a new connection tells.
    """
    import docker

    api = client.api
    socket_path = getattr(getattr(api, "_custom_adapter", None), "socket_path", None)
    base_url = f"unix://{socket_path}" if socket_path else api.base_url
    fresh = docker.APIClient(base_url=base_url, version=api.api_version, timeout=PLATFORM_CHECK_TIMEOUT_S)
    if not socket_path:  # TCP: the same TLS settings
        fresh.cert, fresh.verify = api.cert, api.verify
    try:
        fresh.ping()
    finally:
        fresh.close()


class DockerProcess:
    """A running seat container, with the same interface as a local process."""

    def __init__(self, client: Any, container: Any, log_path: Path | None, limits: ContainerLimits) -> None:
        self.client = client
        self.container = container
        self.log_path = log_path
        self.limits = limits
        self._exit_code: int | None = None
        self._waiter = asyncio.ensure_future(asyncio.to_thread(self._wait))
        self._state: dict[str, Any] = {}
        self._stopped_by_platform = False

    @classmethod
    async def start(
        cls,
        client: Any,
        image: str,
        env: Mapping[str, str],
        socket_dir: Path,
        *,
        limits: ContainerLimits | None = None,
        labels: Mapping[str, str] | None = None,
        log_path: Path | None = None,
    ) -> DockerProcess:
        """Start one seat's container."""
        limits = limits or ContainerLimits()
        settings = container_settings(image, env, socket_dir, limits, labels or {})
        container = await asyncio.to_thread(client.containers.run, **settings)
        return cls(client, container, log_path, limits)

    def _wait(self) -> None:
        try:
            result = self.container.wait()
            self._exit_code = int(result.get("StatusCode", -1))
        except Exception:
            self._exit_code = -1

    def exited(self) -> bool:
        """True once the container has stopped."""
        return self._exit_code is not None

    @property
    def returncode(self) -> int | None:
        return self._exit_code

    async def platform_fault(self) -> str | None:
        """Why the platform, not the bot, ended this container; None when nothing says so.

        Asked once the container has ended mid-match.  A bot can end its own
        container (exit, crash, kill itself with any signal, run out of
        memory) but it cannot stop the Docker daemon nor remove its container:
        it has no way to the daemon.  So the container ended through the
        platform when the daemon does not answer (it is stopping: it closes
        its API first, then stops every container) or no longer knows the
        container (removed from outside).  Everything else is the bot's doing.
        """
        import docker.errors

        try:
            await asyncio.wait_for(asyncio.to_thread(_ping_anew, self.client), PLATFORM_CHECK_TIMEOUT_S)
        except Exception as exc:
            return f"the Docker daemon does not answer ({type(exc).__name__}): the container was stopped with it"
        try:
            await asyncio.wait_for(asyncio.to_thread(self.container.reload), PLATFORM_CHECK_TIMEOUT_S)
        except docker.errors.NotFound:
            return "the container was removed from outside the match"
        except Exception:
            return None
        if self.container.attrs.get("State", {}).get("Status") in ("removing", "dead"):
            # A forced removal marks it first, then kills it: it is being removed.
            return "the container was removed from outside the match"
        return None

    async def exit_detail(self) -> str:
        """Why the container ended: out of memory (from ``State.OOMKilled``) or its exit code."""
        state = await self._inspect_state()
        if state.get("OOMKilled"):
            return "killed: out of memory"
        return f"exited with code {state.get('ExitCode', self._exit_code)}"

    @property
    def oom_killed(self) -> bool:
        """Whether the kernel killed the container for memory (known after stop/exit_detail)."""
        return bool(self._state.get("OOMKilled"))

    async def _inspect_state(self) -> dict[str, Any]:
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.container.reload)
            self._state = dict(self.container.attrs.get("State", {}))
        return self._state

    async def stop(self, grace: float = 2.0) -> int:
        """TERM, ``grace`` seconds, KILL; save the capped log; always remove."""
        try:
            if not self.exited():
                self._stopped_by_platform = True
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self.container.stop, timeout=max(1, int(round(grace))))
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(self._waiter, 30)
            await self._inspect_state()
            await self._save_log()
        finally:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.container.remove, force=True)
        return self._exit_code if self._exit_code is not None else -1

    async def _save_log(self) -> None:
        if self.log_path is None:
            return
        with contextlib.suppress(Exception):
            data: bytes = await asyncio.to_thread(self.container.logs, stdout=True, stderr=True)
            cap = self.limits.log_cap_bytes
            with self.log_path.open("wb") as f:
                f.write(data[:cap])
                if len(data) > cap:
                    f.write(f"\n[arena: {len(data) - cap} more bytes of output dropped]\n".encode())
                if self._state.get("OOMKilled"):
                    f.write(b"\n[arena: killed: out of memory]\n")


def prune(
    client: Any,
    match_prefix: str | None = None,
    *,
    run: str | None = None,
    include_running: bool = False,
) -> list[str]:
    """Remove the containers the arena labelled; returns their names.

    With ``run`` only those labelled with that run identity (``arena.run``),
    so another tournament (even one with the same name) is left alone; with
    ``match_prefix`` only those whose match id starts with it.  Running
    containers may belong to a match in progress: they are removed only with
    ``include_running``.
    """
    removed = []
    labels = [LABEL] if run is None else [LABEL, f"{RUN_LABEL}={run}"]
    # The list's own fields (no inspect per container): a container another
    # run removes meanwhile must not make this fail.
    for info in client.api.containers(all=True, filters={"label": labels}):
        match = (info.get("Labels") or {}).get(MATCH_LABEL, "")
        if match_prefix is not None and not match.startswith(match_prefix):
            continue
        if info.get("State") == "running" and not include_running:
            continue
        with contextlib.suppress(Exception):
            client.api.remove_container(info["Id"], force=True)
            removed.append(str((info.get("Names") or [info["Id"][:12]])[0]).lstrip("/"))
    return removed
