"""The CPU move clock with container seats (issue 23 item 9): the cgroup's CPU is what is charged.

The local-process version is tests/referee/test_cpu_clock.py; here both seats
are containers of an image built by ``arena bot build`` on the offline base
image.  One burns CPU past its allowance and is struck by the referee's poll
of its cgroup; the other sleeps past move + bank (wall time) and is not.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_sdk.engine import resolve_ruleset
from docker_support import BASE_IMAGE
from helpers import CPU_BOT, bot_image

from arena.match import TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.local_match import MatchConfig, run_match

pytestmark = pytest.mark.docker

TAG = f"arena-cpu-clock-test:{os.getpid()}"


@pytest.fixture(scope="module")
def cpu_bot_image(docker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """:data:`CPU_BOT` as an image, built offline with ``arena bot build`` (removed afterwards)."""
    with bot_image(docker, tmp_path_factory.mktemp("cpu-bot"), CPU_BOT, TAG, BASE_IMAGE) as tag:
        yield tag


def test_cpu_clock_charges_a_containers_cgroup(cpu_bot_image: str, tmp_path: Path) -> None:
    # Move 0.3 s + bank 0.1 s of CPU, a far wall hard cap.  A burns 4.0 s of CPU on its second
    # play; B sleeps 1 s (no CPU) on its fourth.
    burner = BotSpec("docker", cpu_bot_image, (("BURN_S", "4.0"), ("ON_PLAYS", "2")))
    sleeper = BotSpec("docker", cpu_bot_image, (("SLEEP_S", "1.0"), ("ON_PLAYS", "4")))
    config = MatchConfig(
        bots=(burner, sleeper),
        rules=resolve_ruleset("two-player", {"max_hands": "1"}),
        games=1,
        seed="container-cpu-clock",
        # Enough strikes for the rest of A's burn: struck at 0.4 s, it burns on for 3.6 s, and
        # the decisions asked meanwhile are charged that CPU too.
        time_control=TimeControl(move_s=0.3, bank_s=0.1, hard_cap_s=8.0, strikes_to_forfeit=30, clock="cpu"),
        out_dir=tmp_path / "out",
        match_id="cpuclock",
        start_timeout=60.0,
    )
    report = asyncio.run(asyncio.wait_for(run_match(config), 240))
    [game] = report.games
    logs = {p.name: p.read_text()[-2000:] for p in sorted((tmp_path / "out" / "logs").glob("*.log"))}
    assert game.ending == "max_hands", (game.ending, logs)
    record = json.loads((tmp_path / "out" / f"{game.game_id}.json").read_text())
    assert record["meta"]["clock"] == "cpu"
    plays = {
        seat: [a for h in record["hands"] for a in h["actions"] if a["seat"] == seat and a["kind"] == "play"]
        for seat in ("A", "B")
    }
    burned = plays["A"][1]
    assert burned.get("default") == "timeout" and "of CPU" in burned["reason"], burned
    # Struck by the poll of its cgroup once past 0.4 s of CPU, long before its 4.0 s burn ended
    # (room for a referee starved by a loaded machine, whose poll runs late).
    assert 400 <= burned["cpu_ms"] < 3000 and burned["ms"] < 8000 * 0.9, burned
    slept = plays["B"][3]
    assert "default" not in slept and slept["ms"] >= 600 and slept["cpu_ms"] < 100, slept
    assert record["strikes"]["B"] == 0, plays["B"]
