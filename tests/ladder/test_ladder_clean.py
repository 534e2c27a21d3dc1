"""``arena ladder clean`` removes the ladder's bot images, and only its (issue 44).

Before this (the main branch) a ladder left every version's image in the
engine (20 tags after one small rehearsal) and nothing removed them.  Here,
with real builds: an honest version (active) and one whose validation fails
(its image built, its version failed).  ``clean`` while the server runs
removes the failed one's image only; ``clean --all`` after the stop removes
every image of this ladder, and another ladder's image (a tag in another
ladder's repository, one whose id merely starts with this one's) stays.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docker_support import engine_or_skip
from ladder_support import Ladder, bot_source, cli, ladder_id, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]


def _tags(client: Any, repository: str) -> list[str]:
    return sorted(t for image in client.images.list(name=repository) for t in image.tags if t.rpartition(":")[0] == repository)


@pytest.fixture
def engine() -> Iterator[Any]:
    client = engine_or_skip("the ladder clean test")
    yield client
    client.close()


def test_clean_removes_this_ladders_spent_images_then_all_of_them_and_nothing_else(engine: Any, tmp_path: Path):
    ladder = Ladder(tmp_path / "lad", "submissions.validation_hands=1")
    repository = f"arena-ladder-{ladder_id(ladder)}"
    others = [f"{repository}x", f"arena-ladder-other{ladder_id(ladder)}"]  # other ladders' repositories
    crash = bot_source("CRASHES", crash=True)
    try:
        with served(ladder, engine):
            assert ladder.upload("alpha", tarball({"bot.py": bot_source("HONEST")})).status_code == 201
            assert ladder.upload("beta", tarball({"bot.py": crash})).status_code == 201
            ladder.wait_for("alpha@1 active", lambda: ladder.versions("alpha")[0]["status"] == "active")
            ladder.wait_for("beta@1 failed", lambda: ladder.versions("beta")[0]["status"] == "failed")
            alpha, beta = ladder.versions("alpha")[0], ladder.versions("beta")[0]
            assert beta["image_id"], "the failing version's image was built (its validation failed)"
            for other in others:
                engine.api.tag(alpha["image_id"], other, "v1")
            built = _tags(engine, repository)
            assert len(built) == 2, built

            spent = cli("ladder", "clean", str(ladder.directory), "--json")  # while the server runs
            assert spent.returncode == 0, spent.stderr
            report = json.loads(spent.stdout)
            assert len(report["removed"]) == 1 and report["kept"] == [] and report["left"] == 1, report
            assert _tags(engine, repository) == [t for t in built if t not in report["removed"]]
            assert engine.images.get(_tags(engine, repository)[0]).id == alpha["image_id"], "the active one stays"
            assert ladder.get("/api/leaderboard").status_code == 200

        every = cli("ladder", "clean", str(ladder.directory), "--all")
        assert every.returncode == 0, every.stderr
        assert "removed 1 of this ladder's 1 images (every image)" in every.stdout, every.stdout
        assert _tags(engine, repository) == []
        for other in others:
            assert _tags(engine, other) == [f"{other}:v1"], f"another ladder's image was removed: {other}"
        again = cli("ladder", "clean", str(ladder.directory), "--all", "--json")
        assert json.loads(again.stdout) == {"removed": [], "kept": [], "left": 0}
    finally:
        for other in others:
            for tag in _tags(engine, other):
                engine.api.remove_image(tag)
        for tag in _tags(engine, repository):
            engine.api.remove_image(tag, force=True)


def test_clean_of_a_directory_that_is_no_ladder_says_so_in_one_line(tmp_path: Path):
    done = cli("ladder", "clean", str(tmp_path / "nothing"))
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and "error:" in done.stderr and "Traceback" not in done.stderr, done.stderr
