"""A full disk under the practice tables' store: the one store error (DiskFull) and the site's 503, never a 500.

The practice store keeps its rows through the arena's one SQLite helper
(arena.storage), like the ladder's and the results' stores.  Real parts: the
files on a small filesystem of their own, filled (a tmpfs, as the
rehearsal's disk-full fault makes it), the site on a real uvicorn on
loopback, a team signed in with its token.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from site_support import SyntheticLadder, served

from arena.ladder.games.practice_store import PLAYING, PracticeStore
from arena.ladder.versions.lifecycle import ACTIVE
from arena.rehearse.own_faults import can_make_faults, filled, small_filesystem
from arena.storage.sqlite import DiskFull

pytestmark = [pytest.mark.timeout(300)]

SEATS = ["person", "alpha@1", "alpha@1", "alpha@1"]


def needs_faults() -> None:
    why_not = can_make_faults()
    if why_not is not None:  # as the platform-fault tests: never skipped in CI
        (pytest.fail if os.environ.get("CI") else pytest.skip)(why_not)


def test_a_practice_row_on_a_full_disk_is_disk_full_and_half_of_nothing_is_kept(tmp_path: Path):
    needs_faults()
    with small_filesystem(tmp_path / "fs", "8m") as directory:
        store = PracticeStore(directory / "practice.sqlite")
        try:
            first = store.add("alpha", SEATS, 5)
            assert first is not None
            with filled(directory):
                with pytest.raises(DiskFull, match="the disk is full"):
                    store.add("alpha", SEATS, 5)
                with pytest.raises(DiskFull, match="the disk is full"):
                    store.finish(first, "done", game_id="g", ending="score", scores=(500, 120), record="r.json")
                assert store.opened_today("alpha") == 1, "reading needs no room"
            game = store.game(first)
            assert game is not None and game.status == PLAYING and game.score0 is None, "the refused end wrote nothing"
            assert store.add("alpha", SEATS, 5) is not None and store.opened_today("alpha") == 2  # room is back
        finally:
            store.close()


def test_opening_a_practice_table_on_a_full_disk_is_told_to_come_back_not_a_server_error(tmp_path: Path):
    needs_faults()
    with small_filesystem(tmp_path / "fs", "64m") as directory:
        lad = SyntheticLadder(directory / "lad")
        token = lad.add_team("alpha")
        version = lad.add_version("alpha")
        lad.store.transition(version.id, ACTIVE, image_id="sha256:" + "0" * 64)  # never started: the row comes first
        try:
            with served(lad.config, lad.state) as url, httpx.Client(base_url=url, timeout=60) as client:
                signed_in = client.post("/signin", data={"token": token}, headers={"Origin": url})
                assert signed_in.status_code == 303 and signed_in.headers["location"] == "/me"
                with filled(directory):
                    opened = client.post(
                        "/me/practice", data={"version": version.entry, "seat": "0"}, headers={"Origin": url}
                    )
                    assert opened.status_code == 503, opened.text
                    assert opened.headers["retry-after"] == "60" and "disk is full" in opened.json()["detail"]
                    assert client.get("/me").status_code == 200, "the team's page still reads"
        finally:
            lad.close()
        store = PracticeStore(directory / "lad" / "practice.sqlite")
        try:
            assert store.opened_today("alpha") == 0, "nothing of the refused table was kept"
        finally:
            store.close()
