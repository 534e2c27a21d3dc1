"""One rehearsal, start to end: a real ladder, the plan's teams, visitors and faults, then the audit.

The term is compressed into ``seconds``: every planned moment (a fraction of
the term) happens at that fraction of the wall time.  The ladder is set for
a short term (few hands a game, one validation hand, a short build timeout,
a tight clock: a stalled bot costs seconds, not minutes); everything else is
the ladder's own defaults.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from arena.rehearse.audit import audit
from arena.rehearse.docker_host import own_engine
from arena.rehearse.faults import TARGETS, Struck, strike
from arena.rehearse.monitor import Monitor
from arena.rehearse.own_faults import FILLER, OwnDaemon, can_make_faults, small_filesystem
from arena.rehearse.plan import Fault, Plan, Upload
from arena.rehearse.server import LadderProcess, RehearsalError, arena
from arena.rehearse.teams import Sent, Team
from arena.rehearse.visitors import Visitors

#: How long a team keeps trying an upload that found the server down or its disk full (a fault, a restart).
RETRY_FOR = 300.0


@dataclasses.dataclass(frozen=True)
class Settings:
    """How the rehearsal's ladder is set (the keys a short term needs; the rest are the defaults)."""

    seconds: float
    concurrency: int = 1
    max_hands: int = 3
    build_timeout: float = 30.0
    base_image: str = os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm")
    visitors: int = 2
    visit_rate: float = 2.0
    slow_client: bool = True
    sample_every: float = 2.0
    own_docker: bool = False
    """Seats and builds on a Docker daemon of the rehearsal's own (needed for ``docker-restart`` faults)."""
    own_disk: bool = False
    """The ladder directory on a filesystem of the rehearsal's own (a tmpfs; needed for ``disk-full`` faults)."""
    disk_size: str = "8g"
    """That filesystem's size (a tmpfs takes memory only for what it holds)."""
    disk_hold: float | None = None
    """How long a ``disk-full`` fault keeps the disk full (default: 3% of the term, 10 to 120 s)."""
    min_pairs: int = 0
    """After the term, play on until this many pairs are done (a loaded machine plays fewer in the time)."""
    settle_for: float = 0.0
    """After the term, wait up to this many seconds for ``min_pairs`` and for every build to end."""

    @property
    def full_disk_for(self) -> float:
        """Seconds a ``disk-full`` fault keeps the disk full."""
        if self.disk_hold is not None:
            return self.disk_hold
        return min(120.0, max(10.0, 0.03 * self.seconds))

    def ladder_toml(self) -> dict[str, str]:
        return {
            "ladder.concurrency": str(self.concurrency),
            "time.move": "1.0",
            "time.bank": "4.0",
            "time.hard_cap": "4.0",
            "submissions.build_timeout": f"{self.build_timeout:.1f}",
            "submissions.validation_hands": "1",
            "submissions.daily_quota": "100",
        }


#: Progress callback: (seconds into the term, total seconds, one line of what happened).
Progress = Callable[[float, float, str], None]


def _submit(team: Team, upload: Upload, start: float, server: LadderProcess) -> Sent:
    """Send an upload; while the server is down (a fault, a restart) try again, as a team would."""
    give_up = time.monotonic() + RETRY_FOR
    while True:
        sent = team.submit(upload, time.monotonic() - start)
        if sent.status not in (0, 502, 503) or time.monotonic() > give_up:
            return sent
        time.sleep(2.0)


def _settle(directory: Path, settings: Settings, tick: Callable[[], None]) -> None:
    """Bounded by outcomes: wait (at most ``settle_for`` s) until ``min_pairs`` are done and no build is in flight."""
    deadline = time.monotonic() + settings.settle_for
    while time.monotonic() < deadline:
        with contextlib.suppress(sqlite3.Error):
            results = sqlite3.connect(
                f"file:{directory / 'results.sqlite'}?mode=ro", uri=True, timeout=10
            )
            ladder = sqlite3.connect(
                f"file:{directory / 'ladder.sqlite'}?mode=ro", uri=True, timeout=10
            )
            try:
                done = results.execute("SELECT COUNT(*) FROM pairs WHERE status='done'").fetchone()[
                    0
                ]
                busy = ladder.execute(
                    "SELECT COUNT(*) FROM versions WHERE status IN ('uploading', 'queued', 'building', 'validating')"
                ).fetchone()[0]
            finally:
                results.close()
                ladder.close()
            if done >= settings.min_pairs and not busy:
                return
        tick()
        time.sleep(1.0)


def rehearse(
    directory: Path, plan: Plan, settings: Settings, progress: Progress | None = None
) -> dict[str, Any]:
    """Play ``plan`` against a new ladder in ``directory`` for ``settings.seconds``; the audit's report.

    With ``settings.own_docker`` the ladder's seats and builds run on a Docker
    daemon of the rehearsal's own (the course's ``docker-restart`` faults restart it).
    With ``settings.own_disk`` ``directory`` is a small filesystem of its own
    while the term runs (the ``disk-full`` faults fill it); afterwards its
    contents are copied back to an ordinary ``directory``.
    """
    say = progress or (lambda at, total, line: None)
    with contextlib.ExitStack() as stack:
        daemon = None
        if settings.own_disk:
            stack.enter_context(own_disk(directory, settings.disk_size))
        if settings.own_docker:
            say(0, settings.seconds, "starting a Docker daemon of the rehearsal's own")
            daemon = stack.enter_context(own_engine(settings.base_image))
        return _rehearse(directory, plan, settings, progress, daemon)


def _remove_images(server: LadderProcess) -> None:
    """The organiser's last step of a term: ``arena ladder clean DIR --all`` (the audit counts what it leaves)."""
    with contextlib.suppress(RehearsalError, subprocess.TimeoutExpired):
        arena("ladder", "clean", str(server.directory), "--all", env=server.env, timeout=600)


@contextlib.contextmanager
def own_disk(directory: Path, size: str) -> Iterator[Path]:
    """``directory`` on a tmpfs of ``size`` while the block runs; then an ordinary directory with the same files."""
    why_not = can_make_faults()
    if why_not is not None:
        raise RehearsalError(f"a filesystem of the rehearsal's own {why_not}")
    if directory.exists() and any(directory.iterdir()):
        raise RehearsalError(f"{directory} is not empty: a rehearsal makes its own ladder there")
    kept = directory.with_name(f".{directory.name}.kept")
    try:
        with small_filesystem(directory, size):
            try:
                yield directory
            finally:
                (directory / FILLER).unlink(missing_ok=True)
                with contextlib.suppress(shutil.Error):  # sockets and the like are not copied
                    shutil.copytree(directory, kept, symlinks=True)
    finally:  # a rehearsal that failed keeps its ladder for inspection too
        if kept.is_dir():
            directory.rmdir()
            kept.rename(directory)


def _rehearse(
    directory: Path,
    plan: Plan,
    settings: Settings,
    progress: Progress | None,
    daemon: OwnDaemon | None,
) -> dict[str, Any]:
    term = _Term(directory, plan, settings, progress or (lambda at, total, line: None), daemon)
    teams = term.begin()
    try:
        sent = term.play(teams)
    finally:
        term.end()
    server = term.server
    elapsed = time.monotonic() - term.start
    try:
        report = audit(directory, plan, sent, term.struck, term.monitor.watched, term.visitors.visits, seconds=elapsed,
                       cores=os.cpu_count() or 1, sys_tmp=server.sys_tmp,
                       docker_url=daemon.url if daemon else None)  # fmt: skip
    finally:
        server.remove_temp_dir()
    report["settings"] = dataclasses.asdict(settings)
    report["server_starts"] = server.starts
    return report


class _Term:
    """One rehearsal's term as it runs: the ladder's server, the clock, the watchers and the faults struck."""

    def __init__(
        self, directory: Path, plan: Plan, settings: Settings, say: Progress, daemon: OwnDaemon | None
    ) -> None:
        self.directory, self.plan, self.settings, self.say, self.daemon = directory, plan, settings, say, daemon
        self.total = settings.seconds
        self.server = LadderProcess(directory, env={"DOCKER_HOST": daemon.url} if daemon else None)
        self.struck: list[Struck] = []
        self.kills = 0  # the n-th kill aims at TARGETS[n]: a build, a validation, a pair, in turn
        self.held: concurrent.futures.Future[Struck] | None = None  # the fault in hand (one at a time)
        self.start = 0.0

    def begin(self) -> dict[str, Team]:
        """Make the ladder and its teams, serve it, and start the monitor and the visitors."""
        settings, server = self.settings, self.server
        server.init(
            settings.ladder_toml(), base_image=settings.base_image, max_hands=settings.max_hands
        )
        teams = {t.name: Team(t.name, server.add_team(t.name), server.url) for t in self.plan.teams}
        server.start()
        start = self.start = time.monotonic()
        self.say(0, self.total, f"ladder serving on {server.url} with {len(teams)} teams")
        truth = {t.name: t.strength for t in self.plan.teams}
        self.monitor = Monitor(self.directory, server.url, truth, lambda: server.process.pid if server.process else None,
                               every=settings.sample_every, start=start)  # fmt: skip
        self.visitors = Visitors(server.url, list(teams), readers=settings.visitors, rate=settings.visit_rate,
                                 seed=self.plan.seed, slow_client=settings.slow_client, slow_hold=30.0)  # fmt: skip
        self.visitors.start = start
        self.monitor.begin()
        self.visitors.begin()
        return teams

    def now(self) -> float:
        return time.monotonic() - self.start

    def events(self) -> list[tuple[float, str, Any]]:
        """The plan's uploads and faults, in the order of their moments in the term."""
        total = self.total
        events: list[tuple[float, str, Any]] = [
            (at * total, "upload", (name, u)) for at, name, u in self.plan.uploads()
        ]
        events += [(f.at * total, "fault", (i, f)) for i, f in enumerate(self.plan.faults)]
        events.sort(key=lambda e: (e[0], e[1]))
        return events

    def play(self, teams: dict[str, Team]) -> list[Sent]:
        """The term: each upload and fault at its moment, then the rest of the term; what the teams sent."""
        futures: list[concurrent.futures.Future[Sent]] = []
        with (
            concurrent.futures.ThreadPoolExecutor(
                max_workers=4, thread_name_prefix="rehearse-team"
            ) as pool,
            concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="rehearse-fault"
            ) as faults,
        ):
            for moment, kind, payload in self.events():
                delay = self.start + moment - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                at = self.now()
                if kind == "upload":
                    name, upload = payload
                    futures.append(pool.submit(_submit, teams[name], upload, self.start, self.server))
                    self.say(
                        at,
                        self.total,
                        f"{name} uploads {upload.kind} ({upload.base}, p={upload.p}) by {upload.via}",
                    )
                else:
                    self._strike(faults, payload[1], at)
            if self.held is not None:
                self.tell(self.held.result())
            while self.server.running and self.now() < self.total:
                time.sleep(max(0.0, min(1.0, self.total - self.now())))
                self.say(self.now(), self.total, "")
            sent = [f.result() for f in futures]
            _settle(self.directory, self.settings, lambda: self.say(self.now(), self.total, ""))
        return sent

    def _strike(self, faults: concurrent.futures.ThreadPoolExecutor, fault: Fault, at: float) -> None:
        """Strike ``fault`` in the background, once the one in hand has ended."""
        # One fault at a time: the last ends before the next strikes.
        if self.held is not None:
            self.tell(self.held.result())
            self.held = None
        aimed = fault.kind in ("kill", "kill-group")
        target = TARGETS[self.kills % len(TARGETS)] if aimed else "pair"
        self.kills += aimed
        # A pair is nearly always in play; a build or a validation only after an upload: wait longer for those.
        total = self.total
        aim = max(
            5.0,
            0.1 * total
            if target in ("build", "validation")
            else min(30.0, 0.1 * total),
        )
        hold = self.settings.full_disk_for if self.settings.own_disk else None
        # In the background: while a kill waits for its build or validation, and while the
        # disk is full, the teams go on uploading (a wait that held them back would wait in vain).
        aims = (
            f"aims at a {target}"
            if aimed
            else ("for a while" if fault.kind == "disk-full" else "")
        )
        self.say(at, total, f"{fault.kind} {aims}".strip())
        self.held = faults.submit(
            strike,
            self.server,
            fault,
            target,
            at,
            aim_for=aim,
            daemon=self.daemon,
            disk_hold=hold,
        )

    def tell(self, hit: Struck) -> None:
        """A fault has ended: kept for the audit, and said."""
        self.struck.append(hit)
        caught = (
            (f" during {hit.target}" if hit.caught else f" ({hit.target} not caught)")
            if hit.target != "any"
            else ""
        )
        restart = (f"restarted in {hit.restart_seconds:.1f} s" if hit.restart_seconds
                   else "no restart needed" if hit.restart_seconds == 0 else "NOT restarted")  # fmt: skip
        self.say(
            self.now(),
            self.total,
            f"{hit.kind}{caught} at {hit.at / 60:.1f} min; "
            + (f"{hit.detail}; " if hit.detail else "")
            + restart,
        )

    def end(self) -> None:
        """The term is over: the watchers stop, the organiser stops the ladder, its bot images go."""
        self.visitors.end()
        self.monitor.end()
        self.say(self.now(), self.total, "term over: the organiser stops the ladder (SIGTERM)")
        self.server.stop()
        _remove_images(self.server)


__all__ = ["Progress", "Settings", "rehearse"]
