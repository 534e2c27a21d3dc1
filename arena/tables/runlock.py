"""One runner per directory: an exclusive OS lock on a run's directory, taken before anything is written there.

Every runner that owns a directory (``arena ladder serve DIR`` and the final
evaluation it runs, ``arena tournament run`` on its output, ``arena sprt`` on
its ``--out``, ``arena ladder rehearse`` on its run directory) takes the lock
with :func:`hold_directory` before it cleans, opens a store or writes a file
there.  A second runner on the same directory is refused with
:class:`DirectoryInUse` (one line naming the holder's pid) and touches
nothing.  Commands that only read (``arena ladder show``, ``arena ratings
show``) take no lock and keep working while a runner holds it.

The lock is ``flock(2)`` on ``DIR/.arena-run.lock``: the kernel drops it when
its holder dies, even by ``kill -9``, so a stale lock of a dead process is
simply taken over (a pid file alone could not tell a dead holder from a live
one).  The pid written inside is only for the refusal's message.  The file is
opened close-on-exec: the processes a runner starts (table processes from a
forkserver, bots, builds) never inherit it, so a killed runner's children
cannot keep its directory locked.  It is removed when its holder lets go
(released, or at the interpreter's exit); one left by a killed runner is
reused by the next.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import threading
import time
import weakref
from pathlib import Path

from arena.errors import ArenaError

#: The lock file's name inside a locked directory.
LOCK_NAME = ".arena-run.lock"

#: How long a refused runner waits for the holder to write its pid (the holder writes it just after
#: taking the lock; a bounded wait on an outcome, the message says "pid unknown" after it).
HOLDER_WAIT_S = 2.0


class DirectoryInUse(ArenaError):
    """Another runner holds the directory: the message names it, its pid and since when."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


class _Held:
    """One held lock of this process: its open file, the thread that took it, how many times."""

    def __init__(self, fd: int, path: Path, thread: int, made: list[Path]) -> None:
        self.fd = fd
        self.path = path
        self.thread = thread
        self.count = 1
        #: The directories taking the lock made (innermost first): removed at release if still empty.
        self.made = made


#: The locks this process holds, by the lock file's (device, inode): flock alone would refuse a
#: nested take on the same thread (a command that locks before reading, then its runner).
_held: dict[tuple[int, int], _Held] = {}
_guard = threading.Lock()


class RunLock:
    """A held directory lock; :meth:`release` it (or leave the ``with`` block) when the run ends."""

    def __init__(self, directory: Path, key: tuple[int, int]) -> None:
        self.directory = directory
        self._key = key
        self._released = False
        # Released when dropped or at the interpreter's exit: a command that fails before its
        # ``finally`` (one line and exit) leaves no lock file behind.
        self._finalizer = weakref.finalize(self, _let_go, key)

    def release(self) -> None:
        """Let go of this hold (the lock itself goes with the last hold of this process)."""
        if not self._released:
            self._released = True
            self._finalizer()

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def hold_directory(directory: Path, what: str, *, create: bool = True) -> RunLock:
    """Take ``directory``'s run lock for ``what`` (the command, for a refusal's message).

    ``create``: make the directory (and its parents) if it does not exist
    (removed again at release if nothing was written in them); otherwise a
    missing directory is an :class:`~arena.errors.ArenaError`.
    Raises :class:`DirectoryInUse` when another process (or another thread of
    this one) holds it; the thread that holds it may take it again (each take
    released on its own).  Writes nothing in a directory another runner holds.
    """
    path = directory.absolute() / LOCK_NAME  # (removed at release: the cwd may have changed by then)
    try:
        while True:
            made = _make(path.parent) if create else []
            if not path.parent.is_dir():
                raise ArenaError(f"no such directory: {directory}")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            with _guard:
                key = _identity(fd)
                again = _hold_again(key, fd, directory)
                if again is not None:
                    return again
                got = _try_lock(fd, path)
                if got == _LOCKED:
                    _write_holder(fd, what)
                    _held[key] = _Held(fd, path, threading.get_ident(), made)
                    return RunLock(directory, key)
            if got == _BUSY:  # read outside the guard: this process's other locks are not held up
                try:
                    raise _refusal(fd, directory)
                finally:
                    os.close(fd)
            # _GONE: the file was removed or replaced since it was opened: open the new one
    except OSError as exc:
        raise ArenaError(f"cannot lock {directory}: {exc.strerror or exc}") from None


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _hold_again(key: tuple[int, int], fd: int, directory: Path) -> RunLock | None:
    """This process holds the lock already: the same thread takes it again, another is refused."""
    held = _held.get(key)
    if held is None:
        return None
    os.close(fd)
    if held.thread != threading.get_ident():
        pid = os.getpid()
        raise DirectoryInUse(f"{directory} is in use by another run in this process (pid {pid})", pid)
    held.count += 1
    return RunLock(directory, key)


#: What :func:`_try_lock` found.
_LOCKED, _BUSY, _GONE = "locked", "busy", "gone"


def _try_lock(fd: int, path: Path) -> str:
    """Lock ``fd``: locked; busy (another process holds it); gone (``fd`` is no longer ``path``: closed)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return _BUSY
        os.close(fd)
        raise
    if _identity_of(path) != _identity(fd):
        os.close(fd)  # its holder removed it as we opened it: that inode locks nothing any more
        return _GONE
    return _LOCKED


def _write_holder(fd: int, what: str) -> None:
    """The holder's pid, command and start, for a refused runner's message (the lock is the flock)."""
    since = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    text = json.dumps({"pid": os.getpid(), "command": what, "since": since}) + "\n"
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)
    except OSError:
        pass  # a full disk: the lock holds all the same; a refused runner says "pid unknown"


def _refusal(fd: int, directory: Path) -> DirectoryInUse:
    """The one line that says who holds the directory (read from the lock file, without writing it)."""
    holder: dict[str, object] = {}
    deadline = time.monotonic() + HOLDER_WAIT_S
    while True:
        try:
            found = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        except (OSError, ValueError):
            found = {}
        if isinstance(found, dict) and isinstance(found.get("pid"), int):
            holder = found
            break
        if time.monotonic() >= deadline:
            break
        time.sleep(0.05)  # the holder took the lock a moment ago and is writing its pid
    pid = holder.get("pid")
    who = str(holder.get("command") or "another runner")
    when = f", since {holder['since']}" if holder.get("since") else ""
    pid_text = f"pid {pid}" if isinstance(pid, int) else "pid unknown"
    return DirectoryInUse(
        f"{directory} is in use by {who} ({pid_text}{when}); one runner per directory: "
        f"stop it first, or use another directory",
        pid if isinstance(pid, int) else None,
    )


def _let_go(key: tuple[int, int]) -> None:
    """One hold fewer; the last one removes the lock file, then unlocks it."""
    with _guard:
        held = _held.get(key)
        if held is None:
            return
        held.count -= 1
        if held.count > 0:
            return
        del _held[key]
        # Removed while still locked: a runner that opened it meanwhile finds it gone once it gets
        # the lock, and opens the new one (``_try_lock``), so two runners never both hold the directory.
        try:
            if _identity_of(held.path) == key:
                held.path.unlink()
        except OSError:
            pass  # a lock file that stays is reused by the next runner
        os.close(held.fd)
        for folder in held.made:  # a run refused or failed before it wrote anything leaves no directory
            try:
                folder.rmdir()
            except OSError:
                break  # not empty: the run's results are in it


def _make(directory: Path) -> list[Path]:
    """Make ``directory`` and its missing parents; the ones made, innermost first."""
    missing = []
    for folder in (directory, *directory.parents):
        if folder.exists():
            break
        missing.append(folder)
    directory.mkdir(parents=True, exist_ok=True)
    return missing


def _identity_of(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


__all__ = ["LOCK_NAME", "DirectoryInUse", "RunLock", "hold_directory"]
