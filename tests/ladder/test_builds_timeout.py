"""A hostile build cannot hold the ladder's builder (issue 36, red team).

The red team's Dockerfile passed the policy with ``RUN sleep 900``; with
``build_timeout = 40`` it was still ``building`` 336 s later and two honest
uploads still ``queued``.  Here, on a real server: the slow version fails with
``build timed out after 90 s`` and leaves no step container, and another team's
honest upload, sent right after it, becomes active.  (90 s, a tenth of the slow
step's sleep: an honest build must fit in it on a loaded machine too; with 8 s
both timed out at load 35.)
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from docker_support import engine_or_skip
from ladder_support import Ladder, bot_source, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]


def _version(ladder: Ladder, team: str) -> dict:
    return ladder.versions(team)[0]


def test_a_slow_build_fails_at_its_timeout_and_an_honest_upload_goes_through(tmp_path: Path):
    client = engine_or_skip("the ladder build timeout test")
    word = uuid.uuid4().hex  # a step the layer cache cannot finish
    slow = f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nRUN echo {word} && sleep 900\nCOPY bot.py /bot/\n"
    ladder = Ladder(tmp_path / "lad", "submissions.validation_hands=1", "submissions.build_timeout=90.0")
    with served(ladder, client):
        assert ladder.upload("alpha", tarball({"Dockerfile": slow, "bot.py": bot_source("SLOW")})).status_code == 201
        ladder.wait_for("alpha@1 building", lambda: _version(ladder, "alpha")["status"] != "queued", timeout=300)
        assert ladder.upload("beta", tarball({"bot.py": bot_source("HONEST")})).status_code == 201
        ladder.wait_for("alpha@1 failed", lambda: _version(ladder, "alpha")["status"] == "failed", timeout=600)
        failed = _version(ladder, "alpha")
        assert "build timed out after 90 s" in failed["build_log"], failed["build_log"][-2000:]
        ladder.wait_for("beta@1 active", lambda: _version(ladder, "beta")["status"] == "active")
        leftover = [c for c in client.api.containers(all=True) if word in str(c.get("Command", ""))]
        assert leftover == [], f"the stopped build left a container: {leftover}"
