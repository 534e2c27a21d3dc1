"""compose.yaml: a referee and four example bots, no network, one match, then exit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from arena_sdk.engine import replay_record

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]


def compose_commands() -> list[list[str]]:
    """Debian's docker-compose 1.29 (required), and `docker compose` where the plugin exists."""
    commands = []
    if shutil.which("docker-compose"):
        commands.append(["docker-compose"])
    elif os.environ.get("CI"):
        pytest.fail("docker-compose is not installed (.ci/run installs it)")
    plugin = subprocess.run(["docker", "compose", "version"], capture_output=True)
    if plugin.returncode == 0:
        commands.append(["docker", "compose"])
    return commands


@pytest.mark.parametrize("compose", compose_commands(), ids=lambda c: " ".join(c))
def test_compose_plays_a_match_and_exits(images, tmp_path, compose):
    shutil.copy(REPO / "compose.yaml", tmp_path / "compose.yaml")
    project = f"arenatest{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "ARENA_REFEREE_IMAGE": images["referee"],
        "ARENA_BOT_NS": images["heuristic"],
        "ARENA_BOT_EW": images["random"],
        "ARENA_MAX_HANDS": "3",
        "ARENA_UID": str(os.getuid()),
    }
    base = [*compose, "-p", project, "-f", str(tmp_path / "compose.yaml")]
    try:
        up = subprocess.run([*base, "up", "--no-color"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]
        states = subprocess.run(
            ["docker", "ps", "-a", "--filter", f"label=com.docker.compose.project={project}",
             "--format", "{{.Names}} {{.Status}}"],
            capture_output=True, text=True, check=True,
        ).stdout.split("\n")  # fmt: skip
        states = [s for s in states if s]
        assert len(states) == 5 and all("Exited (0)" in s for s in states), states
        inspect = subprocess.run(
            ["docker", "inspect", "--format", "{{.HostConfig.NetworkMode}}",
             *[s.split()[0] for s in states]],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        assert inspect == ["none"] * 5, "every service, the referee too, has no network"
        record = json.loads((tmp_path / "compose-out" / "compose-g1.json").read_text())
        report = replay_record(record)
        assert report.result.ending in ("target", "max_hands")
        assert record["seats"]["N"]["name"] == "heuristic" and record["seats"]["E"]["name"] == "random"
    finally:
        subprocess.run([*base, "down", "-v"], cwd=tmp_path, env=env, capture_output=True, timeout=120)
