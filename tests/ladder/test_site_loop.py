"""No store call on the site's event loop (issue 44): one that blocks stalls only its own request.

Before this (the main branch): the page ``/me/submit`` shows with a refused
upload, and the row of a new practice table, were read and written on the
event loop; a store waiting there (for its lock, a slow disk) held every
other request of the site.  Here the store call blocks until the test lets it
go, and the leaderboard must answer meanwhile.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from site_support import SyntheticLadder, served

from arena.ladder.games.practice_store import PracticeStore
from arena.ladder.site.context import Site

#: How long a blocked store call waits at most (the test lets it go as soon as it has looked).
HOLD_S = 120.0


class Gate:
    """A store call that blocks once armed: ``entered`` when it is reached, until ``release``."""

    def __init__(self) -> None:
        self.armed = False
        self.entered = threading.Event()
        self.release = threading.Event()

    def wrap(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def blocking(*args: Any, **kwargs: Any) -> Any:
            if self.armed:
                self.entered.set()
                self.release.wait(HOLD_S)
            return call(*args, **kwargs)

        return blocking


@pytest.fixture
def ladder(tmp_path: Path) -> Iterator[SyntheticLadder]:
    ladder = SyntheticLadder(tmp_path / "lad")
    for team in ("alpha", "beta"):
        ladder.add_team(team)
        ladder.add_version(team)
    ladder.add_pair("alpha@1", "beta@1", rng=random.Random(1))
    with sqlite3.connect(ladder.config.ladder_path) as db:  # images, so practice tables may seat them
        db.execute("UPDATE versions SET image_id='sha256:' || printf('%064d', id)")
        db.execute("UPDATE teams SET pending=1 WHERE name='alpha'")  # its uploads are refused: not yet approved
    yield ladder
    ladder.close()


@contextlib.contextmanager
def _signed_in(url: str, token: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=HOLD_S + 60) as client:
        assert client.post("/signin", data={"token": token}, headers={"Origin": url}).status_code == 303
        yield client


def _while_blocked(url: str, gate: Gate, request: Callable[[], httpx.Response]) -> tuple[bool, httpx.Response]:
    """Send ``request`` (it reaches the blocking call), then ask for the leaderboard: whether it answered
    while ``request`` was still blocked; and ``request``'s answer once the call is let go."""
    answers: list[httpx.Response] = []
    sender = threading.Thread(target=lambda: answers.append(request()), daemon=True)
    gate.armed = True
    sender.start()
    try:
        assert gate.entered.wait(HOLD_S), "the request never reached the store call"
        try:
            leaderboard = httpx.get(url + "/api/leaderboard", timeout=HOLD_S / 2)
            answered = leaderboard.status_code == 200 and not answers
        except httpx.TimeoutException:
            answered = False
    finally:
        gate.release.set()
        sender.join(HOLD_S + 60)
    assert answers, "the blocked request did not end once let go"
    return answered, answers[0]


def test_a_refused_upload_whose_page_waits_for_the_store_stalls_no_other_request(ladder, monkeypatch):
    gate = Gate()
    monkeypatch.setattr(Site, "me", gate.wrap(Site.me))  # the page a refused upload shows reads the team's versions
    state = ladder.state()
    with served(ladder.config, lambda: state) as url, _signed_in(url, ladder.tokens["alpha"]) as alpha:

        def upload() -> httpx.Response:
            return alpha.post("/me/submit", files={"bot": ("bot.tar.gz", b"\x1f\x8b", "application/gzip")},
                              data={"note": "n"}, headers={"Origin": url})  # fmt: skip

        answered, refused = _while_blocked(url, gate, upload)
    assert answered, "the leaderboard waited for a refused upload's page (a store call on the event loop)"
    assert "waits for the organiser" in refused.text, refused.text[:2000]


def test_opening_a_practice_table_whose_row_waits_for_the_store_stalls_no_other_request(ladder, monkeypatch):
    gate = Gate()
    # The row's write waits for the store (and finds the day's quota used: no table is started).
    monkeypatch.setattr(PracticeStore, "add", gate.wrap(lambda self, team, seats, per_day: None))
    state = ladder.state()
    with served(ladder.config, lambda: state) as url, _signed_in(url, ladder.tokens["beta"]) as beta:

        def open_table() -> httpx.Response:
            return beta.post("/me/practice", data={"version": "alpha@1", "seat": "0"}, headers={"Origin": url})

        answered, refused = _while_blocked(url, gate, open_table)
    assert answered, "the leaderboard waited for a practice table's row (a store call on the event loop)"
    assert refused.status_code == 409 and "practice table" in refused.text, refused.text[:2000]
