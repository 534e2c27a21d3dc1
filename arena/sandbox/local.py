"""Run a bot as a local process: for development and for machines without Docker.

The process gets its referee address and token in the environment, its own
process group (so a bot that forks is stopped whole), and its output goes to
a capped log file.  Stopping sends TERM, waits a grace period, then KILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: Bytes of a bot's output kept in its log; the rest is counted and dropped.
DEFAULT_LOG_CAP = 1 << 20
_PYTHON_NAMES = {"python", "python3", f"python3.{sys.version_info.minor}"}


def parse_command(command: str | Sequence[str]) -> list[str]:
    """Split a command line; a leading ``python``/``python3`` becomes this interpreter.

    That way ``cmd:python mybot.py`` runs with the arena's own environment
    (and its SDK) whether or not a virtual environment is activated.
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError("empty command")
    if argv[0] in _PYTHON_NAMES:
        argv[0] = sys.executable
    return argv


def _closed(log: Any) -> None:
    """Close a log file whose writes may fail (a full disk fails the flush too)."""
    with contextlib.suppress(OSError):
        log.close()


class LocalProcess:
    """A bot process started by :meth:`start`."""

    def __init__(self, process: asyncio.subprocess.Process, log_path: Path | None, log_cap: int) -> None:
        self.process = process
        self.log_path = log_path
        self.log_cap = log_cap
        self.log_bytes_dropped = 0
        self._pump = asyncio.ensure_future(self._copy_output())

    @classmethod
    async def start(
        cls,
        command: str | Sequence[str],
        env: Mapping[str, str],
        *,
        log_path: Path | None = None,
        log_cap: int = DEFAULT_LOG_CAP,
        cwd: Path | None = None,
    ) -> LocalProcess:
        """Start ``command`` with ``env`` added to this process's environment."""
        argv = parse_command(command)
        full_env = {**os.environ, **env}
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=full_env,
            cwd=cwd,
            start_new_session=True,
        )
        return cls(process, log_path, log_cap)

    async def _copy_output(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        kept = 0
        log = None
        if self.log_path is not None:
            with contextlib.suppress(OSError):  # no log (disk full...) must not stop the bot
                log = self.log_path.open("wb")
        try:
            while chunk := await stream.read(65536):
                room = self.log_cap - kept
                if log is not None and room > 0:
                    try:
                        log.write(chunk[:room])
                    except OSError:  # the disk is full: keep draining the bot's output, unlogged
                        _closed(log)
                        log = None
                    kept += min(room, len(chunk))
                self.log_bytes_dropped += max(0, len(chunk) - max(room, 0))
        finally:
            if log is not None:
                with contextlib.suppress(OSError):
                    if self.log_bytes_dropped:
                        log.write(f"\n[arena: {self.log_bytes_dropped} more bytes of output dropped]\n".encode())
                _closed(log)

    @property
    def pid(self) -> int:
        return self.process.pid

    def exited(self) -> bool:
        """True once the process has ended."""
        return self.process.returncode is not None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def exit_detail(self) -> str:
        """``exited with code N`` or ``killed by signal NAME``."""
        code = await self.process.wait()
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with code {code}"

    async def stop(self, grace: float = 2.0) -> int:
        """TERM the process group, wait ``grace`` seconds, then KILL it; returns the exit code."""
        if self.process.returncode is None:
            self._signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), grace)
            except TimeoutError:
                self._signal(signal.SIGKILL)
                await self.process.wait()
        # Children left in the group (a bot that forked) go too.
        self._signal(signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._pump, 5)
        return self.process.returncode  # type: ignore[return-value]

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def cpu_seconds(self) -> float | None:
        """CPU time the bot's process has used so far (all its threads), or None if unreadable.

        The kernel's per-process CPU clock: nanosecond resolution, about 2 µs a
        read.  Processes the bot started are not counted (local mode is for
        development; a container counts everything in it).
        """
        try:
            return time.clock_gettime((~self.process.pid << 3) | 2)  # CPUCLOCK_SCHED of that pid
        except OSError:
            return None
