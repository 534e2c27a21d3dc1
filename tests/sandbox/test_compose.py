"""compose.yaml: a referee and four example bots, no network, one match, then exit.

Seat tokens and the seed are never in the file: ``scripts/compose-env.sh``
writes a fresh ``.env`` per run, and without one compose refuses to start.
"""

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


SECRETS = ("ARENA_TOKEN_N", "ARENA_TOKEN_E", "ARENA_TOKEN_S", "ARENA_TOKEN_W", "ARENA_SEED")


def fresh_env(directory: Path) -> dict[str, str]:
    """Run scripts/compose-env.sh in ``directory``; the values it wrote."""
    subprocess.run([str(REPO / "scripts" / "compose-env.sh")], cwd=directory, check=True, capture_output=True)
    assert (directory / ".env").stat().st_mode & 0o077 == 0, ".env is readable by its owner only"
    lines = [line for line in (directory / ".env").read_text().splitlines() if "=" in line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def test_compose_has_no_secrets_and_refuses_to_start_without_them(tmp_path):
    shutil.copy(REPO / "compose.yaml", tmp_path / "compose.yaml")
    text = (tmp_path / "compose.yaml").read_text()
    assert "compose-token" not in text and ":-compose" not in text
    env = {k: v for k, v in os.environ.items() if k not in (*SECRETS, "ARENA_UID")}
    for compose in compose_commands():
        config = subprocess.run([*compose, "-p", "arenacfg", "config"], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert config.returncode != 0, "compose must not start with tokens and seed anyone can read"
        assert "run scripts/compose-env.sh" in config.stderr, config.stderr
    first, second = fresh_env(tmp_path), fresh_env(tmp_path)
    assert set(SECRETS) <= set(first)
    assert all(first[k] != second[k] for k in SECRETS), "fresh tokens and seed every time"
    assert len({first[k] for k in SECRETS[:4]}) == 4 and all(len(first[k]) >= 32 for k in SECRETS[:4])
    for compose in compose_commands():
        config = subprocess.run([*compose, "-p", "arenacfg", "config"], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert config.returncode == 0, config.stderr
        assert second["ARENA_TOKEN_N"] in config.stdout and second["ARENA_SEED"] in config.stdout


@pytest.mark.parametrize("compose", compose_commands(), ids=lambda c: " ".join(c))
def test_compose_plays_a_match_and_exits(images, tmp_path, compose):
    shutil.copy(REPO / "compose.yaml", tmp_path / "compose.yaml")
    fresh_env(tmp_path)
    project = f"arenatest{uuid.uuid4().hex[:8]}"
    env = {
        **{k: v for k, v in os.environ.items() if k not in (*SECRETS, "ARENA_UID")},
        "ARENA_REFEREE_IMAGE": images["referee"],
        "ARENA_BOT_NS": images["heuristic"],
        "ARENA_BOT_EW": images["random"],
        "ARENA_MAX_HANDS": "3",
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
