"""Uploads refused as early as they can be, on a real ladder server (issue 36, issue 32).

Before this, the main branch received and spooled a whole anonymous upload
before its 401, answered an over-cap chunked upload 400, held a stalled
upload's spool for ever, unpacked an over-quota archive before the quota
refused it, and left an upload that failed after its version existed
``uploading`` (using the day's quota until a restart).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from docker_support import engine_or_skip
from guard_support import NO_BUILDS, bot_part_start, closed_by_server, multipart_head, raw_request, status_of
from ladder_support import Ladder, bot_source, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(600)]

CAP = 200_000


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder's upload tests")
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", NO_BUILDS, f"submissions.max_bytes={CAP}",
                 "submissions.daily_quota=1", "server.idle_timeout=2.0",
                 teams=("alpha", "quota", "broken", "stall"))  # fmt: skip
    with served(lad, client):
        yield lad


def _no_spool(ladder: Ladder) -> None:
    assert not any((ladder.directory / "tmp").glob("*")), list((ladder.directory / "tmp").glob("*"))


@pytest.mark.parametrize("token", [None, "not-a-token"], ids=["anonymous", "bad-token"])
def test_an_upload_without_a_team_is_refused_before_its_body_is_sent(ladder: Ladder, token: str | None):
    """The 401 comes back on the headers alone: not one body byte is sent (31 MiB were spooled before)."""
    answer = raw_request(ladder.port, multipart_head("/api/submissions", CAP, token), timeout=30)
    assert answer, "no answer to the headers alone: the server waited for the body"
    assert status_of(answer) == 401
    assert b"connection: close" in answer.lower()
    _no_spool(ladder)


def test_a_form_upload_without_a_session_is_refused_before_its_body(ladder: Ladder):
    head = multipart_head("/me/submit", CAP).replace(b"\r\n\r\n", f"\r\nOrigin: {ladder.url}\r\n\r\n".encode())
    answer = raw_request(ladder.port, head, timeout=30)
    assert answer and status_of(answer) == 303 and b"location: /signin" in answer.lower()


def test_an_over_cap_chunked_upload_is_413(ladder: Ladder):
    def chunks() -> Iterator[bytes]:
        yield bot_part_start()
        for _ in range(2 * CAP // 65536 + 2):
            yield b"\0" * 65536

    headers = {"Authorization": f"Bearer {ladder.tokens['alpha']}",
               "Content-Type": "multipart/form-data; boundary=guardboundary"}  # fmt: skip
    with httpx.Client(timeout=60) as client:
        response = client.post(ladder.url + "/api/submissions", content=chunks(), headers=headers)
    assert response.status_code == 413, response.text
    assert "limit" in response.json()["detail"]
    assert ladder.versions("alpha") == []
    _no_spool(ladder)


def test_an_over_cap_chunked_body_to_any_route_is_413(ladder: Ladder):
    def chunks() -> Iterator[bytes]:
        yield b"token="
        for _ in range(4):
            yield b"x" * 65536

    with httpx.Client(timeout=60) as client:
        response = client.post(ladder.url + "/signin", content=chunks(),
                               headers={"Origin": ladder.url, "Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert response.status_code == 413


def test_a_stalled_upload_is_cut_off_and_its_spool_removed(ladder: Ladder):
    """Half an upload, then silence: the server closes the connection after its idle timeout and keeps nothing."""
    head = multipart_head("/api/submissions", CAP // 2, ladder.tokens["stall"])
    with socket.create_connection(("127.0.0.1", ladder.port), timeout=30) as s:
        s.sendall(head + bot_part_start() + b"\0" * 20_000)
        deadline = time.monotonic() + 60
        while not closed_by_server(s) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert closed_by_server(s), "a stalled upload was held open for a minute"
    deadline = time.monotonic() + 30
    while any((ladder.directory / "tmp").glob("*")) and time.monotonic() < deadline:
        time.sleep(0.2)
    _no_spool(ladder)
    assert ladder.versions("stall") == []


def test_the_quota_is_checked_before_the_archive_is_unpacked_or_even_read(ladder: Ladder):
    assert ladder.upload("quota", tarball({"bot.py": bot_source("q")})).status_code == 201
    # Over the quota, an archive the unpacker would refuse: refused for the quota, so it was never unpacked.
    hostile = ladder.upload("quota", tarball({"bot.py": "x"}, link=("key", "/etc/shadow")))
    assert hostile.status_code == 429 and "submissions for today" in hostile.json()["detail"], hostile.text
    # ... nor read: the headers alone get the 429.
    answer = raw_request(ladder.port, multipart_head("/api/submissions", CAP, ladder.tokens["quota"]), timeout=30)
    assert answer and status_of(answer) == 429
    assert [v["version"] for v in ladder.versions("quota")] == [1]
    _no_spool(ladder)


def test_an_upload_that_fails_after_its_version_exists_is_failed_at_once_with_the_reason(ladder: Ladder):
    """The team's submissions directory cannot be made (a file is in its way): the version ends failed, not uploading."""
    (ladder.directory / "submissions").mkdir(exist_ok=True)
    (ladder.directory / "submissions" / "broken").write_text("in the way")
    response = ladder.upload("broken", tarball({"bot.py": bot_source("b")}))
    assert response.status_code == 500 and "marked failed" in response.json()["detail"]
    (version,) = ladder.versions("broken")
    assert version["status"] == "failed", version
    assert "could not be stored" in version["build_log"]
    _no_spool(ladder)
