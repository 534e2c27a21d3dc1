"""Practice tables shared fairly (issue 46), against a real ladder (Docker): a per-team cap and an idle timeout.

Red team 5: one team with nobody playing held both practice tables for six
minutes a decision.  Here a team may have one table open at once
(``[play] per_team_at_once``), and a table whose person does not move for
``idle_seconds`` (its page open but nobody clicking) is closed as ``idle``:
its bots removed, its place free again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from docker_support import engine_or_skip
from guard_support import signed_in
from ladder_support import Ladder, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]

BOT = """\
from arena_sdk import run
from arena_sdk.testing import RandomBot

run(RandomBot())
"""


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder's practice tables")
    lad = Ladder(
        tmp_path_factory.mktemp("ladder") / "lad", "submissions.validation_hands=1", "play.idle_seconds=5",
        "play.tables=2", "play.per_team_at_once=1", "server.header_timeout=2.0",
    )  # fmt: skip
    with served(lad, client):
        assert lad.upload("alpha", tarball({"bot.py": BOT})).status_code == 201
        lad.wait_for("alpha@1 active", lambda: lad.versions("alpha")[0]["status"] == "active")
        yield lad


def _rows(ladder: Ladder, team: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(ladder.directory / "practice.sqlite") as db:
        return db.execute("SELECT id, status FROM practice WHERE team=? ORDER BY id", (team,)).fetchall()


def test_one_team_holds_one_table_and_an_idle_table_closes_by_itself(ladder: Ladder) -> None:
    from websockets.sync.client import connect

    beta = signed_in(ladder, ladder.tokens["beta"])
    form = {"version": "alpha@1", "seat": "0"}
    opened = beta.post("/me/practice", data=form, headers={"Origin": ladder.url})
    assert opened.status_code == 303, opened.text
    key = opened.headers["location"].rsplit("/", 1)[1]
    # A second table for the same team is refused, with the reason; nothing is opened or counted.
    second = beta.post("/me/practice", data=form, headers={"Origin": ladder.url})
    assert second.status_code == 409
    assert "Your team already has 1 practice table open" in second.text
    assert len(_rows(ladder, "beta")) == 1
    assert "a table closes when its person has not moved for 5 seconds" in beta.get("/me").text
    # The page is open, nobody clicks: the table is closed as idle (bounded by outcome, not a sleep).
    url = ladder.url.replace("http://", "ws://") + f"/practice/{key}/ws"
    cookie = {"Cookie": f"arena_session={beta.cookies['arena_session']}"}
    with connect(url, origin=ladder.url, additional_headers=cookie, open_timeout=30) as socket:  # type: ignore[arg-type]
        assert json.loads(socket.recv(timeout=60))["type"] == "state"
        ladder.wait_for("the idle table closed", lambda: _rows(ladder, "beta")[0][1] != "playing", timeout=300)
    assert [status for _, status in _rows(ladder, "beta")] == ["idle"]
    # Its place is free again: the team opens another table.
    again = beta.post("/me/practice", data=form, headers={"Origin": ladder.url})
    assert again.status_code == 303, again.text
    ladder.wait_for("the second idle table closed", lambda: _rows(ladder, "beta")[-1][1] != "playing", timeout=300)
    assert [status for _, status in _rows(ladder, "beta")] == ["idle", "idle"]
