"""Any language on the ladder (issue 46): the Node.js example, uploaded, built offline, validated, ranked.

The example (``example_bots/node``: bot.js written from the protocol alone,
its own Dockerfile) is uploaded as a team would: the directory with its
``node_modules/`` (``npm ci --no-bin-links``) and ``arena.proto``.  The
organiser's base image has Node.js (an offline build cannot install a
runtime): here ``arena-base:bookworm`` with this machine's ``node`` copied
in, an image this test builds, labels and removes.  The build runs offline
under the Dockerfile policy, the validation game is played, the version
becomes active and plays a pair against a Python bot.
"""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_support import BASE_IMAGE, TEST_LABEL, TEST_RUN, engine_or_skip
from ladder_support import Ladder, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
NODE_DIR = REPO / "example_bots" / "node"
BOT = "from arena_sdk import run\nfrom arena_sdk.testing import RandomBot\n\nrun(RandomBot())\n"


def node_upload() -> bytes:
    """The Node example as a team uploads it: its files, node_modules/ without .bin links, arena.proto."""
    files: dict[str, bytes | str] = {}
    for path in sorted(NODE_DIR.rglob("*")):
        relative = path.relative_to(NODE_DIR)
        if path.is_symlink() or not path.is_file() or ".bin" in relative.parts:
            continue
        files[str(relative)] = path.read_bytes()
    files["arena.proto"] = (REPO / "proto" / "arena" / "v1" / "arena.proto").read_bytes()
    return tarball(files)


@pytest.fixture(scope="module")
def node_base() -> Iterator[str]:
    """An organiser's base image with Node.js: the Debian base plus this machine's node binary."""
    client = engine_or_skip("the Node example on a ladder")
    node = shutil.which("node")
    if node is None or not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.skip("needs node and the example's packages: (cd example_bots/node && npm ci)")
    tag = f"arena-test-node-base:{uuid.uuid4().hex[:8]}"
    context = Path(__import__("tempfile").mkdtemp(prefix="node-base-"))
    try:
        shutil.copy2(Path(node).resolve(), context / "node")
        (context / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nCOPY node /usr/local/bin/node\n")
        client.images.build(path=str(context), tag=tag, labels={TEST_LABEL: TEST_RUN}, network_mode="none", rm=True)
    finally:
        shutil.rmtree(context, ignore_errors=True)
    try:
        yield tag
    finally:
        client.images.remove(tag, force=True)
        client.close()


def test_the_node_example_is_built_offline_validated_and_plays_a_pair(node_base: str, tmp_path: Path) -> None:
    client = engine_or_skip("the Node example on a ladder")
    lad = Ladder(tmp_path / "lad", "submissions.validation_hands=1", f'submissions.base_image="{node_base}"')
    with served(lad, client):
        assert lad.upload("alpha", node_upload(), note="node").status_code == 201
        assert lad.upload("beta", tarball({"bot.py": BOT})).status_code == 201
        for team in ("alpha", "beta"):
            lad.wait_for(f"{team}@1 settled", lambda team=team: lad.versions(team)[0]["status"] not in
                         ("uploading", "queued", "building", "validating"), timeout=1200)  # fmt: skip
        node = lad.versions("alpha")[0]
        assert node["status"] == "active", (node["reason"], node["build_log"][-2000:], node["validation_log"][-2000:])
        assert lad.versions("beta")[0]["status"] == "active"

        def a_pair_done() -> bool:
            with sqlite3.connect(lad.directory / "results.sqlite") as db:
                rows = db.execute("SELECT first, second FROM pairs WHERE status='done'").fetchall()
            return any({"alpha@1", "beta@1"} == {a, b} for a, b in rows)

        lad.wait_for("a pair between the Node bot and the Python bot", a_pair_done, timeout=900)
