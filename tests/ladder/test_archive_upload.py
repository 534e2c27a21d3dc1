"""A deeply nested upload against a real ladder server (issue 36, red team).

A 156-byte upload nested 1,500 directories deep got a 500 and left its tree
in ``DIR/tmp``; the next start then failed with ``RecursionError`` in the
clean-up of ``DIR/tmp``.  Now the upload is one clear refusal that leaves
nothing, and a ``DIR/tmp`` holding such a tree (a server killed mid-upload)
is cleaned at start.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from ladder_support import Ladder, bot_source, tarball
from tree_support import deep_archive, deep_tmp, make_deep_tree  # noqa: F401 - deep_tmp: a fixture, used below

#: Every test here empties its tmp_path without recursion afterwards (deep trees, even when it fails).
pytestmark = pytest.mark.usefixtures("deep_tmp")


@pytest.fixture
def ladder(tmp_path: Path) -> Iterator[Ladder]:
    # Nothing is built here: a base image that does not exist fails every build at once.
    lad = Ladder(tmp_path / "lad", 'submissions.base_image="arena-no-such-base:none"', teams=("alpha",))
    yield lad
    if lad.process is not None and lad.process.poll() is None:
        lad.stop()


def test_a_1500_deep_upload_is_one_line_refusal_and_leaves_nothing(ladder: Ladder):
    ladder.start()
    archive = deep_archive(1500)
    response = ladder.upload("alpha", archive)
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert "nested deeper than 32" in detail and "\n" not in detail and len(detail) < 400, detail
    assert ladder.versions("alpha") == []
    assert not any((ladder.directory / "tmp").iterdir()), "the refused upload left its tree"
    # The server still takes an honest upload afterwards.
    assert ladder.upload("alpha", tarball({"bot.py": bot_source("OK")})).status_code == 201


def test_a_deep_tree_left_in_tmp_does_not_stop_the_server_from_starting(ladder: Ladder):
    tmp = ladder.directory / "tmp"
    tmp.mkdir(exist_ok=True)
    make_deep_tree(tmp / "unpack-0123456789abcdef", 1500)
    locked = tmp / "unpack-locked"
    locked.mkdir()
    (locked / "inner").mkdir()
    locked.chmod(0o500)  # its entries cannot be removed until it is made writable again
    (tmp / "upload-0123456789abcdef").write_bytes(os.urandom(64))
    ladder.start()  # fails (the server exits) if the clean-up raises
    assert not tmp.exists() or not any(tmp.iterdir()), "the clean-up removed what a killed server left"
