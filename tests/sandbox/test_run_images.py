"""Images carry the run's labels (ARENA_LABELS), and a test run removes the ladder images it built.

Real builds on the machine's engine.  The suite's engine outlives a run (CI
reuses a machine's): ladder versions' images, each under a tag of its own,
piled up run after run (368 images, 11 GB seen) until the session learnt to
remove its own.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from docker_support import BASE_IMAGE, TEST_LABEL, TEST_RUN, engine_or_skip, remove_own_images

from arena.sandbox.build import build_image

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def engine() -> Any:
    client = engine_or_skip("image label tests")
    yield client
    client.close()


def test_a_built_image_carries_the_run_label_and_the_run_removes_its_ladder_images(engine: Any, tmp_path: Path):
    word = uuid.uuid4().hex[:8]
    ladder_tag = f"arena-ladder-t{word}:v1"
    fixed_tag = f"arena-runimages-{word}:test"
    try:
        for name, tag in (("ladder", ladder_tag), ("fixed", fixed_tag)):  # two sources: two images, not one tagged twice
            shutil.copytree(REPO / "example_bots" / "random", tmp_path / name)
            build_image(tmp_path / name, tag=tag, base_image=BASE_IMAGE, client=engine)
        labels = engine.images.get(ladder_tag).labels
        assert labels.get(TEST_LABEL) == TEST_RUN, labels
        assert labels.get("arena.managed") == "1", "the platform's own labels stay"

        assert remove_own_images() >= 1
        assert not engine.images.list(name=ladder_tag.split(":")[0]), "the ladder image went with the run"
        assert engine.images.list(name=fixed_tag.split(":")[0]), "an image under a fixed tag stays (its layers are reused)"
    finally:
        for tag in (ladder_tag, fixed_tag):
            for image in engine.images.list(name=tag.split(":")[0]):
                engine.images.remove(image.id, force=True)
