"""Platform faults on the course's schedule, each followed by the restart an organiser would do.

``kill`` is ``kill -9`` of the server (no clean-up at all), aimed at a moment
the course names: while a pair plays, while a version validates, or while
one builds (the fault waits, bounded, for such a moment; if none comes it
strikes anyway and says so).  ``kill-group`` is ``kill -9`` of the server's whole process group, its
table processes with it (the machine's OOM killer, ``systemctl kill -s
KILL``).  ``term`` is SIGTERM, an organiser's stop.  ``docker-restart``
stops the rehearsal's own Docker daemon and starts it again while the ladder
runs on (its games in flight are void and played again).  ``disk-full``
fills the ladder directory's filesystem (a small one of the rehearsal's own)
for a while, then frees it; the organiser starts the server again only if it
stopped.
Either way the organiser then runs ``arena ladder serve`` again, and does
nothing else: whatever else the ladder needs afterwards is an organiser
action the audit counts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
import time
from pathlib import Path

from arena.rehearse.own_faults import DaemonError, OwnDaemon, filled
from arena.rehearse.plan import Fault
from arena.rehearse.server import LadderProcess, RehearsalError

#: What a kill aims at, in turn: a build first (the faults begin while uploads still arrive:
#: late in a term builds are rare, and the 40-team hours' last build-aimed kills found none), then a
#: validation, then a pair.
TARGETS = ("build", "validation", "pair")


@dataclasses.dataclass
class Struck:
    """One fault as it happened."""

    at: float  # seconds into the term
    kind: str  # kill | kill-group | term | docker-restart | disk-full
    target: str  # pair | validation | build | any
    caught: bool  # the target was in progress when the fault struck
    exit_status: int | None
    restart_seconds: float | None  # None: the server did not come back
    error: str = ""
    #: What the fault did (a full disk: how long, and whether the server rode it out).
    detail: str = ""


def in_progress(directory: Path, target: str) -> bool:
    """Whether ``target`` is in progress in the ladder at ``directory`` (read from its stores, read-only)."""
    query = {
        "pair": ("results.sqlite", "SELECT COUNT(*) FROM pairs WHERE status='playing'"),
        "validation": ("ladder.sqlite", "SELECT COUNT(*) FROM versions WHERE status='validating'"),
        "build": ("ladder.sqlite", "SELECT COUNT(*) FROM versions WHERE status='building'"),
    }.get(target)
    if query is None:
        return True
    with contextlib.suppress(sqlite3.Error):
        db = sqlite3.connect(f"file:{directory / query[0]}?mode=ro", uri=True, timeout=5)
        try:
            return bool(db.execute(query[1]).fetchone()[0])
        finally:
            db.close()
    return False


def restart_daemon(daemon: OwnDaemon) -> None:
    """Stop our own dockerd (SIGTERM, as ``systemctl restart docker`` does) and start it again.

    A new containerd must take over the shims the old one left: on a loaded
    machine dockerd may give up waiting for it once; it is started again (the
    platform-fault tests do the same).
    """
    daemon.stop()
    for attempt in range(3):
        try:
            daemon.start(timeout=120)
            return
        except DaemonError:
            if attempt == 2:
                raise
            daemon.kill_containerd()


def fill_disk(server: LadderProcess, at: float, caught: bool, hold: float) -> Struck:
    """The ladder's disk full for ``hold`` seconds, then freed; the server started again if it stopped.

    The server may stop on its own (a store it cannot write stops the loop
    with one line); a server that rode it out is left alone, as an organiser
    who freed the disk would.
    """
    began = time.monotonic()
    try:
        with filled(server.directory) as size:
            while time.monotonic() - began < hold:
                time.sleep(0.2)
    except OSError as exc:
        return Struck(at, "disk-full", "any", caught, None, None, f"could not fill the disk: {exc}")
    held = time.monotonic() - began
    status = server.process.poll() if server.process is not None else None
    what = f"{size / 2**20:.0f} MiB held, full for {held:.0f} s"
    if server.running:
        return Struck(
            at, "disk-full", "any", caught, None, 0.0, "", f"{what}; the server rode it out"
        )
    server.process = None
    again = time.monotonic()
    try:
        server.start()
    except RehearsalError as exc:
        return Struck(at, "disk-full", "any", caught, status, None, str(exc)[:300], what)
    return Struck(at, "disk-full", "any", caught, status, round(time.monotonic() - again, 2), "",
                  f"{what}; the server stopped (exit {status}) and was started again")  # fmt: skip


def strike(
    server: LadderProcess,
    fault: Fault,
    target: str,
    at: float,
    *,
    aim_for: float = 30.0,
    daemon: OwnDaemon | None = None,
    disk_hold: float | None = None,
) -> Struck:
    """Make ``fault`` (waiting up to ``aim_for`` seconds for ``target``), then restart what it stopped.

    ``disk_hold``: how long a ``disk-full`` fault keeps the disk full (None:
    the ladder directory is not on a filesystem of the rehearsal's own).
    """
    caught = False
    deadline = time.monotonic() + aim_for
    while time.monotonic() < deadline:
        if in_progress(server.directory, target):
            caught = True
            break
        time.sleep(0.1)
    if fault.kind == "disk-full":
        if disk_hold is None:
            return Struck(at, fault.kind, target, caught, None, None,
                          "the ladder directory is not on a filesystem of the rehearsal's own")  # fmt: skip
        return fill_disk(server, at, caught, disk_hold)
    if (
        fault.kind == "docker-restart"
    ):  # the ladder's server runs on: only the engine under it restarts
        if daemon is None:
            return Struck(
                at,
                fault.kind,
                target,
                caught,
                None,
                None,
                "no Docker daemon of the rehearsal's own",
            )
        began = time.monotonic()
        try:
            restart_daemon(daemon)
        except DaemonError as exc:
            return Struck(at, fault.kind, target, caught, None, None, str(exc)[:300])
        return Struck(at, fault.kind, target, caught, None, round(time.monotonic() - began, 2))
    status = {"kill": server.kill, "kill-group": server.kill_group}.get(fault.kind, server.stop)()
    began = time.monotonic()
    try:
        server.start()
    except RehearsalError as exc:
        return Struck(at, fault.kind, target, caught, status, None, str(exc)[:300])
    return Struck(at, fault.kind, target, caught, status, round(time.monotonic() - began, 2))


__all__ = ["TARGETS", "Struck", "fill_disk", "in_progress", "restart_daemon", "strike"]
