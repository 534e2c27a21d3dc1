"""A ladder server killed with SIGKILL mid-build and mid-upload, under the real Docker engine (issue 25).

A build cut by a killed server is built again when the server starts, and
given up (the version failed, with a log that says why) after
``MAX_BUILD_ATTEMPTS`` starts; a half-received upload leaves no version, no file
and no used quota behind.
"""

from __future__ import annotations

import signal
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_support import engine_or_skip
from ladder_support import Ladder, bot_source, served, tarball

from arena.ladder.versions.builds import MAX_BUILD_ATTEMPTS

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]


def slow_build() -> str:
    """A Dockerfile whose build takes long enough to be caught in the middle: a slow step before its files.

    The step is new to the engine each time (a random word in it): a cached layer from an earlier
    build would finish it at once, and the test would never see the version building.
    """
    return f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nRUN echo {uuid.uuid4().hex} && sleep 25\nCOPY bot.py /bot/\n"


@pytest.fixture
def ladder(tmp_path: Path) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder kill tests")
    with served(Ladder(tmp_path / "lad", "submissions.validation_hands=1", teams=("alpha",)), client) as lad:
        yield lad


def _version(ladder: Ladder, number: int) -> dict:
    return next(v for v in ladder.versions("alpha") if v["version"] == number)


def _kill_while_building(ladder: Ladder, number: int) -> None:
    def building() -> bool:
        version = _version(ladder, number)
        assert version["status"] in ("queued", "building"), f"the build was not caught in the middle: {version}"
        return version["status"] == "building"

    ladder.wait_for(f"alpha@{number} building", building, timeout=300)
    assert ladder.stop(signal.SIGKILL) == -signal.SIGKILL


def test_a_build_cut_by_kill_9_is_built_again_and_given_up_after_the_last_attempt(ladder: Ladder):
    sent = ladder.upload("alpha", tarball({"Dockerfile": slow_build(), "bot.py": bot_source("ALPHA-SLOW")}), note="slow build")
    assert sent.status_code == 201 and sent.json()["entry"] == "alpha@1", sent.text
    _kill_while_building(ladder, 1)
    ladder.start()
    ladder.wait_for("alpha@1 built again and active", lambda: _version(ladder, 1)["status"] in ("active", "failed"))
    first = _version(ladder, 1)
    assert first["status"] == "active", first
    assert first["attempts"] == 2 and first["image_id"], first
    assert [v["version"] for v in ladder.versions("alpha")] == [1], "no version made twice"

    # A build cut at every start is given up after the last attempt; the active version stays.
    sent = ladder.upload("alpha", tarball({"Dockerfile": slow_build(), "bot.py": bot_source("ALPHA-SLOW-2")}))
    assert sent.status_code == 201 and sent.json()["entry"] == "alpha@2", sent.text
    for _ in range(MAX_BUILD_ATTEMPTS):
        _kill_while_building(ladder, 2)
        ladder.start()
    ladder.wait_for("alpha@2 given up", lambda: _version(ladder, 2)["status"] == "failed", timeout=120)
    second = _version(ladder, 2)
    assert f"given up after {MAX_BUILD_ATTEMPTS} attempts" in second["reason"], second
    assert _version(ladder, 1)["status"] == "active"


def test_an_upload_cut_by_kill_9_leaves_nothing(ladder: Ladder):
    quota_before = ladder.get("/api/me", "alpha").json()
    body_size = 4 * 1024 * 1024
    boundary = "arena-test-boundary"
    head = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"bot\"; filename=\"bot.tar.gz\"\r\n"
        "Content-Type: application/gzip\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", ladder.port), timeout=30) as sock:
        sock.sendall(
            (
                "POST /api/submissions HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{ladder.port}\r\n"
                f"Authorization: Bearer {ladder.tokens['alpha']}\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                f"Content-Length: {body_size}\r\n\r\n"
            ).encode()
            + head
        )
        sent = len(head)
        chunk = b"\x1f" * 65536
        while sent < body_size // 2:  # half the body, then the server dies while it waits for the rest
            sock.sendall(chunk)
            sent += len(chunk)
        time.sleep(1.0)
        assert ladder.stop(signal.SIGKILL) == -signal.SIGKILL
    ladder.start()
    assert ladder.versions("alpha") == [], "no version of a cut upload"
    leftovers = [p for p in (ladder.directory / "tmp").rglob("*")] if (ladder.directory / "tmp").exists() else []
    assert leftovers == [], leftovers
    submissions = ladder.directory / "submissions"
    assert not submissions.exists() or not any(submissions.rglob("*.py")), "no files of a cut upload"
    after = ladder.get("/api/me", "alpha").json()
    assert after.get("quota") == quota_before.get("quota"), (quota_before, after)
    # The next upload is version 1: the cut one took no number.
    good = ladder.upload("alpha", tarball({"bot.py": bot_source("ALPHA-AFTER")}))
    assert good.status_code == 201 and good.json()["entry"] == "alpha@1", good.text
