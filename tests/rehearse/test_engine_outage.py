"""A Docker engine that stops for a while costs the ladder no pair and no team its upload (found by the rehearsal).

A rehearsal restarted its own Docker daemon (11 s down) and the ladder voided
17 pairs in two seconds: each pair it started met "no Docker engine answers",
was charged an attempt, and was given up after three.  A build started
meanwhile would have failed the team's version.  Now the first such failure
marks the engine down, the pair or build gets its attempt back, and nothing
new starts until the engine starts a container again.

The same for an engine that answers but starts nothing (CI met Docker 20.10's
libnetwork deadlock: pings, ``version``, ``ps`` and ``create`` answered, no
``start`` or removal ever did): here the daemon's runtime is a wrapper of runc
that waits while a flag file exists, so every start, kill and removal hangs
while the engine answers everything else, under a running ladder, then the
flag goes.  The ladder's watch starts a container, so it sees the outage.

Real parts: ``arena ladder serve`` on a Docker daemon of the test's own
(never the machine's: its engine may be shared), stopped and started again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_support import BASE_IMAGE, engine_or_skip
from helpers import wait_until

from arena.ladder.common.engine_watch import EngineWatch
from arena.rehearse.bots import bot_source, tarball
from arena.rehearse.docker_host import own_engine
from arena.rehearse.faults import restart_daemon
from arena.rehearse.own_faults import can_make_faults
from arena.rehearse.plan import Upload
from arena.rehearse.server import LadderProcess
from arena.rehearse.teams import Team

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]

#: How long the engine starts nothing (seconds): the fault's length, not a bound on the ladder.  Long enough
#: for a watch that only pings to let the new version's validation fail (its seats given up after 15 s each).
WEDGE_S = 150.0


def _one(directory: Path, name: str, query: str) -> list[tuple]:
    with sqlite3.connect(directory / name) as db:
        return db.execute(query).fetchall()


def _done_pairs(directory: Path) -> int:
    return _one(directory, "results.sqlite", "SELECT COUNT(*) FROM pairs WHERE status='done'")[0][0]


def _wedge_runtime(folder: Path) -> tuple[Path, tuple[str, ...]]:
    """A runtime that waits while ``folder/wedged`` exists, then is runc; its flag and the daemon's arguments."""
    flag = folder / "wedged"
    runtime = folder / "wedge-runc"
    runc = shutil.which("runc") or "/usr/sbin/runc"
    runtime.write_text(  # `--version` answers at once: `docker version` and `info` ask it (a wedged engine answers them)
        f"#!/bin/sh\n[ \"$1\" = --version ] && exec {runc} --version\n"
        f"while [ -e {flag} ]; do sleep 0.2; done\nexec {runc} \"$@\"\n"
    )
    runtime.chmod(0o755)
    return flag, (f"--add-runtime=wedge={runtime}", "--default-runtime=wedge")


@contextlib.contextmanager
def _starts_nothing(flag: Path) -> Iterator[None]:
    """For the block, the engine answers every call but starts, kills and removes no container."""
    flag.touch()
    try:
        yield
    finally:
        flag.unlink()


def _no_voids_and_no_failures(directory: Path) -> None:
    voids = _one(directory, "results.sqlite", "SELECT seq, reason FROM pairs WHERE status='void'")
    assert voids == [], voids
    failed = _one(directory, "ladder.sqlite", "SELECT team, number, reason FROM versions WHERE status='failed'")
    assert failed == [], failed


def test_an_engine_that_stops_or_starts_nothing_voids_no_pair_and_fails_no_build(tmp_path: Path):
    engine_or_skip("the engine outage test").close()
    why_not = can_make_faults()
    if why_not is not None:  # as the platform-fault tests: never skipped in CI
        (pytest.fail if os.environ.get("CI") else pytest.skip)(why_not)
    flag, runtime_args = _wedge_runtime(tmp_path)
    with own_engine(BASE_IMAGE, dockerd_args=runtime_args) as daemon:
        # Engine calls bounded to 15 s (ARENA_DOCKER_TIMEOUT): a start the engine never answers fails sooner.
        ladder = LadderProcess(tmp_path / "lad", env={"DOCKER_HOST": daemon.url, "ARENA_DOCKER_TIMEOUT": "15"})
        try:
            ladder.init({"submissions.validation_hands": "1", "time.move": "1.0", "time.bank": "4.0"},
                        base_image=BASE_IMAGE, max_hands=2)  # fmt: skip
            teams = [Team(name, ladder.add_team(name), "") for name in ("alpha", "beta", "gamma", "delta")]
            ladder.start()
            for team in teams:
                team.url = ladder.url
            for team in teams[:2]:
                assert team.submit(Upload(0.0, "honest", base="random"), 0.0).status == 201
            wait_until("a first pair", lambda: _done_pairs(ladder.directory) >= 1)

            daemon.stop()  # the engine goes away while the ladder runs on
            sent = teams[2].submit(Upload(0.0, "honest", base="greedy"), 0.0)
            assert sent.status == 201, sent  # an upload only needs the ladder's disk
            time.sleep(20)  # long enough for the loop to meet the outage many times over
            down_pairs = _one(ladder.directory, "results.sqlite", "SELECT seq, status, reason FROM pairs WHERE status='void'")
            assert down_pairs == [], "a pair met no engine and was given up"
            restart_daemon(daemon)  # (its stop is done: this starts it, trying a new containerd if need be)

            before = _done_pairs(ladder.directory)
            wait_until("gamma active and more pairs", lambda: _one(
                ladder.directory, "ladder.sqlite", "SELECT status FROM versions WHERE team='gamma'")[0][0] == "active"
                and _done_pairs(ladder.directory) >= before + 2)  # fmt: skip
            assert ladder.running, ladder.tail()
            _no_voids_and_no_failures(ladder.directory)
            log = ladder.log.read_text(errors="replace")
            assert "the Docker engine is not available" in log and "the Docker engine is available again" in log, log[-3000:]

            # The engine answers pings but starts no container: a pair or a build meets it, the watch's start sees it.
            told = log.count("the Docker engine is not available")
            with _starts_nothing(flag):
                began = time.monotonic()
                # A Dockerfile with no RUN step: its build starts no container, so its validation meets the engine.
                sent = teams[3].submit_archive(tarball({
                    "bot.py": bot_source("random", 0.0),
                    "Dockerfile": "ARG BOT_BASE\nFROM ${BOT_BASE}\nCOPY bot.py /bot/bot.py\n",
                }), Upload(0.0, "honest", base="random"), 0.0)  # fmt: skip
                assert sent.status == 201, sent
                wait_until("the ladder sees the engine start nothing", lambda: ladder.log.read_text(
                    errors="replace").count("the Docker engine is not available") > told, timeout=900)  # fmt: skip
                time.sleep(max(0.0, WEDGE_S - (time.monotonic() - began)))  # the fault lasts WEDGE_S (see there)
                _no_voids_and_no_failures(ladder.directory)
            before = _done_pairs(ladder.directory)
            wait_until("delta active and more pairs, with nobody's help", lambda: _one(
                ladder.directory, "ladder.sqlite", "SELECT status FROM versions WHERE team='delta'")[0][0] == "active"
                and _done_pairs(ladder.directory) >= before + 2, timeout=900)  # fmt: skip
            assert ladder.running, ladder.tail()
            _no_voids_and_no_failures(ladder.directory)
        finally:
            if ladder.running:
                ladder.stop()
            ladder.remove_temp_dir()


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_watch_pings_with_a_growing_pause_and_tells_once_each_way():
    told: list[str] = []
    answers = [False, True]
    pings: list[float] = []
    clock = _Clock()

    def probe() -> bool:
        pings.append(clock.now)
        return answers.pop(0)

    watch = EngineWatch(told.append, probe=probe, clock=clock)
    assert watch.ready() and pings == [], "no ping while nothing failed"
    watch.failed("DockerUnavailable: no Docker engine answers")
    watch.failed("DockerUnavailable: again")  # a second failure is not told again
    assert not watch.ready() and pings == [], "no ping before the first pause"
    clock.now += 1.0
    assert not watch.ready() and pings == [101.0]
    clock.now += 1.0
    assert not watch.ready() and pings == [101.0], "the pause doubled"
    clock.now += 1.0
    assert watch.ready() and pings == [101.0, 103.0]
    assert watch.ready() and len(pings) == 2, "answering again: no more pings"
    assert len(told) == 2 and "is not available" in told[0] and "available again (after 3 s)" in told[1]


def test_a_platform_error_is_an_outage_only_if_the_engine_does_not_answer():
    answers = [True, False]
    watch = EngineWatch(lambda text: None, probe=lambda: answers.pop(0))
    assert watch.outage(["DockerUnavailable: no Docker engine answers"]), "no ping needed"
    assert answers == [True, False]
    cut = "SeatStartError: the Docker engine could not start a container: ConnectionError"
    assert not watch.outage([cut]), "the engine answers: the pair's own attempt"
    assert watch.outage([cut]), "the engine does not answer: its outage"
    assert not watch.outage([]), "no error, no outage"
