"""One image build on the engine, bounded: time, memory, CPU, disk, and the log it prints.

A build runs hostile steps (a ``RUN`` a team wrote).  The engine's classic
builder (the ``/build`` API the Docker SDK speaks) runs each step in an
intermediate container; :func:`run_build` bounds it so:

- **time**: a watchdog thread ends the build at ``limits.timeout_s`` (or when
  ``cancel`` is set) by shutting the HTTP connection down.  The daemon cancels
  a build whose client went away (its step container is killed and removed);
  the watchdog also force-removes every step container the build announced
  (``---> Running in <id>``, printed as each is created), so nothing is left
  even when the daemon is slow to notice.
- **memory and CPU**: every step container gets ``memory`` (swap included:
  ``memswap`` = ``memory``) and a CPU quota (``cpuperiod``/``cpuquota``).
- **disk**: the running step container's writable layer is measured every
  :data:`DISK_POLL_S` seconds and the build stopped once it passes
  ``limits.image_bytes``; the image built is measured too and refused (its tag
  removed) when over that cap.  Between two polls a step can write what the
  disk takes in :data:`DISK_POLL_S` seconds: the bound is cap + rate x poll.
- **the log**: only its tail is kept (:class:`LogTail`), however much a step
  prints; the count of what was cut is kept with it.

Not bounded by the build API: the number of processes of a step (no pids
limit; a fork bomb is held by the memory cap and the timeout) and disk I/O
bandwidth.  Each call opens its own HTTP connection: builds may run in
several threads at once on one client.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from arena.sandbox.build_failure import strip_terminal

#: How often the watchdog looks at the cancel flag (seconds).
TICK_S = 0.25
#: How often the running step's writable layer is measured (seconds; the daemon walks its files).
DISK_POLL_S = 2.0
#: The most of one line passed to ``on_line`` (a step can print megabytes without a newline).
LINE_CHARS = 2000
#: How long the watchdog waits for the step containers it removed to be gone (seconds).
REMOVE_WAIT_S = 30.0

_RUNNING_IN = re.compile(r"---> Running in ([0-9a-f]{12,64})")


@dataclasses.dataclass(frozen=True)
class BuildLimits:
    """What one build may use; ``None`` leaves that resource to the engine's defaults."""

    timeout_s: float | None = None
    memory: int | None = None
    """Bytes of memory of each step container (swap included)."""
    cpus: float | None = None
    """CPU cores each step container may use."""
    image_bytes: int | None = None
    """Bytes the image (and any step's writable layer while it runs) may take."""


class LogTail:
    """The last ``keep`` characters of a stream of text and the count of bytes cut before them.

    Memory stays below about twice ``keep`` whatever is written (:attr:`high_water`
    is the most it held).  Thread-safe: the build's reader writes, another thread may read.
    """

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.cut_bytes = 0
        self.high_water = 0
        self._text = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        with self._lock:
            if len(text) > self.keep:  # a huge piece: only its end can be kept
                self.cut_bytes += len(text[: -self.keep].encode("utf-8", "replace"))
                text = text[-self.keep :]
            self._text += text
            self.high_water = max(self.high_water, len(self._text))
            if len(self._text) > 2 * self.keep:  # trimmed in batches: each trim copies at most 2 x keep
                cut = len(self._text) - self.keep
                self.cut_bytes += len(self._text[:cut].encode("utf-8", "replace"))
                self._text = self._text[cut:]

    def text(self) -> str:
        """The kept tail, with a first line saying how much was cut (if anything was)."""
        with self._lock:
            kept = self._text[-self.keep :]
            cut = self.cut_bytes + len(self._text[: -self.keep].encode("utf-8", "replace")) if len(self._text) > self.keep else self.cut_bytes
        return f"[... {cut} bytes of earlier output cut]\n{kept}" if cut else kept

    def lines(self, n: int) -> list[str]:
        """The last ``n`` non-empty lines kept."""
        return [line for line in self.text().splitlines() if line.strip()][-n:]


class BuildStopped(Exception):
    """The watchdog ended the build: ``reason`` is ``timeout``, ``cancelled`` or ``disk``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclasses.dataclass
class BuildResult:
    """What the engine said: the image ID (None if it failed) and the error it gave."""

    image_id: str | None
    error: str | None
    log: LogTail


class _Watchdog:
    """Ends one build on its deadline, on ``cancel`` or past the disk cap; removes its step containers."""

    def __init__(self, api: Any, limits: BuildLimits, cancel: threading.Event | None) -> None:
        self.api = api
        self.limits = limits
        self.cancel = cancel
        self.started = time.monotonic()
        self.done = threading.Event()
        self.containers: list[str] = []
        self.response: Any = None
        self.stopped: BuildStopped | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="arena-build-watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def saw_container(self, container_id: str) -> None:
        with self._lock:
            self.containers.append(container_id)

    def _watch(self) -> None:
        next_disk = self.started + DISK_POLL_S
        while not self.done.wait(TICK_S):
            now = time.monotonic()
            if self.limits.timeout_s is not None and now - self.started >= self.limits.timeout_s:
                self._stop("timeout", f"build timed out after {self.limits.timeout_s:g} s")
                return
            if self.cancel is not None and self.cancel.is_set():
                self._stop("cancelled", "build cancelled")
                return
            if self.limits.image_bytes is not None and now >= next_disk:
                next_disk = now + DISK_POLL_S
                written = self._step_bytes()
                if written is not None and written > self.limits.image_bytes:
                    self._stop("disk", f"a build step wrote {_mib(written)}, over the cap of {_mib(self.limits.image_bytes)}")
                    return

    def _step_bytes(self) -> int | None:
        """The running step container's writable layer, in bytes (None if there is none)."""
        with self._lock:
            current = self.containers[-1] if self.containers else None
        if current is None:
            return None
        with contextlib.suppress(Exception):
            found = self.api.containers(all=True, size=True, filters={"id": current})
            if found:
                return int(found[0].get("SizeRw") or 0)
        return None

    def _stop(self, reason: str, detail: str) -> None:
        self.stopped = BuildStopped(reason, detail)
        _shut(self.api, self.response)  # the reader wakes up; the daemon cancels the build
        self.remove_containers()

    def remove_containers(self) -> list[str]:
        """Force-remove every step container the build announced; wait until they are gone. Returns any left."""
        with self._lock:
            ids = list(self.containers)
        deadline = time.monotonic() + REMOVE_WAIT_S
        left = ids
        while left:
            for container in left:
                with contextlib.suppress(Exception):  # gone already, or the daemon is removing it
                    self.api.remove_container(container, force=True, v=True)
            try:
                left = [c for c in ids if self.api.containers(all=True, filters={"id": c})]
            except Exception:  # noqa: BLE001 - the engine went away: nothing more can be done now
                return left
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)
        return left

    def finish(self) -> None:
        self.done.set()
        self._thread.join(timeout=REMOVE_WAIT_S + 5)


def _shut(api: Any, response: Any) -> None:
    """Shut the build's connection down from another thread (a blocked read returns at once)."""
    if response is None:
        return
    with contextlib.suppress(Exception):
        raw = api._get_raw_response_socket(response)
        sock = getattr(raw, "_sock", raw)
        if isinstance(sock, socket.socket):
            sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):
        response.close()


def _mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB"


def _params(
    tag: str | None, buildargs: dict[str, str], labels: dict[str, str], limits: BuildLimits, network_mode: str
) -> dict[str, Any]:
    """The query of ``POST /build``: offline, intermediate containers always removed, the limits."""
    params: dict[str, Any] = {
        "t": tag, "q": False, "nocache": False, "rm": True, "forcerm": True, "pull": False,
        "networkmode": network_mode, "buildargs": json.dumps(buildargs), "labels": json.dumps(labels),
    }  # fmt: skip
    if limits.memory is not None:
        params["memory"] = limits.memory
        params["memswap"] = limits.memory  # no swap on top
    if limits.cpus is not None:
        params["cpuperiod"] = 100_000
        params["cpuquota"] = max(1000, int(limits.cpus * 100_000))
    return {k: v for k, v in params.items() if v is not None}


def run_build(
    client: Any,
    context: Path,
    *,
    tag: str | None,
    buildargs: dict[str, str],
    labels: dict[str, str],
    limits: BuildLimits,
    keep_chars: int,
    on_line: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    network_mode: str = "none",
) -> BuildResult:
    """Build ``context`` (its ``Dockerfile``) under ``limits``; raises :class:`BuildStopped` when the watchdog ended it.

    ``network_mode`` is the steps' network: ``"none"``, or ``container:ID`` of a holder with no
    network at all (:func:`arena.sandbox.build_network.build_network`, which the arena's builds use).
    Returns the image ID, or the engine's error; the log's tail either way.
    """
    import docker.errors

    from docker import utils

    api = client.api
    log = LogTail(keep_chars)
    watchdog = _Watchdog(api, limits, cancel)
    image_id = None
    error = None
    with utils.tar(str(context), exclude=None, dockerfile=None, gzip=False) as tarball:  # a temporary file
        watchdog.start()
        try:
            response = api._post(
                api._url("/build"), data=tarball, params=_params(tag, buildargs, labels, limits, network_mode),
                headers={"Content-Type": "application/tar"}, stream=True, timeout=None,
            )  # fmt: skip
            watchdog.response = response
            if watchdog.stopped is not None:  # stopped while the context was sent
                _shut(api, response)
            api._raise_for_status(response)
            for chunk in _chunks(api, response):
                text = chunk.get("stream")
                if isinstance(text, str) and text:
                    text = strip_terminal(text)  # pip's or npm's colours: the log is read as text, on a page too
                    log.write(text)
                    for line in text.splitlines():
                        found = _RUNNING_IN.search(line)
                        if found:
                            watchdog.saw_container(found.group(1))
                        if on_line is not None and line.strip():
                            on_line(line[:LINE_CHARS])
                if "error" in chunk:
                    error = strip_terminal(str(chunk["error"])).strip()[:LINE_CHARS]
                    log.write(error + "\n")
                aux = chunk.get("aux")
                if isinstance(aux, dict) and "ID" in aux:
                    image_id = str(aux["ID"])
        except docker.errors.APIError as exc:
            error = str(exc.explanation or exc)[:LINE_CHARS]
        except Exception as exc:  # noqa: BLE001 - a connection the watchdog shut, or the engine gone
            if watchdog.stopped is None:
                error = f"the build's connection to the engine broke ({type(exc).__name__}: {exc})"[:LINE_CHARS]
        finally:
            watchdog.finish()
    if watchdog.stopped is not None:
        left = watchdog.remove_containers()
        if left:
            log.write(f"step containers still present after the stop: {', '.join(left)}\n")
        raise watchdog.stopped
    return BuildResult(image_id=image_id if error is None else None, error=error, log=log)


def _chunks(api: Any, response: Any) -> Iterator[dict[str, Any]]:
    """The build's JSON messages as they arrive (each the daemon's own write: bounded)."""
    for chunk in api._stream_helper(response, decode=True):
        if isinstance(chunk, dict):
            yield chunk


def image_size(client: Any, image_id: str) -> int:
    """The image's size in bytes (its layers, the base image's included)."""
    return int(client.api.inspect_image(image_id).get("Size") or 0)


__all__ = ["BuildLimits", "BuildResult", "BuildStopped", "LogTail", "image_size", "run_build"]
