"""A build stopped by the organiser (SIGTERM) keeps its attempts: only a kill counts one (found by the rehearsal).

A rehearsal's SIGTERM and then its kill -9 both fell on one version's build,
and the version failed "build given up after 2 attempts (the server stopped
during each)": the team's upload was lost to the organiser's restarts.
Pairs give their start back on a stop on purpose; builds now do too.  Here a
slow build is cut by SIGTERM more times than ``MAX_BUILD_ATTEMPTS`` and still
becomes active, on its first counted attempt.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import pytest
from docker_support import BASE_IMAGE, engine_or_skip
from helpers import wait_until

from arena.ladder.versions.builds import MAX_BUILD_ATTEMPTS
from arena.rehearse.bots import bot_source, tarball
from arena.rehearse.faults import in_progress
from arena.rehearse.plan import Upload
from arena.rehearse.server import LadderProcess
from arena.rehearse.teams import Team

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]


def _version(ladder: LadderProcess) -> tuple[str, int, str]:
    with sqlite3.connect(ladder.directory / "ladder.sqlite") as db:
        return db.execute("SELECT status, attempts, reason FROM versions WHERE team='alpha'").fetchone()


def test_sigterm_during_a_build_gives_its_attempt_back(tmp_path: Path):
    engine_or_skip("the build stop test").close()
    ladder = LadderProcess(tmp_path / "lad")
    try:
        ladder.init({"submissions.validation_hands": "1", "submissions.build_timeout": "300.0"}, base_image=BASE_IMAGE, max_hands=2)
        alpha = Team("alpha", ladder.add_team("alpha"), "")
        ladder.start()
        alpha.url = ladder.url
        # A step new to the engine's cache each time the version is built, slow enough to be caught.
        slow = f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nRUN echo {uuid.uuid4().hex} && sleep 20\nCOPY bot.py /bot/\n"
        archive = tarball({"Dockerfile": slow, "bot.py": bot_source("random", 0.0)})
        sent = alpha.submit_archive(archive, Upload(0.0, "honest"), 0.0)
        assert sent.status == 201, sent
        for _ in range(MAX_BUILD_ATTEMPTS + 1):
            wait_until("alpha@1 building", lambda: in_progress(ladder.directory, "build"), poll=0.2)
            assert ladder.stop() == 0, ladder.tail()
            assert _version(ladder)[:2] == ("queued", 0), "the stop gave the attempt back"
            ladder.start()
        wait_until("alpha@1 settled", lambda: _version(ladder)[0] in ("active", "failed"))
        status, attempts, reason = _version(ladder)
        assert (status, attempts) == ("active", 1), (status, attempts, reason)
    finally:
        if ladder.running:
            ladder.stop()
        ladder.remove_temp_dir()
