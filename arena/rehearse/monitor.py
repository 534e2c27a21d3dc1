"""What the rehearsal watches while the term runs, every few seconds, from outside the server.

- the versions' statuses (``ladder.sqlite``, read-only): when each was first
  seen out of the queue (the build queue wait: ``created`` to that sample, an
  upper bound by at most the sampling's step);
- the standings (``/api/leaderboard``): Kendall τ against the true order,
  over the term;
- the server's memory (its process tree's resident set, from ``/proc``) and
  the ladder directory's size on disk;
- every stored game's row and record as first seen (a hash of each): the
  audit compares them at the end (a stored game never changes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from arena.rehearse.tau import kendall_tau


@dataclasses.dataclass
class Watched:
    """The samples (shared with the audit)."""

    building_seen: dict[int, float] = dataclasses.field(
        default_factory=dict
    )  # version id -> seconds into the term
    queue_waits: dict[int, float] = dataclasses.field(
        default_factory=dict
    )  # version id -> seconds created to building
    tau: list[tuple[float, float | None, int]] = dataclasses.field(
        default_factory=list
    )  # (at, τ, rated teams)
    memory: list[tuple[float, int]] = dataclasses.field(default_factory=list)  # (at, bytes)
    disk: list[tuple[float, int]] = dataclasses.field(default_factory=list)  # (at, bytes)
    games: list[tuple[float, int]] = dataclasses.field(default_factory=list)  # (at, stored games)
    first_seen: dict[str, tuple[str, str]] = dataclasses.field(
        default_factory=dict
    )  # game id -> (row hash, record hash)


def process_tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every process below it (``/proc``; 0 if it is gone)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        todo.extend(children.get(pid, []))
    return total


def disk_usage(directory: Path) -> int:
    """Bytes the files under ``directory`` take (without following links)."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def hash_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stored_rows(directory: Path) -> list[dict[str, Any]]:
    """Every row of the games table (read-only, each as a dict of its columns), ordered by game id."""
    db = sqlite3.connect(f"file:{directory / 'results.sqlite'}?mode=ro", uri=True, timeout=10)
    try:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM games ORDER BY game_id")]
    finally:
        db.close()


def row_hash(row: dict[str, Any]) -> str:
    """A hash of every column of a games row (a stored row never changes)."""
    return hash_bytes(repr(sorted(row.items())).encode())


class Monitor:
    """A thread sampling the ladder every ``every`` seconds until :meth:`end`."""

    def __init__(self, directory: Path, url: str, truth: dict[str, float], server_pid: Callable[[], int | None],
                 *, every: float = 2.0, start: float | None = None) -> None:  # fmt: skip
        self.directory = directory
        self.url = url
        self.truth = truth
        self.server_pid = server_pid
        self.every = every
        self.start = time.monotonic() if start is None else start
        self.watched = Watched()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rehearse-monitor", daemon=True)

    def begin(self) -> None:
        self._thread.start()

    def end(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        with contextlib.suppress(Exception):
            self.sample_games(time.monotonic() - self.start)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            at = time.monotonic() - self.start
            for step in (
                self.sample_versions,
                self.sample_tau,
                self.sample_resources,
                self.sample_games,
            ):
                with contextlib.suppress(
                    Exception
                ):  # a sample missed (a restart, a locked store) is skipped
                    step(at)

    def sample_versions(self, at: float) -> None:
        db = sqlite3.connect(
            f"file:{self.directory / 'ladder.sqlite'}?mode=ro", uri=True, timeout=5
        )
        try:
            rows = list(db.execute("SELECT id, status, created FROM versions"))
        finally:
            db.close()
        now = datetime.datetime.now(datetime.UTC)
        for version_id, status, created in rows:
            if (
                status not in ("uploading", "queued")
                and version_id not in self.watched.building_seen
            ):
                self.watched.building_seen[version_id] = at
                if (
                    version_id not in self.watched.queue_waits
                ):  # out of the queue: its wait, to the sampling's step
                    made = datetime.datetime.fromisoformat(created)
                    if made.tzinfo is None:
                        made = made.replace(tzinfo=datetime.UTC)
                    self.watched.queue_waits[version_id] = max(0.0, (now - made).total_seconds())

    def sample_tau(self, at: float) -> None:
        standings = httpx.get(self.url + "/api/leaderboard", timeout=10).json()["standings"]
        measured = {row["team"]: row["elo"] for row in standings if row.get("elo") is not None}
        self.watched.tau.append((at, kendall_tau(self.truth, measured), len(measured)))

    def sample_resources(self, at: float) -> None:
        pid = self.server_pid()
        if pid is not None:
            self.watched.memory.append((at, process_tree_rss(pid)))
        self.watched.disk.append((at, disk_usage(self.directory)))

    def sample_games(self, at: float) -> None:
        rows = stored_rows(self.directory)
        self.watched.games.append((at, len(rows)))
        for row in rows:
            if row["game_id"] in self.watched.first_seen:
                continue
            record = ""
            if row.get("record"):
                with contextlib.suppress(OSError):
                    record = hash_bytes((self.directory / row["record"]).read_bytes())
            self.watched.first_seen[row["game_id"]] = (row_hash(row), record)


__all__ = [
    "Monitor",
    "Watched",
    "disk_usage",
    "hash_bytes",
    "process_tree_rss",
    "row_hash",
    "stored_rows",
]
