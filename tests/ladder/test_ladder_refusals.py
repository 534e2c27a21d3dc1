"""Hostile or broken uploads to a real ladder server: each one clear refusal, nothing stored (issue 25).

The server runs as ``arena ladder serve`` on 127.0.0.1; uploads go through
the real HTTP API and the real ``arena submit``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from ladder_support import Ladder, bot_source, cli, tarball


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    # Nothing is built here: a base image that does not exist fails every build at once.
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", "submissions.max_bytes=200000",
                 "submissions.daily_quota=2", 'submissions.base_image="arena-no-such-base:none"',
                 teams=("alpha", "beta", "quota"))  # fmt: skip
    lad.start()
    try:
        yield lad
    finally:
        lad.stop()


def _nothing_stored(ladder: Ladder, team: str) -> None:
    assert ladder.versions(team) == [], "a refused upload left a version"
    assert not (ladder.directory / "submissions" / team).exists(), "a refused upload left files"
    assert not any((ladder.directory / "tmp").glob("*")), "a refused upload left temporary files"


def test_a_bad_token_is_refused(ladder: Ladder):
    good = tarball({"bot.py": bot_source("x")})
    response = ladder.post("/api/submissions", None, headers={"Authorization": "Bearer not-a-token"},
                           files={"bot": ("bot.tar.gz", good, "application/gzip")})  # fmt: skip
    assert response.status_code == 401 and "token" in response.json()["detail"]
    anonymous = ladder.post("/api/submissions", None, files={"bot": ("bot.tar.gz", good, "application/gzip")})
    assert anonymous.status_code == 401
    assert ladder.get("/api/me").status_code == 401


@pytest.mark.parametrize(
    "archive, says",
    [
        (tarball({"bot.py": "x", "../escape.py": "y"}), ".."),
        (tarball({"bot.py": "x"}, link=("secrets", "/etc/shadow")), "link"),
        (tarball({"/etc/cron.d/evil": "x", "bot.py": "x"}), "absolute"),
        (tarball({"README": "no bot here"}), "neither bot.py nor a Dockerfile"),
        (b"this is not a tar archive at all", "archive"),
    ],
    ids=["dotdot", "symlink", "absolute", "no-bot", "not-a-tarball"],
)
def test_a_hostile_archive_is_one_clear_refusal_and_nothing_is_stored(ladder: Ladder, archive: bytes, says: str):
    response = ladder.upload("alpha", archive)
    assert response.status_code == 400, response.text
    assert says in response.json()["detail"], response.json()
    _nothing_stored(ladder, "alpha")


def test_an_oversized_upload_is_refused_while_it_arrives(ladder: Ladder):
    big = tarball({"bot.py": bot_source("big"), "blob.bin": os.urandom(400_000)})
    response = ladder.upload("alpha", big)
    assert response.status_code == 413 and "limit" in response.json()["detail"]
    _nothing_stored(ladder, "alpha")


def test_a_daily_quota_counts_submissions(ladder: Ladder):
    ladder.post("/api/admin/pause", "admin")
    try:
        good = tarball({"bot.py": bot_source("q")})
        assert [ladder.upload("quota", good).status_code for _ in range(2)] == [201, 201]
        third = ladder.upload("quota", good)
        assert third.status_code == 429 and "submissions for today" in third.json()["detail"]
        assert [v["version"] for v in ladder.versions("quota")] == [1, 2]
    finally:
        ladder.post("/api/admin/resume", "admin")


def test_arena_submit_refuses_a_directory_with_a_link_before_sending(ladder: Ladder, tmp_path: Path):
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text(bot_source("linked"))
    (bot / "key").symlink_to("/etc/hostname")
    done = cli("submit", str(bot), "--server", ladder.url, "--token", ladder.tokens["beta"])
    assert done.returncode == 2 and "link" in done.stderr, done.stderr
    _nothing_stored(ladder, "beta")
    wrong = cli("submit", str(tmp_path), "--server", ladder.url, "--token", ladder.tokens["beta"])
    assert wrong.returncode == 2 and "neither bot.py nor a Dockerfile" in wrong.stderr


def test_a_team_sees_only_its_own_private_data(ladder: Ladder):
    assert ladder.get("/api/admin/pause").status_code in (404, 405)
    assert ladder.post("/api/admin/pause", "alpha").status_code == 403
    mine = ladder.get("/api/teams/quota", "quota").json()["versions"]
    assert mine and all("build_log" in v for v in mine), "a team sees its own logs"
    theirs = ladder.get("/api/teams/quota", "alpha").json()["versions"]
    assert theirs == [], "another team sees no unranked version and no log"
    assert ladder.get("/api/me/games/L0000001-t1/logs", "alpha").status_code == 404
    assert ladder.get("/api/me/games/../../ladder.toml/logs", "alpha").status_code == 404
    page = ladder.get("/me")
    assert page.status_code in (200, 303) and "build_log" not in page.text
