"""A writer holding ladder.sqlite's write lock stalls only the writes that wait for it, never the site.

On today's main the handlers were ``async`` around blocking SQLite calls
with a 30 s busy timeout: one sign-in waiting for the lock held the event
loop, and every other page waited with it.  Here another connection holds
the write lock (as the loop or the builder does during a transaction) while a
sign-in and the organiser's pause wait for it; the leaderboard, a team page
and a game's record must all answer before the lock is let go.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from site_support import SyntheticLadder, served

#: How long the lock is held at most (the pages must have answered well before).
HOLD_S = 25.0


def test_pages_answer_while_a_writer_holds_the_lock(tmp_path: Path):
    ladder = SyntheticLadder(tmp_path / "lad")
    for team in ("alpha", "beta"):
        ladder.add_team(team)
        ladder.add_version(team)
    ladder.add_pair("alpha@1", "beta@1", rng=random.Random(1), records=True)
    state = ladder.state()
    with served(ladder.config, lambda: state) as url:
        holder = sqlite3.connect(ladder.config.ladder_path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # the write lock, held until we let go
        held = True
        writes: dict[str, int] = {}

        def signin() -> httpx.Response:
            return httpx.post(url + "/signin", data={"token": ladder.tokens["alpha"]}, headers={"Origin": url}, timeout=60)

        def pause() -> httpx.Response:
            return httpx.post(url + "/api/admin/pause", headers={"Authorization": f"Bearer {ladder.admin}"}, timeout=60)

        def write(name: str, call: Callable[[], httpx.Response]) -> None:
            writes[name] = call().status_code

        waiting = [threading.Thread(target=write, args=("signin", signin)),
                   threading.Thread(target=write, args=("pause", pause))]  # fmt: skip
        for t in waiting:
            t.start()
        time.sleep(1.0)  # let both writes reach the store and wait for the lock (on main: on the event loop)
        answered: dict[str, bool] = {}
        deadline = time.monotonic() + HOLD_S
        try:
            for path in ("/", "/teams/alpha", "/api/games/L0000001-t1", "/api/leaderboard", "/games/L0000001-t2"):
                remaining = max(0.1, deadline - time.monotonic())
                try:
                    response = httpx.get(url + path, timeout=remaining)
                    answered[path] = response.status_code == 200 and held
                except httpx.TimeoutException:
                    answered[path] = False
            assert not writes, f"a write went through while the lock was held: {writes}"
        finally:
            holder.execute("ROLLBACK")
            held = False
            holder.close()
        for t in waiting:
            t.join(timeout=60)
    ladder.close()
    assert answered and all(answered.values()), f"pages that did not answer while the lock was held: {answered}"
    assert writes == {"signin": 303, "pause": 200}, "the waiting writes completed once the lock was free"
    with sqlite3.connect(ladder.config.ladder_path) as db:
        assert db.execute("SELECT value FROM meta WHERE key='paused'").fetchone()[0] == "1"
