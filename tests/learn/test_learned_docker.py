"""The learned bot as a Docker image (built offline, numpy from wheels/) playing a match, and as a
ladder upload (`arena submit` to a real `arena ladder serve` on 127.0.0.1) that builds, validates and
becomes active.  Real Docker engine, shared: everything here carries this run's own tags and labels."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena.sandbox.docker import NO_NETWORK
from docker_support import BASE_IMAGE, engine_or_skip

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
RUN = f"{os.getpid()}"
BOT_BASE = f"arena-bot-base:learn-{RUN}"
TAG = f"arena-learned-test:{RUN}"


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    client = engine_or_skip("the learned bot's Docker tests")
    yield client
    for name in (TAG, BOT_BASE):
        try:
            client.images.remove(name, force=True)
        except Exception:  # noqa: BLE001 - never built (a test failed early)
            pass


@pytest.fixture(scope="module")
def bot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of example_bots/learned with numpy's wheel in wheels/, as an author prepares it.

    The wheel comes from the arena's own wheel set for bot images (the same
    CPython 3.11 on Linux x86-64 as the image; numpy is one of the arena's
    dependencies), so nothing is downloaded here.
    """
    from arena.sandbox.build import build_wheels, wheel_dir

    target = tmp_path_factory.mktemp("learned") / "learned"
    shutil.copytree(REPO / "example_bots" / "learned", target, ignore=shutil.ignore_patterns("wheels", "__pycache__"))
    numpy_wheels = [w for w in build_wheels(wheel_dir()) if w.name.startswith("numpy-")]
    assert numpy_wheels, "the arena's wheel set has no numpy wheel"
    (target / "wheels").mkdir()
    for wheel in numpy_wheels:
        shutil.copy(wheel, target / "wheels" / wheel.name)
    return target


@pytest.fixture
def arena(run_cli, engine, monkeypatch):
    monkeypatch.setenv("ARENA_BOT_BASE", BOT_BASE)
    monkeypatch.setenv("ARENA_BASE_IMAGE", BASE_IMAGE)
    return run_cli


def test_the_learned_bot_builds_offline_and_plays_in_its_container(arena, bot_dir, engine):
    built = arena("bot", "build", str(bot_dir), "--tag", TAG, timeout=900)
    assert built.returncode == 0, built.stderr
    image = engine.images.get(TAG)
    listing = engine.containers.run(image.id, entrypoint=["/bin/sh", "-c", "ls /bot; /venv/bin/python -c 'import numpy; print(numpy.__version__)'"], remove=True, **NO_NETWORK)
    files = listing.decode().split()
    assert "policy.npz" in files and "bot.py" in files and "wheels" not in files  # wheels/ is left out
    checked = arena("bot", "check", TAG, "--json", timeout=300)
    verdict = json.loads(checked.stdout)
    assert checked.returncode == 0 and verdict["pass"] and verdict["bot"] == "learned", (checked.stdout, checked.stderr)
    played = arena(
        "match", "run", "--bot", f"docker:{TAG}", "--bot", "builtin:easy", "--games", "1",
        "--set", "max_hands=2", "--out", "m", "--json", timeout=900,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    game = json.loads(played.stdout)["games"][0]
    assert game["ending"] in ("target", "floor", "max_hands"), game
    assert game["strikes"]["N"] == game["strikes"]["S"] == 0
    assert game["timing"]["N"]["decisions"] > 20


def test_the_learned_bot_is_submitted_to_a_ladder_and_becomes_active(bot_dir, tmp_path):
    import sys

    sys.path.insert(0, str(REPO / "tests" / "ladder"))
    from ladder_support import Ladder, cli, served

    client = engine_or_skip("the ladder tests")
    with served(Ladder(tmp_path / "lad", "submissions.validation_hands=1"), client) as ladder:
        sent = cli("submit", str(bot_dir), "--server", ladder.url, "--token", ladder.tokens["alpha"],
                   "--note", "trained by self-play", timeout=600)  # fmt: skip
        assert sent.returncode == 0 and "alpha@1" in sent.stdout, sent.stderr

        def status() -> str | None:
            versions = ladder.versions("alpha")
            done = versions and versions[0]["status"] in ("active", "failed")
            return versions[0]["status"] if done else None

        final = ladder.wait_for("the learned bot's version to be built and validated", status, timeout=1200)
        version = ladder.versions("alpha")[0]
        assert final == "active", (version.get("build_log", "")[-2000:], version.get("validation_log", "")[-2000:])
        assert "validation" in version["validation_log"]
