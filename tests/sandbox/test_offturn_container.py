"""Off-turn CPU with container seats (issue 36): the cgroup's CPU while a seat is not asked.

The local-process version is tests/referee/test_offturn_cpu.py; here both seats
are containers of one image (built by ``arena bot build`` on the offline base
image), A with three threads spinning all along (its ``--cpus`` quota of one
core caps them), B honest.  A's cgroup is read at its answers and requests as
for the CPU clock: its off-turn CPU is recorded and struck; B's is near zero.
The limit is strict (0.3 s and 2% of the wall time not asked), so that on a
busy machine, where a container may get a tenth of a core, A is still struck
(the default limit would rightly spare a seat that takes so little); B, honest,
is not, under the same limit.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_sdk.engine import replay_record, resolve_ruleset
from docker_support import BASE_IMAGE
from helpers import bot_image
from offturn_support import SPIN_BOT

from arena.match import TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.local_match import MatchConfig, run_match

pytestmark = pytest.mark.docker

TAG = f"arena-offturn-test:{os.getpid()}"


@pytest.fixture(scope="module")
def spin_bot_image(docker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with bot_image(docker, tmp_path_factory.mktemp("spin-bot"), SPIN_BOT, TAG, BASE_IMAGE) as tag:
        yield tag


def test_a_containers_off_turn_cpu_is_recorded_and_struck(spin_bot_image: str, tmp_path: Path) -> None:
    spinner = BotSpec("docker", spin_bot_image, (("SPIN_THREADS", "3"), ("PAUSE_S", "0.01")))
    honest = BotSpec("docker", spin_bot_image, (("PAUSE_S", "0.08"),))
    config = MatchConfig(
        bots=(spinner, honest), rules=resolve_ruleset("two-player", {"max_hands": "5"}), games=1,
        seed="offturn-container", time_control=TimeControl(
            move_s=2.0, bank_s=10.0, hard_cap_s=10.0, offturn_free_s=0.3, offturn_share=0.02
        ),
        out_dir=tmp_path / "out", match_id="offturn", start_timeout=60.0,
    )  # fmt: skip
    report = asyncio.run(asyncio.wait_for(run_match(config), 300))
    [game] = report.games
    record = json.loads((tmp_path / "out" / f"{game.game_id}.json").read_text())
    replay_record(record)
    spinning, honest_figures = record["meta"]["offturn"]["A"], record["meta"]["offturn"]["B"]
    assert spinning["cpu_ms"] >= 500, spinning
    struck = [a for h in record["hands"] for a in h["actions"] if a.get("default") == "offturn"]
    assert struck and {a["seat"] for a in struck} == {"A"}, (record["strikes"], spinning)
    assert record["strikes"]["B"] == 0
    assert honest_figures["cpu_ms"] < 0.1 * spinning["cpu_ms"], (honest_figures, spinning)
