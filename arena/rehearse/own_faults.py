"""Platform faults of our own making: a Docker daemon of our own, and a small filesystem to fill.

Shared by the platform-fault tests (tests/hostile/test_platform_faults.py)
and ``arena ladder rehearse``: both must restart *a* Docker daemon and fill
*a* disk without touching the machine's (its engine may be shared).

- :class:`OwnDaemon`: a dockerd with its own data root, exec root, socket and
  pid file (no live restore, no bridge, no iptables), stopped by its
  recorded process id, never by name;
- :func:`small_filesystem`: a tmpfs of a given size mounted at a directory
  (``mount -o remount,size=...`` on it frees or fills the disk).

Both need root.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.errors import ArenaError


class DaemonError(ArenaError):
    """Our own Docker daemon did not start (or is not the one we started)."""


def can_make_faults() -> str | None:
    """Why this machine cannot make these faults (None: it can): they need root, mount and dockerd."""
    if os.geteuid() != 0:
        return "needs root (mount, dockerd)"
    missing = [tool for tool in ("mount", "umount", "dockerd") if shutil.which(tool) is None]
    return f"{', '.join(missing)} not installed" if missing else None


@contextlib.contextmanager
def small_filesystem(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``"1m"``, ``"64m"``) mounted at ``where`` while the block runs."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)], check=True
    )
    try:
        yield where
    finally:
        for _ in range(50):
            if (
                subprocess.run(["umount", str(where)], capture_output=True, check=False).returncode
                == 0
            ):
                break
            time.sleep(0.1)
        else:
            subprocess.run(["umount", "-l", str(where)], check=False)


def resize(where: Path, size: str) -> None:
    """Give the tmpfs at ``where`` a new size (not below what it holds: the kernel refuses that)."""
    subprocess.run(
        ["mount", "-o", f"remount,size={size}", str(where)], check=True, capture_output=True
    )


#: The file that takes a filled disk's last bytes (removed when the disk is given back).
FILLER = ".disk-filler"


@contextlib.contextmanager
def filled(where: Path) -> Iterator[int]:
    """The tmpfs at ``where`` full while the block runs: shrunk to what it holds, the rest taken by a file.

    Yields the size it was shrunk to; afterwards the file is removed and the
    old size given back.  Whatever writes there meanwhile (the ladder) meets
    ``ENOSPC``, as on a disk that filled up.
    """
    stat = os.statvfs(where)
    size_kib = stat.f_blocks * stat.f_frsize // 1024
    for attempt in range(20):  # what it holds grows while we measure: shrink to that plus a margin
        stat = os.statvfs(where)
        used_kib = (stat.f_blocks - stat.f_bfree) * stat.f_frsize // 1024
        try:
            resize(where, f"{used_kib + 1024 * (1 + attempt)}k")
            break
        except subprocess.CalledProcessError:
            time.sleep(0.05)
    else:
        raise OSError(f"could not shrink the filesystem at {where} to what it holds")
    filler = where / FILLER
    try:
        with filler.open("wb", buffering=0) as out, contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * 65536)
        yield used_kib * 1024
    finally:
        filler.unlink(missing_ok=True)
        resize(where, f"{size_kib}k")


class OwnDaemon:
    """A dockerd of our own (data root, exec root, socket, pid file), started and stopped by its recorded process id."""

    def __init__(self, root: Path, storage_driver: str, extra_args: tuple[str, ...] = ()) -> None:
        self.root = root
        #: More ``dockerd`` arguments (e.g. a runtime of the test's own).
        self.extra_args = extra_args
        self.socket = root / "docker.sock"
        self.pidfile = root / "dockerd.pid"
        self.log = root / "dockerd.log"
        self.storage_driver = storage_driver
        self.pid: int | None = None
        self._popen: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def client(self) -> Any:
        import docker

        return docker.DockerClient(base_url=self.url, timeout=120)

    def start(self, timeout: float = 60) -> None:
        argv = [
            "dockerd",
            "--data-root", str(self.root / "data"),
            "--exec-root", str(self.root / "exec"),
            "-H", self.url,
            "--pidfile", str(self.pidfile),
            "--bridge=none", "--iptables=false", "--ip6tables=false",
            "--live-restore=false",
            "--storage-driver", self.storage_driver,
            *self.extra_args,
        ]  # fmt: skip
        with self.log.open("ab") as log:
            self._popen = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self._popen.poll() is not None:
                raise DaemonError(f"dockerd exited with {self._popen.returncode}:\n{self.tail()}")
            with contextlib.suppress(Exception):
                client = self.client()
                client.ping()
                client.close()
                break
            if time.monotonic() > deadline:
                raise DaemonError(f"dockerd did not answer within {timeout:g} s:\n{self.tail()}")
            time.sleep(0.2)
        self.pid = int(self.pidfile.read_text().strip())
        if self.pid != self._popen.pid:
            raise DaemonError("the pid file names another daemon than the one started")

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM to the recorded pid; wait for it to exit (KILL only if it hangs)."""
        if self.pid is None or self._popen is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._popen.wait(30)
        # A containerd that outlived a killed daemon (and was adopted by the next one) goes too.
        self._kill_containerd()
        self.pid = None

    def kill_containerd(self) -> None:
        """SIGKILL the containerd of this daemon's exec root, if one is left (after a failed start)."""
        self._kill_containerd()

    def kill(self) -> None:
        """SIGKILL to the recorded pid, as a crash or the OOM killer would: no shutdown at all.

        Its containerd and the containers' shims live on; the next start adopts them.
        """
        if self.pid is None or self._popen is None:
            return
        os.kill(self.pid, signal.SIGKILL)
        self._popen.wait(30)
        self.pid = None

    def _kill_containerd(self) -> None:
        """The containerd our dockerd started, if the daemon had to be killed."""
        pidfile = self.root / "exec" / "containerd" / "containerd.pid"
        with contextlib.suppress(Exception):
            pid = int(pidfile.read_text().strip())
            if str(self.root) in Path(f"/proc/{pid}/cmdline").read_text():
                os.kill(pid, signal.SIGKILL)

    def tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def remove_files(self) -> None:
        """Unmount anything left under the root, then delete it."""
        with contextlib.suppress(OSError):
            mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
            for mount in sorted((m for m in mounts if m.startswith(str(self.root))), reverse=True):
                subprocess.run(["umount", "-l", mount], check=False, capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


__all__ = [
    "FILLER",
    "DaemonError",
    "OwnDaemon",
    "can_make_faults",
    "filled",
    "resize",
    "small_filesystem",
]
