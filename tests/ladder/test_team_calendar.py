"""A team's page through the calendar, and the deadline judged at an upload's first byte (issue 46).

Real site (uvicorn on 127.0.0.1), the real clock (the ladders are dated around
it), Debian's Chromium for the page.

- An upload whose request arrives before the deadline and whose body ends
  after it is taken and its version dated at its arrival; one that arrives
  after the deadline is refused before its body is read.
- ``/me`` before the deadline: the phase, a countdown to the deadline, the
  version that would be final now marked, the upload form; after it: the
  final version marked as fixed, no upload form (by mouse nor keyboard).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from calendar_support import frozen_ladder, set_keys
from ladder_support import tarball
from site_support import SyntheticLadder, served

from arena.ladder.config import load_ladder_config

HOUR = datetime.timedelta(hours=1)
BOUNDARY = "deadline-test-boundary"


def _slow_body(deadline: datetime.datetime, sent: list[datetime.datetime]) -> Iterator[bytes]:
    """A multipart upload whose first bytes go at once and whose last go after ``deadline``."""
    archive = tarball({"bot.py": "print('hi')\n"})
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"bot\"; filename=\"bot.tar.gz\"\r\n"
            "Content-Type: application/gzip\r\n\r\n").encode()  # fmt: skip
    sent.append(datetime.datetime.now(datetime.UTC))
    yield head + archive[:10]
    while datetime.datetime.now(datetime.UTC) <= deadline + datetime.timedelta(seconds=1):
        time.sleep(0.2)  # the rest of the body after the deadline (bounded by the clock passing it)
    sent.append(datetime.datetime.now(datetime.UTC))
    yield archive[10:] + f"\r\n--{BOUNDARY}--\r\n".encode()


def test_an_upload_begun_before_the_deadline_is_on_time_one_begun_after_is_refused(tmp_path: Path) -> None:
    real = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        deadline = real + datetime.timedelta(seconds=45)
        set_keys(lad.directory, deadline=deadline)
        lad.add_team("alpha")
        config = load_ladder_config(lad.directory)
        with served(config, lad.state) as url:
            sent: list[datetime.datetime] = []
            headers = {"Authorization": f"Bearer {lad.tokens['alpha']}",
                       "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}  # fmt: skip
            taken = httpx.post(url + "/api/submissions", content=_slow_body(deadline, sent), headers=headers,
                               timeout=httpx.Timeout(30, read=300))  # fmt: skip
            assert sent[0] < deadline < sent[1], "the test's upload did not straddle the deadline"
            assert taken.status_code == 201, taken.text
            (version,) = lad.store.versions(team="alpha")
            created = datetime.datetime.fromisoformat(version.created)
            assert created <= deadline, f"dated {version.created}, after the deadline {deadline}"
            late = httpx.post(url + "/api/submissions", headers={"Authorization": f"Bearer {lad.tokens['alpha']}"},
                              files={"bot": ("bot.tar.gz", tarball({"bot.py": "x\n"}), "application/gzip")},
                              timeout=60)  # fmt: skip
            assert late.status_code == 403 and late.json()["detail"].startswith("uploads closed at the deadline")
            assert len(lad.store.versions(team="alpha")) == 1
    finally:
        lad.close()


def _sign_in(page, url: str, token: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url + "/signin")
    page.fill("#token", token)
    page.press("#token", "Enter")  # by keyboard
    page.wait_for_url(url + "/me")


def _focusable_ids(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The ids of what Tab reaches on the page, in order (until focus comes back round)."""
    ids: list[str] = []
    for _ in range(80):
        page.keyboard.press("Tab")
        ids.append(page.evaluate("document.activeElement && (document.activeElement.id || document.activeElement.tagName)"))
    return ids


def test_the_team_page_before_the_deadline_counts_down_and_marks_the_version_that_would_be_final(
    tmp_path: Path, browser  # type: ignore[no-untyped-def]
) -> None:
    real = datetime.datetime.now(datetime.UTC)
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        set_keys(lad.directory, deadline=real + 72 * HOUR)
        lad.add_team("alpha")
        lad.add_version("alpha")
        lad.add_version("alpha")
        config = load_ladder_config(lad.directory)
        with served(config, lad.state) as url:
            page = browser.new_page()
            _sign_in(page, url, lad.tokens["alpha"])
            assert page.get_attribute("#team-phase", "data-phase") == "open"
            assert page.text_content("#team-countdown").startswith("Deadline in 2 d 23 h (")
            assert "If the deadline were now, your final version would be alpha@2." in page.text_content("#team-final")
            marks = page.locator("#my-versions .final-mark")
            assert marks.count() == 1 and marks.text_content() == "final now"
            assert page.locator('#my-versions tr[data-entry="alpha@2"] .final-mark').count() == 1
            assert page.locator("#submit-form").count() == 1 and "bot-file" in _focusable_ids(page)
            api = httpx.get(url + "/api/me", headers={"Authorization": f"Bearer {lad.tokens['alpha']}"}, timeout=30).json()
            assert api["calendar"]["final"] == "alpha@2" and api["calendar"]["uploads_closed"] is None
    finally:
        lad.close()


def test_the_team_page_after_the_deadline_has_no_upload_form_and_marks_the_fixed_final_version(
    tmp_path: Path, browser  # type: ignore[no-untyped-def]
) -> None:
    lad = frozen_ladder(tmp_path / "lad")
    try:
        lad.add_version("beta")  # a later version (as a build after the deadline would make): not the final one
        with served(lad.config, lad.state) as url:
            page = browser.new_page()
            _sign_in(page, url, lad.tokens["beta"])
            assert page.get_attribute("#team-phase", "data-phase") == "frozen"
            assert page.locator("#submit-form").count() == 0 and page.locator("#bot-file").count() == 0
            assert "uploads closed at the deadline" in page.text_content("#uploads-closed")
            assert "bot-file" not in _focusable_ids(page) and "submit-button" not in _focusable_ids(page)
            assert page.text_content("#team-final") == "Your final version: beta@1."
            assert page.locator('#my-versions tr[data-entry="beta@1"] .final-mark').text_content() == "final"
            assert page.locator('#my-versions tr[data-entry="beta@2"] .final-mark').count() == 0
    finally:
        lad.close()
