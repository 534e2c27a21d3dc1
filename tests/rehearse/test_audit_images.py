"""A rehearsal's audit counts the ladder's bot images left behind, and only that ladder's (issue 44).

Before this (the main branch) "left behind" counted containers, temporary
files and processes: the 20 image tags a small rehearsal left were not seen.
Real Docker engine: tags in the ladder's repository are found; another
ladder's (even one whose id starts with this one's) are not.
"""

from __future__ import annotations

import uuid

import pytest
from docker_support import BASE_IMAGE, engine_or_skip
from test_audit_report import _report

from arena.rehearse.audit import left_images
from arena.rehearse.report import headline

pytestmark = [pytest.mark.docker, pytest.mark.timeout(300)]


def test_the_audit_finds_the_ladders_images_and_no_other_ladders() -> None:
    engine = engine_or_skip("the audit's image count")
    ladder_id = uuid.uuid4().hex[:12]
    ours = [f"arena-ladder-{ladder_id}:v1", f"arena-ladder-{ladder_id}:v2"]
    theirs = [f"arena-ladder-{ladder_id}0:v1", f"arena-ladder-x{ladder_id}:v1"]
    image = engine.images.get(BASE_IMAGE)
    try:
        for tag in ours + theirs:
            repository, _, version = tag.rpartition(":")
            assert image.tag(repository, version)
        assert left_images(ladder_id) == sorted(ours)
        assert left_images(uuid.uuid4().hex[:12]) == []
    finally:
        for tag in ours + theirs:
            engine.api.remove_image(tag)
        engine.close()
    left = {"containers": [], "images": ours, "temp_dirs": [], "tmp_files": [], "processes": []}
    shown = dict(headline(_report(left_behind=left)))
    assert shown["left behind"].startswith("0 containers, 2 images, 0 temp dirs"), shown["left behind"]
