"""The ladder's disk full: an upload is told 503 "try again later" and nothing of it is kept; the site still reads.

The rehearsal's ``disk-full`` fault (arena.rehearse.faults.fill_disk) puts the
ladder directory on a small filesystem of its own and fills it.  Real parts:
``arena ladder serve`` on that filesystem, a team's upload over HTTP.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import httpx
import pytest
from docker_support import BASE_IMAGE

from arena.rehearse.own_faults import FILLER, can_make_faults, filled, small_filesystem
from arena.rehearse.plan import Upload
from arena.rehearse.server import LadderProcess
from arena.rehearse.teams import Team

pytestmark = [pytest.mark.timeout(600)]


def test_an_upload_to_a_full_disk_is_told_to_come_back_and_keeps_nothing(tmp_path: Path):
    why_not = can_make_faults()
    if why_not is not None:  # as the platform-fault tests: never skipped in CI
        (pytest.fail if os.environ.get("CI") else pytest.skip)(why_not)
    with small_filesystem(tmp_path / "lad", "256m") as directory:
        ladder = LadderProcess(directory)
        try:
            ladder.init({"ladder.concurrency": "1"}, base_image=BASE_IMAGE, max_hands=2)
            team = Team("alpha", ladder.add_team("alpha"), "")
            ladder.start()
            team.url = ladder.url
            with filled(directory):
                assert (directory / FILLER).exists()
                sent = team.submit(Upload(0.0, "honest", base="random"), 0.0)
                assert sent.status == 503 and "disk is full" in sent.detail, sent
                board = httpx.get(ladder.url + "/api/leaderboard", timeout=30)
                assert board.status_code == 200, "reading needs no room"
            assert not (directory / FILLER).exists()
            assert ladder.running, ladder.tail()
            with sqlite3.connect(directory / "ladder.sqlite") as db:
                assert db.execute("SELECT COUNT(*) FROM versions").fetchone()[0] == 0, "nothing of it was kept"
            again = team.submit(Upload(0.0, "honest", base="random"), 0.0)
            assert again.status == 201, again
            with sqlite3.connect(directory / "ladder.sqlite") as db:
                rows = db.execute("SELECT number, status FROM versions").fetchall()
            assert [number for number, _ in rows] == [1] and rows[0][1] != "uploading", rows
        finally:
            if ladder.running:
                ladder.stop()
            ladder.remove_temp_dir()


def test_the_rehearsals_own_disk_hands_its_files_back_after_a_failure_too(tmp_path: Path):
    from arena.rehearse.course import own_disk

    why_not = can_make_faults()
    if why_not is not None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(why_not)
    for fails in (False, True):
        directory = tmp_path / f"lad-{fails}"
        with contextlib.suppress(RuntimeError), own_disk(directory, "16m") as mounted:
            (mounted / "results.sqlite").write_text("kept")
            assert os.path.ismount(mounted)
            if fails:
                raise RuntimeError("the rehearsal failed")
        assert not os.path.ismount(directory)
        assert (directory / "results.sqlite").read_text() == "kept"
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
