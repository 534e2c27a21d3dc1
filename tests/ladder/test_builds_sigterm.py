"""SIGTERM during a validation game ends the ladder server within a bound (issue 36, red team).

The red team's server had not exited 240 s after SIGTERM during a validation
game, and the game's containers (under a random run label) were never pruned.
Here a bot that thinks for ten minutes is being validated when the server gets
SIGTERM: it exits within a minute, leaves no container under the ladder's run
label, and the version is queued to be built again.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import pytest
from docker_support import engine_or_skip
from ladder_support import Ladder, bot_source, ladder_id, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]

SLOW_THINKER = bot_source("SLOW-THINKER").replace(
    "class Marked(RandomBot):\n",
    "import time\n\nclass Marked(RandomBot):\n    def bid(self, *a, **k):\n        time.sleep(600)\n        return super().bid(*a, **k)\n\n",
)


def test_sigterm_during_a_validation_game_ends_the_server_within_a_bound(tmp_path: Path):
    client = engine_or_skip("the ladder SIGTERM test")
    ladder = Ladder(tmp_path / "lad", "submissions.validation_hands=1", "time.bank=600.0", "time.hard_cap=900.0",
                    teams=("alpha",))  # fmt: skip
    run = f"ladder-{ladder_id(ladder)}"
    with served(ladder, client):
        sent = ladder.upload("alpha", tarball({"bot.py": SLOW_THINKER}))
        assert sent.status_code == 201, sent.text
        ladder.wait_for("alpha@1 validating", lambda: ladder.versions("alpha")[0]["status"] == "validating")
        ladder.wait_for(
            "the validation game's containers",
            lambda: client.containers.list(filters={"label": [f"arena.run={run}", "arena.match=validate-v1"]}),
            timeout=300,
        )
        time.sleep(3)  # a seat is thinking
        started = time.monotonic()
        code = ladder.stop(signal.SIGTERM, timeout=240)
        took = time.monotonic() - started
        print(f"the server exited {took:.1f} s after SIGTERM during a validation game")
        assert took < 90, f"the server took {took:.0f} s to exit after SIGTERM"
        assert code == 0, ladder.log.read_text()[-3000:]
        left = client.containers.list(all=True, filters={"label": f"arena.run={run}"})
        assert left == [], f"containers left: {[c.name for c in left]}"
    with sqlite3.connect(ladder.directory / "ladder.sqlite") as db:
        (status,) = db.execute("SELECT status FROM versions WHERE team='alpha' AND number=1").fetchone()
    assert status == "queued", "the cancelled version is built again at the next start"
