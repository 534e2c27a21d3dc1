"""Run a bot as a local process: for development and for machines without Docker.

Local processes are NOT a sandbox: every local bot runs as the user who runs
the arena, with that user's files, network and processes.  Use them for your
own bots; run strangers' bots as ``docker:`` images.  What is done anyway:

- secrets (the seat's token) are not put in the environment, which every
  process of the same user can read in ``/proc/PID/environ``: each goes
  through an inherited pipe, named by ``NAME_FILE=/dev/fd/N``, that the bot
  reads once (after that the pipe is empty);
- the process gets its own session and process group, and a mark in its
  environment, and is a child subreaper (the orphans of its tree stay in
  it); stopping sends TERM to the group, waits a grace period, then KILLs
  the group and every process it started: its descendants, its session,
  anything that still carries its mark (a ``setsid`` child that ignores TERM
  included).  The CPU clock charges the same family (:mod:`arena.sandbox.procfs`);
- it does not inherit the organiser's own settings for a bot
  (:data:`SDK_ENV`: a stale ``ARENA_TOKEN`` left in the shell by ``arena
  serve`` would otherwise beat the seat's own token and forfeit the bot);
  the seat's values are then set;
- its output goes to a capped log file.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets as _secrets
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.sandbox import procfs
from arena.sandbox.cpu import ProcessTreeCpu
from arena.sandbox.procfs import MARK_ENV

#: Every variable the SDK reads (arena_sdk.client, arena_sdk.bots): removed from the
#: environment a bot inherits, so that only the seat's own values reach it.  (The arena
#: never imports the SDK's bot code; tests/sandbox/test_local_env.py keeps the list in
#: step with the SDK's source.)
SDK_ENV = (
    "ARENA_ADDRESS", "ARENA_TOKEN", "ARENA_TOKEN_FILE", "ARENA_HARD_BUDGET_S", "ARENA_HARD_WORLDS",
    "ARENA_SDK_PURE",  # the engine's pure-Python core (arena_sdk.engine.core): a bot's own choice
)
#: How long stop() keeps looking for stragglers a bot's processes are still forking.
STRAGGLER_WINDOW_S = 2.0

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

    def __init__(
        self, process: asyncio.subprocess.Process, log_path: Path | None, log_cap: int, mark: str = ""
    ) -> None:
        self.process = process
        self.log_path = log_path
        self.log_cap = log_cap
        self.log_bytes_dropped = 0
        self.mark = mark
        self._started = procfs.start_time(process.pid)
        self._cpu_meter: ProcessTreeCpu | None = None
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
        secrets: Mapping[str, str] | None = None,
    ) -> LocalProcess:
        """Start ``command`` with ``env`` added to this process's environment.

        The variables of :data:`SDK_ENV` are not inherited from this process
        (only ``env`` and ``secrets`` can set them).  Each of ``secrets`` (name -> value) is written into a pipe the process
        inherits, and the process gets ``NAME_FILE=/dev/fd/N`` instead of the
        value: other processes of the user cannot read it from its environment.
        """
        argv = parse_command(command)
        mark = _secrets.token_hex(16)
        inherited = {k: v for k, v in os.environ.items() if k not in SDK_ENV}
        full_env = {**inherited, **env, MARK_ENV: mark}
        pipes = []
        try:
            for name, value in (secrets or {}).items():
                read_end, write_end = os.pipe()
                pipes.append(read_end)
                with os.fdopen(write_end, "wb") as w:  # a few bytes: never blocks on the pipe buffer
                    w.write(value.encode())
                full_env[f"{name}_FILE"] = f"/dev/fd/{read_end}"
            process = await asyncio.create_subprocess_exec(
                *_as_subreaper(argv, full_env, cwd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=full_env,
                cwd=cwd,
                start_new_session=True,
                pass_fds=tuple(pipes),
            )
        finally:
            for fd in pipes:
                os.close(fd)
        return cls(process, log_path, log_cap, mark)

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
        """TERM the process group, wait ``grace`` seconds, then KILL every process the bot started.

        Returns the bot's exit code.  The family (descendants, session,
        marked processes) is taken before anything dies, while parent links
        still lead from the bot to its children.
        """
        family = _family(self.process.pid, self._started, self.mark)
        if self.process.returncode is None:
            self._signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), grace)
            except TimeoutError:
                self._signal(signal.SIGKILL)
                await self.process.wait()
        # Children left in the group (a bot that forked) go too, and whatever left the group.
        self._signal(signal.SIGKILL)
        await asyncio.to_thread(_kill_family, self.process.pid, self._started, self.mark, family)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._pump, 5)
        return self.process.returncode  # type: ignore[return-value]

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def cpu_seconds(self) -> float | None:
        """CPU time the bot's process tree has used so far, or None if unreadable.

        Its own threads by the kernel's per-process CPU clock (nanoseconds),
        plus the processes it started, from /proc (:class:`~arena.sandbox.cpu.ProcessTreeCpu`):
        what the CPU move clock charges a local seat.
        """
        meter = self._cpu_meter
        if meter is None:
            meter = self._cpu_meter = ProcessTreeCpu(self.process.pid, self._started, self.mark)
        if self.process.returncode is not None:
            return meter.last  # it has ended (and its pid may be another process's now): what it used
        return meter.read()


# ---------------------------------------------------------------- a bot's processes, from /proc
#
# A process can leave its group and session (setsid) and lose its parent, but
# not undo what it inherited before: it is found by its place in the process
# tree (the bot is a child subreaper: an orphan of its tree is re-parented to
# the bot), by its group or session, or by the mark in its environment (a bot
# can clear its environment before it execs: then only the others find it;
# docs/reliability.md says what local mode does not contain).  The CPU clock
# counts the same family (arena.sandbox.procfs).

_Proc = tuple[int, int]  # (pid, start time in clock ticks): a pid that is reused is another process
#: How a local bot is started: a tiny Python program (``python -S``, a few ms)
#: that makes itself a child subreaper (prctl(PR_SET_CHILD_SUBREAPER), kept across exec:
#: the orphans of the bot's tree are re-parented to the bot, not to init) and
#: execs the bot.  Not a ``preexec_fn``: that makes Python fork the whole
#: referee process (gRPC's polling threads included) instead of vfork-ing, and
#: a child forked so could die before its exec ("epoll_wait error: Bad file
#: descriptor"), which the referee charged to the bot as a crash.
_SUBREAPER_EXEC = (
    "import ctypes,os,sys\n"
    "try:\n ctypes.CDLL(None,use_errno=True).prctl(36,1,0,0,0)\n"
    "except Exception:\n pass\n"  # not Linux: the family is still found by group, session and mark
    "os.execv(sys.argv[1],sys.argv[2:])\n"
)


def _as_subreaper(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None) -> list[str]:
    """``argv`` started through :data:`_SUBREAPER_EXEC`; the program is looked up here.

    A command that cannot be run raises ``FileNotFoundError``/``PermissionError``
    here, in the referee, as a direct start would (the start's error handling
    is the same); the wrapper only ever execs a program that exists.
    """
    program = argv[0]
    if os.sep in program:
        path = program if os.path.isabs(program) else os.path.join(cwd or os.getcwd(), program)
    else:
        path = shutil.which(program, path=env.get("PATH", os.defpath)) or ""
    if not path or not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", program)
    if not os.access(path, os.X_OK) or os.path.isdir(path):
        raise PermissionError(errno.EACCES, "Permission denied", program)
    return [sys.executable, "-S", "-c", _SUBREAPER_EXEC, path, *argv]


def _family(root: int, started: int, mark: str) -> set[_Proc]:
    """Every live process ``root`` started (:func:`arena.sandbox.procfs.family`)."""
    return procfs.family(root, started, mark).live()


def _kill_family(root: int, started: int, mark: str, known: set[_Proc]) -> None:
    """SIGKILL ``known`` and every process of the family found anew, until none is left."""
    deadline = time.monotonic() + STRAGGLER_WINDOW_S
    while True:
        alive = {
            (pid, start) for pid, start in known if (st := procfs.stat(pid)) is not None and st.start == start and not st.zombie
        }
        alive |= _family(root, started, mark)
        if not alive or time.monotonic() > deadline:
            return
        for pid, _ in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        known = alive
        time.sleep(0.02)
