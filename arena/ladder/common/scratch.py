"""The ladder server's own temporary directory: what its tables leave there is its to remove.

A table process makes its match's socket directory (``arena-*``), its logs
directory (``arena-logs-*``) and its static ``/proc`` files in the temp
directory, and removes them when it ends.  A server killed with its tables
(``kill -9`` of its process group, the OOM killer, ``systemctl kill``) ran no
clean-up: those directories stayed in ``/tmp`` for ever (found by ``arena
ladder rehearse``).  So the server gives itself, and every process it
starts, a temp directory of its own, ``arena-ladder-<ladder id>-<pid>`` in the
system's; a start removes those of the same ladder whose process is gone,
and the server's exit removes its own.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from multiprocessing.util import Finalize
from pathlib import Path

from arena.sandbox.tree import remove_tree


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: another user's process
        return True
    return True


def private_temp_dir(ladder_id: str) -> Path:
    """Make this process's temp directory (and its children's: ``TMPDIR``), removed at its exit; remove the dead ones of ``ladder_id``."""
    root = Path(tempfile.gettempdir())
    prefix = f"arena-ladder-{ladder_id}-"
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            pid = entry.name[len(prefix) :]
            if not (entry.name.startswith(prefix) and pid.isdigit()) or _alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                if not entry.is_symlink() and entry.is_dir() and entry.stat().st_uid == os.getuid():
                    remove_tree(
                        entry, ignore_errors=True
                    )  # a hostile bot's tree may be deep: never recursive
    mine = root / f"{prefix}{os.getpid()}"
    mine.mkdir(mode=0o755, exist_ok=True)
    os.environ["TMPDIR"] = str(mine)
    tempfile.tempdir = str(mine)
    # Removed at exit after multiprocessing's own clean-up of its directory in it (exit priority -100 runs
    # first; a plain atexit handler would run before it, and its rmtree would then fail on a missing path).
    # A Finalize runs only in the process that made it, never in a forked table process.
    Finalize(None, remove_tree, args=(mine,), kwargs={"ignore_errors": True}, exitpriority=-101)
    return mine


__all__ = ["private_temp_dir"]
