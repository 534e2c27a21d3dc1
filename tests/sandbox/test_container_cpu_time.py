"""CPU time per decision for a bot in a container (issue #16.5), from its cgroup.

The local-process version is tests/referee/test_referee_clock.py; here the bot
is an image built by ``arena bot build`` on the offline base image, and the
referee reads the container's cgroup CPU usage around each decision.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_sdk.engine import resolve_ruleset
from docker_support import BASE_IMAGE
from helpers import BURNER_BOT, bot_image

from arena.match import TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.local_match import MatchConfig, run_match

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "example_bots" / "random" / "bot.py"
TAG = f"arena-cpu-test:{os.getpid()}"
#: CPU seconds the bot burns on its second play (and sleeps, without CPU, on its third).
BURN_S = 0.3


@pytest.fixture(scope="module")
def burner_image(docker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The burner bot as an image, built offline with ``arena bot build`` (removed afterwards)."""
    with bot_image(docker, tmp_path_factory.mktemp("burner"), BURNER_BOT.format(burn=BURN_S), TAG, BASE_IMAGE) as tag:
        yield tag


def test_a_container_bots_cpu_time_per_decision_is_recorded(burner_image: str, tmp_path: Path) -> None:
    # Two-player, one hand: one container (the burner) against a local random bot keeps it short.
    config = MatchConfig(
        bots=(BotSpec("docker", burner_image), BotSpec("cmd", f"{sys.executable} {RANDOM_BOT}")),
        rules=resolve_ruleset("two-player", {"max_hands": "1"}),
        games=1,
        seed="container-cpu",
        # Roomy limits: the machine is shared, and a strike would end the point of the test.
        time_control=TimeControl(move_s=3.0, bank_s=3.0, hard_cap_s=6.0),
        out_dir=tmp_path / "out",
        match_id="cpu",
        start_timeout=60.0,
    )
    report = asyncio.run(asyncio.wait_for(run_match(config), 240))
    [game] = report.games
    logs = {p.name: p.read_text()[-2000:] for p in sorted((tmp_path / "out" / "logs").glob("*.log"))}
    assert game.ending == "max_hands" and sum(t.strikes for t in report.totals) == 0, (game.ending, logs)
    record = json.loads((tmp_path / "out" / f"{game.game_id}.json").read_text())
    [seat] = [s for s, bot in record["seats"].items() if bot["name"] == "burner"]
    actions = [a for h in record["hands"] for a in h["actions"] if a["seat"] == seat]
    assert actions and all(a.get("cpu_ms") is not None for a in actions), "the cgroup is read for every decision"
    plays = [a for a in actions if a["kind"] == "play"]
    burned, slept = plays[1], plays[2]
    # The cgroup counts every process of the container (gRPC threads too): a little over the burn.
    assert BURN_S * 1000 * 0.9 <= burned["cpu_ms"] <= BURN_S * 1000 * 1.6, burned
    assert burned["cpu_ms"] <= burned["ms"] * 1.05 + 10, "one CPU's quota: no more CPU than wall time"
    assert slept["cpu_ms"] < 50 and slept["ms"] >= BURN_S * 1000, slept
    # The idle decisions cost the container next to nothing.
    others = [a for a in actions if a is not burned]
    assert sorted(a["cpu_ms"] for a in others)[len(others) // 2] < 20, others
    # The seat's totals (the match summary's and the tournament's timing) count every decision as measured.
    assert game.stats[0].cpu_measured == game.stats[0].decisions == len(actions)
    assert game.stats[0].cpu_s == pytest.approx(sum(a["cpu_ms"] for a in actions) / 1000, abs=0.01)
