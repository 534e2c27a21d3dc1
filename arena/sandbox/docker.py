"""Run a bot in a Docker container: one container per seat, no network, tight limits.

Each container has networking disabled (``network_disabled=True`` with
``network_mode="none"``: no libnetwork endpoint at all, only ``lo``; see
:data:`NO_NETWORK`), the match's socket directory
mounted at ``/arena`` (and nothing else of the host), a read-only root with a
small tmpfs at ``/tmp`` and a 1 MiB ``/dev/shm`` (both ``noexec``, both
charged to the seat's memory limit), no capabilities, ``no-new-privileges``,
the arena's own seccomp profile, a non-root user, memory (= memory + swap),
CPU and process limits, no health check, and labels to find leftovers
(``arena.managed``, the match, the run).  Stopping sends TERM, waits, then
KILL; containers are always removed, with any volume they had.

Learned from red teams (docs/reliability.md, "Containment"):

- an image's own ``VOLUME`` paths get an empty read-only tmpfs instead of a
  writable anonymous volume (which would bypass the read-only root and the
  /tmp limit, and be left behind on the host);
- host-wide counters a seat could use to signal its partner are hidden:
  ``/proc/loadavg``, ``/proc/stat``, ``/proc/meminfo``, ``/proc/uptime`` ...
  are static files written by the runner (bind-mounted read-only); all of
  ``/proc/sys`` (``fs/aio-nr``, ``kernel/pty/nr``, ``fs/inode-state`` ...),
  the other counters of ``/proc`` (pressure, vmstat, interrupts, cgroups,
  crypto, irq, fs ...) and every host directory of ``/sys`` but the seat's
  own cgroup and network (``/sys/devices``, ``/sys/kernel``, ``/sys/module``,
  ``/sys/fs/ext4`` ...) are masked, and so are the host's ``/proc/cmdline``
  and ``/proc/partitions``;
- the seccomp profile (``seccomp.json``, next to this module) is Docker's
  default minus the system calls that reach host-wide state no file mask
  covers: ``io_setup`` and the other aio calls (each adds to the host-wide
  ``aio-nr``, and one seat could take every slot of the host), all of
  ``io_uring`` (a large kernel surface that performs operations the profile
  refuses as system calls) and ``sysinfo`` (the host's process count).  They
  fail with ``ENOSYS``, as on a kernel without them, so libraries fall back;
- an image's ``HEALTHCHECK`` is switched off (``NONE``): the daemon would
  run it as often as the image asks (every millisecond), outside the seat's
  CPU limit;
- the seat's output never goes through a Docker log driver (``none``): the
  daemon's json-file driver parses and stores every line, outside the seat's
  CPU limit, and its rotation kept the end of a flood and dropped the start.
  Instead the runner attaches to the container before it starts and reads
  its stdout and stderr as they come (:class:`_LogPipe`): the first
  ``log_cap_bytes`` are kept; after that the runner reads on and drops, but
  no faster than :data:`DRAIN_BYTES_PER_S`.  The pipe then fills and a
  flooding seat's writes block, on its own time (its clock runs), so the
  daemon and the runner never do more than that rate of work for it; a seat
  that prints a little more than its cap only loses the excess;
- labels the image declares pass into its containers (Docker merges them
  and has no way to remove one): every image label is overridden with an
  empty value, and the platform's own (``arena.*`` and ``ARENA_LABELS``)
  win, so an image's ``com.docker.compose.project=x`` or ``arena.run=y``
  matches nobody's ``key=value`` filter.  The key itself stays: a filter on
  the key alone (``label=com.docker.compose.project``) still finds the seat;
- an image whose own configuration stops every container of it from
  starting (``VOLUME /sys/x``: the tmpfs over that path cannot be mounted
  under ``/sys``) makes the daemon answer 500, as for a fault of its own:
  the same seat settings are then tried on a known-good image
  (:data:`CONTROL_IMAGES`); if that starts, the image is tried once more,
  and only a second failure in the same way (ids aside) is the seat's crash
  (:class:`BotStartFailed`), not a void the image could force forever.  A
  passing fault of the daemon (a containerd timeout on a loaded machine)
  thus never charges an honest seat, and neither does a 5xx for an image
  that has started a container in this process;
- the static ``/proc`` files live in ``arena-proc-<pid>-*`` in the temp
  directory while seats use them and are removed when the last seat of the
  process stops (table processes end without ``atexit``); folders of
  processes that no longer exist are pruned when a new one is made.

Nothing here knows Spades.

The Docker SDK is synchronous; its calls run in worker threads, never on the
per-decision path.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import functools
import importlib.resources
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

LABEL = "arena.managed"
MATCH_LABEL = "arena.match"
#: The run (a tournament's run id, one ``arena match run``) that started a container.
RUN_LABEL = "arena.run"
#: Extra labels for every container, ``key=value,key=value`` (e.g. a CI job's own, to find its containers).
LABELS_ENV = "ARENA_LABELS"
SOCKET_DIR_IN_CONTAINER = "/arena"
DEFAULT_USER = "10001:10001"
#: The match label of a preflight container (:func:`start_once`) starts with this.
PREFLIGHT_MATCH = "preflight"
#: The label only preflight containers carry (a game's match id is the run's to choose), so
#: :func:`prune_preflight` never touches a game's container of the same run.
PREFLIGHT_LABEL = "arena.preflight"
#: How long the daemon gets to answer when a container ended mid-match.
PLATFORM_CHECK_TIMEOUT_S = 5.0


class DockerUnavailable(ArenaError, RuntimeError):
    """No Docker engine answers, or the docker package is missing."""


class ImageNotFound(ArenaError, RuntimeError):
    """The image to run does not exist on this engine."""


class BotStartFailed(OSError):
    """The engine could not start the image: the bot's fault, like a missing executable or a ``VOLUME /sys/x``.

    An ``OSError`` so that the match host charges it to the seat as a crash
    (as for a local command that cannot run).  Every other failure to start a
    container is the platform's: :class:`SeatStartError`, never an ``OSError``.
    """


class SeatStartError(RuntimeError):
    """The platform could not start a seat's container (daemon gone, engine error): void, not a crash."""


@dataclasses.dataclass(frozen=True)
class ContainerLimits:
    """Resource limits for one seat's container."""

    memory: str = "256m"
    cpus: float = 1.0
    pids: int = 64
    tmpfs_size: str = "16m"
    log_cap_bytes: int = 1 << 20
    user: str = DEFAULT_USER
    #: ``/dev/shm``: Docker's default is 64 MiB of writable memory beyond the ``/tmp`` cap.
    shm_size: str = "1m"


#: Files of ``/proc`` that Docker lets a bind mount cover (lxcfs's list): these get
#: static contents.  Their live versions carry host-wide load, CPU and memory counters.
STATIC_PROC_FILES = ("loadavg", "stat", "meminfo", "uptime", "diskstats", "swaps", "cpuinfo")
#: Docker's own default masked paths (``MaskedPaths`` replaces them, so they are repeated).
_DOCKER_MASKED = (
    "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
)  # fmt: skip
#: Host-wide counters and host details of ``/proc`` that cannot be bind-mounted over:
#: masked (an empty file, or an empty read-only tmpfs for a directory).  All of
#: ``/proc/sys``: ``fs/aio-nr``, ``kernel/pty/nr``, ``fs/inode-state``, ``fs/file-nr`` ...
#: change with every container's activity, the rest are settings a bot has no use for.
HOST_COUNTERS_MASKED = (
    "/proc/sys", "/proc/pressure", "/proc/vmstat", "/proc/zoneinfo", "/proc/buddyinfo", "/proc/pagetypeinfo",
    "/proc/schedstat", "/proc/interrupts", "/proc/softirqs", "/proc/locks", "/proc/key-users",
    "/proc/cgroups", "/proc/crypto", "/proc/irq", "/proc/fs", "/proc/bus", "/proc/driver",
    "/proc/cmdline", "/proc/partitions", "/proc/config.gz", "/proc/bootconfig", "/proc/iomem", "/proc/ioports",
)  # fmt: skip
#: Every host directory of ``/sys`` but ``class`` (the seat's own network namespace:
#: ``/sys/class/net/lo``) and ``fs`` (whose ``cgroup`` is the seat's own; its other
#: entries are masked one by one, :func:`masked_paths`).  ``/sys/devices`` holds each
#: NUMA node's memory, each disk's I/O, each CPU's idle time, the writeback limits
#: (``virtual/bdi``: they follow the host's free memory); ``/sys/kernel`` the
#: interrupt counts (``irq``) and transparent huge page counters (``mm``).
SYS_MASKED = (
    "/sys/block", "/sys/bus", "/sys/dev", "/sys/devices", "/sys/hypervisor", "/sys/kernel", "/sys/module",
    "/sys/power",
)  # fmt: skip
#: Entries of ``/sys/fs`` masked even when this machine lacks them (per-filesystem counters:
#: ext4's ``lifetime_write_kbytes`` ...); the machine's own are added.
SYS_FS_MASKED = ("bpf", "btrfs", "ecryptfs", "erofs", "ext4", "f2fs", "fuse", "nfs", "pstore", "selinux", "smackfs", "tmpfs", "xfs")
MASKED_PATHS = (*_DOCKER_MASKED, *HOST_COUNTERS_MASKED, *SYS_MASKED)


@functools.cache
def masked_paths() -> tuple[str, ...]:
    """:data:`MASKED_PATHS` and every entry of ``/sys/fs`` but ``cgroup``, found once per process.

    The ``/sys/fs`` entries depend on the machine's file systems.  They are
    read here on the runner, which is the engine's machine when seats run
    locally; a path the engine's machine lacks is skipped by the runtime.
    """
    names = set(SYS_FS_MASKED)
    with contextlib.suppress(OSError):
        names.update(os.listdir("/sys/fs"))
    names.discard("cgroup")
    return (*MASKED_PATHS, *(f"/sys/fs/{name}" for name in sorted(names)))


#: The arena's seccomp profile, a data file of this package (Docker's default minus aio, io_uring, sysinfo).
SECCOMP_FILE = "seccomp.json"


@functools.cache
def seccomp_profile() -> str:
    """The seccomp profile's JSON, compact: Docker takes the profile's content, not a path."""
    text = importlib.resources.files(__package__ or "arena.sandbox").joinpath(SECCOMP_FILE).read_text()
    return json.dumps(json.loads(text), separators=(",", ":"))


#: The environment variable that bounds each call to the engine (seconds; default :data:`DOCKER_TIMEOUT_S`).
DOCKER_TIMEOUT_ENV = "ARENA_DOCKER_TIMEOUT"
#: How long one call to the engine may take unless ``ARENA_DOCKER_TIMEOUT`` says otherwise.
DOCKER_TIMEOUT_S = 60.0


def docker_timeout() -> float:
    """Seconds one call to the engine may take: ``ARENA_DOCKER_TIMEOUT`` if it holds a positive number, else 60."""
    try:
        value = float(os.environ.get(DOCKER_TIMEOUT_ENV, ""))
    except ValueError:
        return DOCKER_TIMEOUT_S
    return value if value > 0 else DOCKER_TIMEOUT_S


def docker_client(timeout: float | None = None) -> Any:
    """A client for the local engine (its calls bounded by ``timeout`` s, default :func:`docker_timeout`).

    :class:`DockerUnavailable` with the reason if none answers.
    """
    timeout = docker_timeout() if timeout is None else timeout
    try:
        import docker  # imported here: local-process matches must work without it
    except ImportError as exc:  # pragma: no cover - declared dependency
        raise DockerUnavailable(f"the docker Python package is not installed ({exc})") from None
    try:
        client = docker.from_env(timeout=timeout)
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


def image_volumes(client: Any, image: str) -> list[str]:
    """The ``VOLUME`` paths ``image`` declares (its own and its base images'), sorted."""
    return _volumes(client.images.get(image).attrs)


def _volumes(attrs: Mapping[str, Any]) -> list[str]:
    declared = (attrs.get("Config") or {}).get("Volumes") or {}
    return sorted(str(path) for path in declared)


#: Prefix of the static ``/proc`` folders in the temp directory: ``arena-proc-<pid>-<random>``.
PROC_DIR_PREFIX = "arena-proc-"
_proc_root: Path | None = None
_proc_users = 0
_proc_lock = threading.Lock()


def static_proc_dir(limits: ContainerLimits) -> Path:
    """The directory of static ``/proc`` files for a new seat with ``limits``; give it back with :func:`release_proc_dir`.

    The numbers are plausible but fixed (an idle machine with the seat's own
    memory limit), so nothing any seat does shows up in them.  The files live
    outside the match's socket directory (a seat's ``/arena`` holds only the
    referee's socket) in one folder per runner process, ``arena-proc-<pid>-*``
    in the temp directory.  It is removed when its last seat is given back
    (and at exit): a table process ends without running ``atexit``, so that
    alone left one folder per table.  Making a folder first prunes those of
    processes that no longer exist (a runner killed with SIGKILL).
    """
    global _proc_root, _proc_users
    with _proc_lock:
        if _proc_root is None or not _proc_root.is_dir():
            prune_proc_dirs()
            _proc_root = Path(tempfile.mkdtemp(prefix=f"{PROC_DIR_PREFIX}{os.getpid()}-"))
            _proc_root.chmod(0o755)
            atexit.register(shutil.rmtree, _proc_root, True)
        directory = _proc_root / f"mem-{_bytes(limits.memory)}"
        if not directory.is_dir():
            _write_proc_files(directory, limits)
        _proc_users += 1
    return directory


def release_proc_dir() -> None:
    """A seat no longer uses its static ``/proc`` files: the last one removes the folder.

    A running container keeps the files it bind-mounted (a mount holds the
    file, not its name), so removing the folder never harms a seat.
    """
    global _proc_root, _proc_users
    with _proc_lock:
        _proc_users = max(0, _proc_users - 1)
        if _proc_users == 0 and _proc_root is not None:
            shutil.rmtree(_proc_root, ignore_errors=True)
            _proc_root = None


def prune_proc_dirs(temp_dir: Path | None = None) -> list[Path]:
    """Remove the static ``/proc`` folders of this user's processes that no longer exist; returns them.

    The owner's process id is in the folder's name.  Folders of a live
    process, of another user, or without a process id (an older version's:
    ``arena-proc-<random>``) are kept: remove those by hand when no run is active.
    """
    removed = []
    root = temp_dir or Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            pid_text = entry.name[len(PROC_DIR_PREFIX):].partition("-")[0]
            if not (entry.name.startswith(PROC_DIR_PREFIX) and pid_text.isdigit()):
                continue
            with contextlib.suppress(OSError):
                if entry.is_symlink() or not entry.is_dir() or entry.stat().st_uid != os.getuid():
                    continue
                if _process_exists(int(pid_text)):
                    continue
                shutil.rmtree(entry)
                removed.append(entry)
    return removed


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except OSError:  # EPERM: another user's process
        return True
    return True


def _write_proc_files(directory: Path, limits: ContainerLimits) -> None:
    tmp = directory.with_name(directory.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    tmp.chmod(0o755)
    cpus = max(1, os.cpu_count() or 1)
    memory_kb = _bytes(limits.memory) // 1024
    files = {
        "loadavg": "0.00 0.00 0.00 1/1 1\n",
        "uptime": "1000.00 1000.00\n",
        "stat": "".join(
            [f"cpu  0 0 0 {100000 * cpus} 0 0 0 0 0 0\n"]
            + [f"cpu{i} 0 0 0 100000 0 0 0 0 0 0\n" for i in range(cpus)]
            + ["intr 0\nctxt 0\nbtime 1000000000\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0\n"]
        ),
        "meminfo": "".join(
            f"{key}:{value:>16} kB\n"
            for key, value in (
                ("MemTotal", memory_kb), ("MemFree", memory_kb), ("MemAvailable", memory_kb),
                ("Buffers", 0), ("Cached", 0), ("SwapCached", 0), ("Active", 0), ("Inactive", 0),
                ("SwapTotal", 0), ("SwapFree", 0), ("Dirty", 0), ("Shmem", 0),
            )
        ),  # fmt: skip
        "diskstats": "",
        "swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
        "cpuinfo": "".join(
            f"processor\t: {i}\nmodel name\t: arena seat CPU\ncpu MHz\t\t: 1000.000\n\n" for i in range(cpus)
        ),
    }
    for name in STATIC_PROC_FILES:
        (tmp / name).write_text(files[name])
        (tmp / name).chmod(0o444)
    tmp.rename(directory)


def _bytes(size: str) -> int:
    """``256m`` -> bytes (Docker's units: b, k, m, g)."""
    text = size.strip().lower()
    units = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


#: The network settings of every container the arena starts: no network at all.  ``network_mode``
#: "none" alone still makes each container an endpoint on the engine's shared ``none`` network, and
#: Docker 20.10 before 20.10.27 (Debian bookworm's docker.io) can deadlock when two such containers
#: end at once (moby/libnetwork#2679: exit clean-up and endpoint deletion take the network's and the
#: controller's locks in opposite orders); the engine then starts and removes no container again.
#: With networking disabled the engine creates no endpoint: the container gets a network namespace
#: of its own holding only ``lo``, and libnetwork is never called for it.
NO_NETWORK: dict[str, Any] = {"network_mode": "none", "network_disabled": True}


def container_settings(
    image: str,
    env: Mapping[str, str],
    socket_dir: Path,
    limits: ContainerLimits,
    labels: Mapping[str, str],
    name: str | None = None,
    *,
    hidden_volumes: Sequence[str] = (),
    proc_dir: Path | None = None,
    image_labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``containers.run`` for one seat (docs/reliability.md).

    ``hidden_volumes``: the image's ``VOLUME`` paths, each covered by an empty
    read-only tmpfs so that no volume is created.  ``proc_dir``: static
    ``/proc`` files (:func:`static_proc_dir`) mounted read-only over the live ones.
    ``image_labels``: the image's labels, which the container would inherit:
    each is overridden with an empty value, and ``labels`` (the platform's) win.
    The masked paths (``MASKED_PATHS``) are not a ``containers.run`` argument:
    :meth:`DockerProcess.start` adds them.
    """
    from docker.types import Mount

    binds = {str(socket_dir): {"bind": SOCKET_DIR_IN_CONTAINER, "mode": "rw"}}
    if proc_dir is not None:
        for file in STATIC_PROC_FILES:
            binds[str(proc_dir / file)] = {"bind": f"/proc/{file}", "mode": "ro"}
    covered = {"/tmp", SOCKET_DIR_IN_CONTAINER}
    mounts = [
        Mount(target=path, source=None, type="tmpfs", read_only=True, tmpfs_size=4096)
        for path in hidden_volumes
        if path.rstrip("/") not in covered
    ]
    return {
        "image": image,
        "environment": dict(env),
        **NO_NETWORK,
        "volumes": binds,
        "mounts": mounts,
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,noexec,nosuid,size={limits.tmpfs_size}"},
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges", f"seccomp={seccomp_profile()}"],
        "shm_size": limits.shm_size,
        "user": limits.user,
        "mem_limit": limits.memory,
        "memswap_limit": limits.memory,
        "nano_cpus": int(limits.cpus * 1e9),
        "pids_limit": limits.pids,
        # The runner reads the output itself (_LogPipe): the daemon stores nothing.
        "log_config": {"type": "none", "config": {}},
        "healthcheck": {"test": ["NONE"]},
        "labels": {**dict.fromkeys(image_labels or {}, ""), LABEL: "1", **labels},
        "detach": True,
        "name": name,
    }


def env_labels() -> dict[str, str]:
    """The labels ``ARENA_LABELS`` asks for (entries without ``=`` are ignored)."""
    pairs = (item.partition("=") for item in os.environ.get(LABELS_ENV, "").split(","))
    return {key.strip(): value.strip() for key, eq, value in pairs if eq and key.strip()}


def _create_and_start(
    client: Any, image: str, env: Mapping[str, str], socket_dir: Path, limits: ContainerLimits,
    labels: Mapping[str, str], log_path: Path | None,
) -> tuple[Any, _LogPipe | None]:
    """Create the seat's container (masked paths added), attach to its output, start it.

    A container that fails is removed; the static ``/proc`` folder taken for
    the seat is given back then (else when the seat stops).  A failure is
    :class:`BotStartFailed` (the seat's crash) when the engine refuses the
    request (4xx) or when the image's own configuration is the cause: the
    daemon failed (5xx), a known-good image started with the same settings
    (:func:`_fault_of_image`) and the image's own retry then failed in the
    same way (:func:`_same_failure`).  A retry that starts is the seat's
    container: the first failure was a passing one of the platform (a
    containerd timeout on a loaded machine).  Anything else is raised as it
    is (the caller makes it a :class:`SeatStartError`: void, not charged).
    """
    import docker.errors

    config = client.images.get(image).attrs
    proc_dir = static_proc_dir(limits)
    all_labels = {**env_labels(), **labels}
    args = (client, image, config, env, socket_dir, limits, all_labels, proc_dir, log_path)
    try:
        try:
            started = _attempt_start(*args)
        except docker.errors.APIError as exc:
            if exc.is_client_error():
                raise BotStartFailed(f"the container did not start: {_daemon_reason(exc)}") from None
            # An image that started a container in this process has no configuration that stops it:
            # its 5xx is the platform's, whatever a control says.
            if config.get("Id") in _started_images or not _fault_of_image(
                client, exc, socket_dir, limits, all_labels, proc_dir
            ):
                raise
            try:
                started = _attempt_start(*args)  # the control started: is this image refused every time?
            except docker.errors.APIError as again:
                if again.is_client_error():
                    raise BotStartFailed(f"the container did not start: {_daemon_reason(again)}") from None
                if _same_failure(exc, again):
                    raise BotStartFailed(f"its image cannot start a container: {_daemon_reason(again)}") from None
                raise
    except BaseException:
        release_proc_dir()
        raise
    if config.get("Id"):
        _started_images.add(str(config["Id"]))
    return started


#: IDs of the images that started a container in this process (a later 5xx for one is the platform's).
_started_images: set[str] = set()


def _attempt_start(
    client: Any, image: str, config: Mapping[str, Any], env: Mapping[str, str], socket_dir: Path,
    limits: ContainerLimits, labels: Mapping[str, str], proc_dir: Path, log_path: Path | None,
) -> tuple[Any, _LogPipe | None]:
    """One try at creating, attaching to and starting a seat's container; removed again if it fails."""
    container_id = None
    pipe = None
    try:
        kwargs = _create_kwargs(client, image, config, env, socket_dir, limits, labels, proc_dir)
        container_id = client.api.create_container(**kwargs)["Id"]
        if log_path is not None:
            # Attached before the start: the output is read from its first byte.
            pipe = _LogPipe(client, container_id, log_path, limits.log_cap_bytes)
        client.api.start(container_id)
        return client.containers.get(container_id), pipe
    except BaseException:
        if pipe is not None:
            pipe.close()
        if container_id is not None:
            with contextlib.suppress(Exception):
                client.api.remove_container(container_id, force=True, v=True)
        raise


def _same_failure(first: Exception, second: Exception) -> bool:
    """Whether two failures of the daemon are the same one (kind, status, words), ids and numbers aside."""
    return (
        type(first) is type(second)
        and getattr(first, "status_code", None) == getattr(second, "status_code", None)
        and _normalised_reason(first) == _normalised_reason(second)
    )


def _normalised_reason(exc: Exception) -> str:
    """The daemon's reason with what differs from one container to the next (ids, numbers) blanked."""
    text = _daemon_reason(exc).lower()
    text = re.sub(r"[0-9a-f]{12,}", "<id>", text)
    return re.sub(r"\d+", "<n>", text)


def _daemon_reason(exc: Exception) -> str:
    """The part of the daemon's error that says what failed (after the runtime's boilerplate)."""
    text = str(getattr(exc, "explanation", None) or exc)
    for boilerplate in ("error during container init: ", "unable to start container process: "):
        if boilerplate in text:
            text = text.rpartition(boilerplate)[2]
            break
    # The daemon's own storage path of the container's root (``/var/lib/docker/overlay2/<id>/merged``) is noise.
    return re.sub(r"/\S*/merged(?=/)", "", text.removesuffix(": unknown"))


def _create_kwargs(
    client: Any, image: str, config: Mapping[str, Any], env: Mapping[str, str], socket_dir: Path,
    limits: ContainerLimits, labels: Mapping[str, str], proc_dir: Path,
) -> dict[str, Any]:
    """The ``create_container`` arguments of one seat of ``image`` (whose ``inspect`` is ``config``)."""
    from docker.models.containers import _create_container_args

    settings = container_settings(
        image, env, socket_dir, limits, labels,
        hidden_volumes=_volumes(config), proc_dir=proc_dir,
        image_labels=(config.get("Config") or {}).get("Labels") or {},
    )  # fmt: skip
    settings.pop("detach")
    kwargs = _create_container_args({**settings, "version": client.api._version})
    kwargs["host_config"]["MaskedPaths"] = list(masked_paths())
    return kwargs


#: Images known to start with a seat's settings, tried in this order (the first the engine has)
#: as the control when a seat's image cannot start; ``ARENA_BASE_IMAGE`` (the organiser's base
#: image, which bot images are built on) comes first.
CONTROL_IMAGES = ("arena-base:bookworm", "python:3.11-slim")
#: Words of the daemon's error that say the machine ran out of something: the platform's fault, whatever the image.
RESOURCE_FAULTS = (
    "no space left", "disk quota", "cannot allocate memory", "out of memory", "too many open files",
    "resource temporarily unavailable",
)  # fmt: skip


def control_images() -> list[str]:
    """The names :func:`_fault_of_image` tries as the control, in order (``ARENA_BASE_IMAGE`` first)."""
    return [name for name in dict.fromkeys([os.environ.get("ARENA_BASE_IMAGE", "").strip(), *CONTROL_IMAGES]) if name]


def _fault_of_image(
    client: Any, exc: Exception, socket_dir: Path, limits: ContainerLimits, labels: Mapping[str, str], proc_dir: Path
) -> bool:
    """Whether the image's own configuration, not the platform, made the daemon fail (5xx) to start its seat.

    The daemon answers 500 for a container the runtime could not set up,
    whatever the reason: an image's ``VOLUME /sys/x`` (the sandbox's tmpfs
    over a VOLUME path cannot be mounted there), a ``WORKDIR`` that is a
    file ... or a full disk.  So the same seat settings are tried with a
    known-good image (:func:`control_images`, running ``true``; it has no
    ``VOLUME`` of its own): if that starts, the daemon and the machine are
    fine and what differs is the image.  The error's text alone never
    charges the seat; a machine out of disk, memory or files never does,
    and neither does a failure with no control image to compare with.
    """
    text = str(exc).lower()
    if any(marker in text for marker in RESOURCE_FAULTS):
        return False
    for name in control_images():
        try:
            config = client.images.get(name).attrs
        except Exception:  # noqa: BLE001 - not on this engine: the next one
            continue
        return _control_starts(client, name, config, socket_dir, limits, labels, proc_dir)
    return False


def _control_starts(
    client: Any, image: str, config: Mapping[str, Any], socket_dir: Path, limits: ContainerLimits,
    labels: Mapping[str, str], proc_dir: Path,
) -> bool:
    """Whether a container of ``image`` running ``true`` starts with a seat's settings; it is removed."""
    kwargs = _create_kwargs(client, image, config, {}, socket_dir, limits, labels, proc_dir)
    kwargs.update(entrypoint=["true"], command=None, name=None)
    control_id = None
    try:
        control_id = client.api.create_container(**kwargs)["Id"]
        client.api.start(control_id)
        return True
    except Exception:  # noqa: BLE001 - the platform fails for a known-good image too (or cannot tell)
        return False
    finally:
        if control_id is not None:
            with contextlib.suppress(Exception):
                client.api.remove_container(control_id, force=True, v=True)


#: How fast a seat's output is read (and dropped) once its log is full: the work the daemon and
#: the runner do for a seat that floods its output.
DRAIN_BYTES_PER_S = 64 << 10


class _LogPipe:
    """A seat's stdout and stderr, read by the runner from the daemon's attach stream, capped.

    The first ``cap`` bytes (both streams, in the order they arrive) go to
    ``log_path``; the rest is read and dropped at :data:`DRAIN_BYTES_PER_S`
    at most.  Docker stores nothing (log driver ``none``).  A thread reads:
    the Docker SDK is synchronous, and a quiet seat costs only a blocked read.
    """

    def __init__(self, client: Any, container_id: str, log_path: Path, cap: int) -> None:
        self.log_path = log_path
        self.cap = cap
        self.kept = 0
        self.overflowed = False
        self._closing = threading.Event()
        self._socket = client.api.attach_socket(container_id, params={"stdout": 1, "stderr": 1, "stream": 1})
        self._thread = threading.Thread(target=self._pump, name=f"seat-log-{container_id[:12]}", daemon=True)
        self._thread.start()

    def _frames(self) -> Iterator[bytes]:
        from docker.utils.socket import frames_iter

        for _stream, data in frames_iter(self._socket, False):
            yield data

    def _pump(self) -> None:
        log = None
        with contextlib.suppress(OSError):  # no log (disk full...) must not stop the seat
            log = self.log_path.open("wb")
        try:
            # The stream may break (daemon gone, stream closed at stop): what came is kept.
            with contextlib.suppress(OSError, ValueError):
                self._copy(log)
        finally:
            if log is not None:
                with contextlib.suppress(OSError):
                    log.close()
            self.close()

    def _copy(self, log: Any) -> None:
        frames = self._frames()
        for data in frames:
            room = self.cap - self.kept
            if log is not None:
                try:
                    log.write(data[:room])
                except OSError:  # the disk is full: count on, unlogged
                    with contextlib.suppress(OSError):
                        log.close()
                    log = None
            self.kept += min(room, len(data))
            if len(data) > room:
                self.overflowed = True
                break
        for data in frames:  # past the cap: dropped, read no faster than DRAIN_BYTES_PER_S
            if self._closing.is_set() or self._closing.wait(len(data) / DRAIN_BYTES_PER_S):
                return

    def stop_draining(self) -> None:
        """Stop reading past the cap: the stream closes, the daemon drops the rest at once.

        Before the platform stops the seat: a container's exit is reported only
        once its output pipe is empty, which a slow drain would delay.
        """
        self._closing.set()

    def close(self) -> None:
        """Close the attach stream (the reader ends)."""
        self._closing.set()
        sock = self._socket
        with contextlib.suppress(Exception):
            raw = getattr(sock, "_sock", None)
            if raw is not None:
                import socket as _socket

                raw.shutdown(_socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            sock.close()
        with contextlib.suppress(Exception):
            sock._response.close()

    def finish(self, oom_killed: bool, timeout: float = 5.0) -> None:
        """Wait for the reader (the container has ended), then add the notes a reader of the log needs."""
        self.stop_draining()
        self._thread.join(timeout)
        if self._thread.is_alive():
            self.close()
            self._thread.join(timeout)
        notes = []
        if self.overflowed:
            notes.append(f"\n[arena: output after the first {self.cap} bytes dropped]\n")
        if oom_killed:
            notes.append("\n[arena: killed: out of memory]\n")
        if notes:
            with contextlib.suppress(OSError), self.log_path.open("ab") as f:
                f.write("".join(notes).encode())


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

    #: How long after its stream broke the referee waits to see this container
    #: exit (a crash) before calling it a disconnect: the exit reaches us through
    #: the daemon's wait call, which on a loaded machine took over half a second
    #: for a container killed for memory.
    exit_grace_s = 3.0

    def __init__(
        self, client: Any, container: Any, log_path: Path | None, limits: ContainerLimits, log_pipe: _LogPipe | None = None
    ) -> None:
        self.client = client
        self.container = container
        self.log_path = log_path
        self.limits = limits
        self._log_pipe = log_pipe
        self._released = False
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
        """Start one seat's container.

        :class:`BotStartFailed` when the engine refuses to start the image's
        command (the bot's own fault, e.g. its entrypoint does not exist) or
        the image's own configuration stops it (a known-good image starts with
        the same settings); :class:`SeatStartError` for the platform's faults.
        The container it created is removed either way.
        """
        limits = limits or ContainerLimits()
        try:
            container, pipe = await asyncio.to_thread(
                _create_and_start, client, image, env, socket_dir, limits, labels or {}, log_path
            )
        except (BotStartFailed, SeatStartError):
            raise
        except Exception as exc:  # requests' ConnectionError is an OSError: it must not read as the bot's
            raise SeatStartError(f"the Docker engine could not start a container: {type(exc).__name__}: {exc}") from exc
        return cls(client, container, log_path, limits, pipe)

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

    def cpu_seconds(self) -> float | None:
        """CPU time every process of the container has used so far (its cgroup), or None if unreadable."""
        path = getattr(self, "_cpu_path", "")
        if path == "":
            path = self._cpu_path = _cgroup_cpu_file(self.container.id)
        if path is None:
            return None
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                text = os.pread(fd, 256, 0).decode()
            finally:
                os.close(fd)
        except OSError:
            return None
        if path.endswith("cpuacct.usage"):  # cgroup v1: nanoseconds
            return int(text) / 1e9
        return int(text.split(None, 2)[1]) / 1e6  # cgroup v2 cpu.stat: "usage_usec N ..."

    async def _inspect_state(self) -> dict[str, Any]:
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.container.reload)
            self._state = dict(self.container.attrs.get("State", {}))
        return self._state

    async def stop(self, grace: float = 2.0) -> int:
        """TERM, ``grace`` seconds, KILL; finish the capped log; always remove."""
        try:
            if self._log_pipe is not None:
                self._log_pipe.stop_draining()
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
                # v=True: anonymous volumes go with it (an image's VOLUME gets none, but never leave one).
                await asyncio.to_thread(self.container.remove, force=True, v=True)
            if self._log_pipe is not None:
                self._log_pipe.close()  # removed: a reader still waiting gets its end
            if not self._released:
                self._released = True
                release_proc_dir()
        return self._exit_code if self._exit_code is not None else -1

    async def _save_log(self) -> None:
        if self._log_pipe is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._log_pipe.finish, bool(self._state.get("OOMKilled")))


def prune(
    client: Any,
    match_prefix: str | None = None,
    *,
    run: str | None = None,
    include_running: bool = False,
    failed: list[str] | None = None,
) -> list[str]:
    """Remove the containers the arena labelled, and their volumes; returns their names.

    With ``run`` only the containers of that run (label ``arena.run``): a
    resumed tournament removes the leftovers of its own killed run and never
    touches another run, even one of a tournament with the same name.  With
    ``match_prefix`` only those whose match id starts with it.  Running
    containers may belong to a match in progress: they are removed only with
    ``include_running``.  Each container goes with its anonymous volumes
    (``v=True``), so volumes an older version let an image create go too.
    A container the engine would not remove is skipped (``failed``: its name
    and the engine's reason are appended there).
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
        name = str((info.get("Names") or [info["Id"][:12]])[0]).lstrip("/")
        try:
            client.api.remove_container(info["Id"], force=True, v=True)
        except Exception as exc:  # noqa: BLE001 - another run may have removed it meanwhile; the caller decides
            if failed is not None and getattr(getattr(exc, "response", None), "status_code", None) != 404:
                failed.append(f"{name}: {_daemon_reason(exc)}")
            continue
        removed.append(name)
    return removed


def start_once(client: Any, image: str, *, run: str, limits: ContainerLimits | None = None) -> None:
    """Start one container of ``image`` with a seat's settings, then remove it (a run's preflight).

    Raises :class:`BotStartFailed` when the image's own configuration stops
    it (decided as for a seat: :func:`_create_and_start`) and
    :class:`SeatStartError` when the platform failed.  The container carries
    ``run`` (label ``arena.run``) and a match label of its own starting with
    :data:`PREFLIGHT_MATCH`: if its removal fails it is tried once more, then
    pruned by those labels, and what still stands is logged (the run's
    :func:`prune_preflight` removes it later).
    """
    match = f"{PREFLIGHT_MATCH}-{uuid.uuid4().hex[:12]}"
    labels = {MATCH_LABEL: match, RUN_LABEL: run, PREFLIGHT_LABEL: "1"}
    with tempfile.TemporaryDirectory(prefix="arena-preflight-") as tmp:
        try:
            container, _pipe = _create_and_start(client, image, {}, Path(tmp), limits or ContainerLimits(), labels, None)
        except (BotStartFailed, SeatStartError):
            raise
        except Exception as exc:  # requests' ConnectionError is an OSError: it must not read as the image's
            raise SeatStartError(f"the Docker engine could not start a container: {type(exc).__name__}: {exc}") from exc
        try:
            _remove_preflight(client, str(container.id), match, run)
        finally:
            release_proc_dir()


def _remove_preflight(client: Any, container_id: str, match: str, run: str) -> None:
    """Remove a preflight container: twice if need be, then by its labels; log what still stands."""
    import docker.errors

    failure: Exception | None = None
    for _try in range(2):
        try:
            client.api.remove_container(container_id, force=True, v=True)
            return
        except docker.errors.NotFound:
            return
        except Exception as exc:  # noqa: BLE001 - tried again, then by label
            failure = exc
    prune_preflight(client, run, match)
    try:
        left = client.api.containers(all=True, filters={"id": container_id})
    except Exception:  # noqa: BLE001 - the daemon does not answer: assume it stands
        left = [container_id]
    if left:
        logging.getLogger(__name__).warning(
            "preflight container %s (run %s) could not be removed (%s); the run's prune removes it",
            container_id[:12], run, failure,
        )  # fmt: skip


def prune_preflight(client: Any, run: str, match: str | None = None) -> list[str]:
    """Remove ``run``'s preflight containers (only ``match``'s, if given); best effort, returns their names.

    By the preflight's own label (:data:`PREFLIGHT_LABEL`), running or not:
    a game's container of the same run is never among them.
    """
    labels = [LABEL, f"{RUN_LABEL}={run}", f"{PREFLIGHT_LABEL}=1", *([f"{MATCH_LABEL}={match}"] if match else [])]
    removed = []
    with contextlib.suppress(Exception):
        for info in client.api.containers(all=True, filters={"label": labels}):
            with contextlib.suppress(Exception):
                client.api.remove_container(info["Id"], force=True, v=True)
                removed.append(str((info.get("Names") or [info["Id"][:12]])[0]).lstrip("/"))
    return removed


def _cgroup_cpu_file(container_id: str) -> str | None:
    """The file holding a container's CPU usage, for cgroup v1 and v2 and both cgroup drivers."""
    root = "/sys/fs/cgroup"
    for path in (
        f"{root}/cpuacct/docker/{container_id}/cpuacct.usage",
        f"{root}/cpu,cpuacct/docker/{container_id}/cpuacct.usage",
        f"{root}/cpuacct/system.slice/docker-{container_id}.scope/cpuacct.usage",
        f"{root}/system.slice/docker-{container_id}.scope/cpu.stat",
        f"{root}/docker/{container_id}/cpu.stat",
    ):
        if os.path.exists(path):
            return path
    return None
