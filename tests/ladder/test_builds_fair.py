"""The builders in turn across teams (issue 44): one team's slow uploads cannot hold them.

Before this (the main branch) the queue was first come, first served: one
team's 20 uploads that each ran to ``build_timeout`` held both builders for
about 100 minutes while every other team waited.  Here, on a real server with
one builder and real builds: alpha's two slow uploads come first, beta's
honest one after them; beta's is built before alpha's second.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from docker_support import engine_or_skip
from ladder_support import Ladder, bot_source, cli, served, tarball

from arena.ladder.versions.build_queue import next_to_build
from arena.ladder.versions.store import Version


def _version(id_: int, team: str) -> Version:
    return Version(id=id_, team=team, number=id_, note="", status="queued", image_id=None, build_log="",
                   validation_log="", attempts=0, created="", activated=None, retired=None, final_elo=None,
                   final_low=None, final_high=None, final_pairs=None)  # fmt: skip


def test_the_next_build_goes_to_the_team_with_fewest_running_then_longest_without_a_turn() -> None:
    queued = [_version(1, "slow"), _version(2, "slow"), _version(3, "slow"), _version(4, "honest")]
    assert next_to_build(queued, {}, {}).id == 1  # nobody runs, nobody had a turn: the oldest upload
    assert next_to_build(queued, {"slow": 1}, {"slow": 0}).id == 4  # no second builder while honest waits
    assert next_to_build(queued, {}, {"slow": 5}).id == 4  # both idle: the team that never had a turn
    assert next_to_build(queued, {}, {"slow": 5, "honest": 7}).id == 1  # honest had the later turn
    assert next_to_build([_version(9, "slow"), _version(5, "slow")], {"slow": 2}, {}).id == 5  # alone: its oldest
    assert next_to_build([], {}, {}) is None


@pytest.mark.docker
@pytest.mark.timeout(1200)
def test_an_honest_upload_is_built_before_a_slow_teams_second(tmp_path: Path):
    client = engine_or_skip("the fair builders test")
    word = uuid.uuid4().hex  # a step the layer cache cannot finish
    slow = f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nRUN echo {word} && sleep 900\nCOPY bot.py /bot/\n"
    ladder = Ladder(tmp_path / "lad", "submissions.validation_hands=1", "submissions.build_timeout=8.0",
                    "submissions.builders=1")  # fmt: skip
    try:
        with served(ladder, client):
            assert ladder.upload("alpha", tarball({"Dockerfile": slow, "bot.py": bot_source("SLOW1")})).status_code == 201
            ladder.wait_for("alpha@1 building", lambda: ladder.versions("alpha")[0]["status"] != "queued", timeout=300)
            assert ladder.upload("alpha", tarball({"Dockerfile": slow, "bot.py": bot_source("SLOW2")})).status_code == 201
            assert ladder.upload("beta", tarball({"bot.py": bot_source("HONEST")})).status_code == 201
            ladder.wait_for("beta@1 active", lambda: ladder.versions("beta")[0]["status"] == "active")
            ladder.wait_for("alpha@2 failed", lambda: {v["entry"]: v["status"] for v in ladder.versions("alpha")}
                            .get("alpha@2") == "failed")  # fmt: skip
    finally:
        cli("ladder", "clean", str(ladder.directory), "--all")  # its images (arena ladder clean)
    started = re.findall(r"(\w+@\d+): building \(attempt", ladder.log.read_text())
    assert started == ["alpha@1", "beta@1", "alpha@2"], started
