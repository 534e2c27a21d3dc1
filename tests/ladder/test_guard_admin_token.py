"""``arena ladder admin rotate-token``: a new organiser's token, the old one and every admin session ended (issue 36).

On the main branch before this there was no such command: a leaked admin
token, or a 7-day admin cookie, stayed good until the ladder was remade.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from docker_support import engine_or_skip
from guard_support import NO_BUILDS, paused, signed_in
from ladder_support import Ladder, cli, served, token_of

pytestmark = [pytest.mark.docker, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the admin token test")
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", NO_BUILDS)
    with served(lad, client):
        yield lad


def _admin_page(client: httpx.Client) -> int:
    return client.get("/admin").status_code  # 200 signed in as the organiser, 303 to /signin otherwise


def test_rotating_the_admin_token_ends_the_old_token_and_every_admin_session(ladder: Ladder, tmp_path: Path):
    old = ladder.admin
    session = signed_in(ladder, old)
    team = signed_in(ladder, ladder.tokens["alpha"])
    assert _admin_page(session) == 200

    rotated = cli("ladder", "admin", "rotate-token", str(ladder.directory))  # while the server runs
    assert rotated.returncode == 0, rotated.stderr
    assert "1 admin session(s) ended" in rotated.stdout
    new = token_of(rotated.stdout)
    assert new != old

    assert _admin_page(session) == 303, "the admin session signed in with the old token still works"
    assert team.get("/me").status_code == 200, "a team's session is not the organiser's: it stays"
    refused = httpx.post(ladder.url + "/api/admin/pause", headers={"Authorization": f"Bearer {old}"}, timeout=30)
    assert refused.status_code == 401 and not paused(ladder)
    assert httpx.post(ladder.url + "/signin", data={"token": old}, headers={"Origin": ladder.url},
                      timeout=30).status_code == 200, "the old token signs in no more (the form again)"  # fmt: skip
    ok = httpx.post(ladder.url + "/api/admin/pause", headers={"Authorization": f"Bearer {new}"}, timeout=30)
    assert ok.status_code == 200 and paused(ladder)
    assert _admin_page(signed_in(ladder, new)) == 200

    # --to FILE: written only its owner can read, never printed.
    saved = tmp_path / "admin-token"
    again = cli("ladder", "admin", "rotate-token", str(ladder.directory), "--to", str(saved))
    assert again.returncode == 0, again.stderr
    newest = saved.read_text().strip()
    assert newest not in again.stdout and stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert httpx.post(ladder.url + "/api/admin/resume", headers={"Authorization": f"Bearer {newest}"},
                      timeout=30).status_code == 200 and not paused(ladder)  # fmt: skip
    assert httpx.post(ladder.url + "/api/admin/resume", headers={"Authorization": f"Bearer {new}"},
                      timeout=30).status_code == 401  # fmt: skip
    ladder.admin = newest


def test_a_bad_directory_is_one_line(tmp_path: Path):
    done = cli("ladder", "admin", "rotate-token", str(tmp_path / "nowhere"))
    assert done.returncode != 0 and "not a ladder directory" in done.stderr and "Traceback" not in done.stderr
