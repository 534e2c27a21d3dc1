"""Bots in real containers under a real Docker engine: isolation, limits, faults."""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest

from arena.match import TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.local_match import MatchConfig, run_match
from arena.sandbox.docker import LABEL, RUN_LABEL, ContainerLimits, DockerProcess
from arena_sdk.engine import replay_record, resolve_ruleset
from docker_support import TEST_LABEL, TEST_RUN

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
RANDOM_CMD = f"python {REPO / 'example_bots' / 'random' / 'bot.py'}"
FAST = TimeControl(move_s=1.0, bank_s=5.0, hard_cap_s=10.0)


def match(tmp_path: Path, *bots: BotSpec, games: int = 1, limits: ContainerLimits | None = None, **rules: str):
    config = MatchConfig(
        bots=bots,
        rules=resolve_ruleset("pagat", {"max_hands": "2", **rules}),
        games=games,
        seed="docker-test",
        time_control=FAST,
        out_dir=tmp_path / "out",
        match_id="dt",
        start_timeout=60.0,
        limits=limits or ContainerLimits(),
    )
    return asyncio.run(asyncio.wait_for(run_match(config), 240))


async def run_probe(docker: Any, image: str, env: dict[str, str], tmp_path: Path, limits: ContainerLimits) -> dict:
    """Run the probe bot with ``env`` until it exits; return its JSON report."""
    log = tmp_path / "probe.log"
    proc = await DockerProcess.start(docker, image, env, tmp_path, limits=limits, log_path=log)
    for _ in range(600):
        if proc.exited():
            break
        await asyncio.sleep(0.1)
    await proc.stop()
    lines = [line for line in log.read_text().splitlines() if line.startswith("{")]
    assert lines, log.read_text()
    return json.loads(lines[-1])


def test_a_match_of_the_example_bots_in_containers(images, tmp_path):
    report = match(tmp_path, BotSpec("docker", images["heuristic"]), BotSpec("docker", images["random"]), games=2)
    assert [g.ending for g in report.games] == ["max_hands", "max_hands"] or all(
        g.ending in ("target", "max_hands") for g in report.games
    )
    assert sum(t.strikes for t in report.totals) == 0
    assert [t.name for t in report.totals] == ["heuristic", "random"]
    assert report.exit_codes == [0, 0, 0, 0], "bots exit by themselves after the match"
    for game in report.games:
        record = json.loads((tmp_path / "out" / f"{game.game_id}.json").read_text())
        assert replay_record(record).result == game.result
    assert sorted(p.name for p in (tmp_path / "out" / "logs").iterdir()) == [f"seat{s}.log" for s in range(4)]


def test_no_network_but_loopback_and_no_way_to_the_host(docker, images, tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        result = asyncio.run(
            run_probe(docker, images["probe"], {"ARENA_PROBE": "net", "ARENA_PROBE_PORT": str(port)}, tmp_path, ContainerLimits())
        )
    finally:
        server.close()
    assert result["interfaces"] == ["lo"], "network_mode none: loopback only"
    assert result["connect"] == "ConnectionRefusedError", "the host's loopback is not the container's"


def test_writing_outside_tmp_fails(docker, images, tmp_path):
    result = asyncio.run(run_probe(docker, images["probe"], {"ARENA_PROBE": "fs"}, tmp_path, ContainerLimits()))
    assert result["uid"] == 10001, "bots run as a non-root user"
    assert result["results"]["/tmp/ok"] == "written"
    for path in ("/bot/x", "/x", "/venv/x"):
        assert result["results"][path].startswith("OSError:30"), (path, result)  # EROFS


def test_fork_bomb_is_contained_by_the_pids_limit(docker, images, tmp_path):
    limits = ContainerLimits(pids=32)
    result = asyncio.run(run_probe(docker, images["probe"], {"ARENA_PROBE": "fork"}, tmp_path, limits))
    assert result["error"] == "BlockingIOError", result
    assert result["children"] < 32


def test_memory_hog_is_killed_and_attributed(images, tmp_path):
    hog = BotSpec("docker", images["probe"], env=(("ARENA_PROBE", "oom"),))
    report = match(tmp_path, hog, BotSpec("cmd", RANDOM_CMD), limits=ContainerLimits(memory="96m"))
    game = report.games[0]
    assert game.ending == "forfeit:crash"
    assert game.forfeit["teams"] == ["NS"]
    assert game.forfeit["detail"] == "killed: out of memory"
    assert replay_record(json.loads(json.dumps(game.record))).result.ending == "forfeit:crash"


def test_platform_stop_is_not_reported_as_out_of_memory(docker, images, tmp_path):
    async def start_and_stop() -> tuple[bool, str]:
        # The probe bot waits for a referee that never comes; the platform stops it.
        proc = await DockerProcess.start(
            docker, images["probe"], {"ARENA_ADDRESS": "unix:/arena/none.sock", "ARENA_TOKEN": "x" * 16},
            tmp_path, limits=ContainerLimits(),
        )  # fmt: skip
        await asyncio.sleep(1.0)
        await proc.stop(grace=1.0)
        return proc.oom_killed, await proc.exit_detail()

    oom, detail = asyncio.run(start_and_stop())
    assert oom is False and "out of memory" not in detail


def test_container_that_exits_at_once_forfeits_and_the_match_goes_on(images, tmp_path):
    quitter = BotSpec("docker", images["probe"], env=(("ARENA_PROBE", "exit"),))
    report = match(tmp_path, BotSpec("cmd", RANDOM_CMD), quitter, games=2)
    assert [g.ending for g in report.games] == ["forfeit:crash", "forfeit:crash"]
    assert all(g.winner == 0 for g in report.games)
    assert report.totals[1].forfeits == {"crash": 2}


def test_arena_bot_check_passes_a_good_image_and_fails_a_quitter(images, run_cli):
    good = run_cli("bot", "check", images["heuristic"], "--json", timeout=180)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["pass"] is True


def test_arena_bot_build_errors_are_clear(docker, run_cli, tmp_path):
    empty = tmp_path / "nodockerfile"
    empty.mkdir()
    result = run_cli("bot", "build", str(empty))
    assert result.returncode == 2 and "has no Dockerfile" in result.stderr
    (empty / "Dockerfile").write_text("FROM ${BASE_IMAGE}\nRUN exit 3\n")
    result = run_cli("bot", "build", str(empty), "--base-image", "no-such-base:1")
    assert result.returncode == 2 and "base image 'no-such-base:1' is not on this Docker engine" in result.stderr
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN exit 3\n")
    result = run_cli("bot", "build", str(bad), "--base-image", "arena-base:bookworm", timeout=300)
    assert result.returncode == 2 and "failed" in result.stderr


def test_prune_removes_labelled_leftovers(docker, images, run_cli):
    # Filtered by a run of its own: the engine may be shared, never prune everything.
    run = f"prune-test-{uuid.uuid4().hex[:8]}"
    labels = {LABEL: "1", RUN_LABEL: run, TEST_LABEL: TEST_RUN}
    leftover = docker.containers.create(images["probe"], labels=labels, network_mode="none")
    result = run_cli("sandbox", "prune", "--run", run, "--json")
    assert result.returncode == 0, result.stderr
    assert leftover.name in json.loads(result.stdout)["removed"]
    assert not docker.containers.list(all=True, filters={"id": leftover.id})


