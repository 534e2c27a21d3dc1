"""The calendar on the real site (uvicorn on 127.0.0.1): refused uploads with the time, the countdown,
the final table, and a team's final selection in Debian's Chromium.

The site asks the real clock, so the ladders here are dated around it.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import httpx
from calendar_support import frozen_ladder, set_keys
from ladder_support import tarball
from site_support import SyntheticLadder, served

from arena.ladder.config import load_ladder_config
from arena.ladder.course.final_store import FinalStore
from arena.ladder.service import LadderService, open_results
from arena.tables.players import LocalTables

HOUR = datetime.timedelta(hours=1)
BOT = tarball({"bot.py": "print('hi')\n"})


def upload(url: str, token: str) -> httpx.Response:
    return httpx.post(url + "/api/submissions", headers={"Authorization": f"Bearer {token}"},
                      files={"bot": ("bot.tar.gz", BOT, "application/gzip")}, timeout=60)  # fmt: skip


def test_uploads_before_opens_are_refused_with_the_time_and_the_leaderboard_counts_down(tmp_path: Path):
    real = datetime.datetime.now(datetime.UTC)
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        set_keys(lad.directory, opens=real + 48 * HOUR, deadline=real + 120 * HOUR)
        lad.add_team("alpha")
        config = load_ladder_config(lad.directory)
        with served(config, lad.state) as url:
            refused = upload(url, lad.tokens["alpha"])
            assert refused.status_code == 403
            detail = refused.json()["detail"]
            opens = config.calendar.opens.isoformat(timespec="seconds")  # type: ignore[union-attr]
            assert re.fullmatch(rf"uploads open at {re.escape(opens)} \(in 1 d 23 h\)", detail), detail
            assert lad.store.versions(team="alpha") == [], "nothing was made"
            home = httpx.get(url + "/").text
            assert 'data-phase="before"' in home and "Uploads open in 1 d 23 h (" in home
            api = httpx.get(url + "/api/final").json()
            assert api["phase"] == "before" and api["final"] is None and api["countdown"].startswith("uploads open in")
    finally:
        lad.close()


def test_after_the_deadline_uploads_are_refused_and_the_frozen_final_table_is_shown(tmp_path: Path):
    lad = frozen_ladder(tmp_path / "lad")
    try:
        with served(lad.config, lad.state) as url:
            refused = upload(url, lad.tokens["beta"])
            assert refused.status_code == 403 and refused.json()["detail"].startswith("uploads closed at the deadline, ")
            assert [v.entry for v in lad.store.versions(team="beta")] == ["beta@1"]
            home = httpx.get(url + "/")
            assert home.status_code == 200 and "<script" not in home.text
            assert 'data-phase="frozen"' in home.text and "Final standings" in home.text
            assert "freeze in" not in home.text, "no countdown once frozen"
            table = home.text[home.text.index('<table id="final-table">'):]
            rows = re.findall(r'<tr data-entry="([^"]+)"( class="tied" data-tie-group="(\d+)")?', table)
            assert [(e, g) for e, _, g in rows] == [("alpha@1", ""), ("beta@1", "1"), ("gamma@1", "1")]
            assert "100.0% <span class=\"verdict verdict-separated\">separated</span>" in table
            assert table.count('<span class="tie"') == 2  # the tied group, marked on both
            page = httpx.get(url + "/final").text
            assert page.count("<tr data-entry=") == 3 and "Frozen at " in page and "final_until (" in page
            api = httpx.get(url + "/api/final").json()
            assert api["phase"] == "frozen" and api["frozen_reason"].startswith("final_until")
            assert [(r["rank"], r["entry"]) for r in api["final"]["rows"]] == [(1, "alpha@1"), (2, "beta@1"), (2, "gamma@1")]
            assert api["final"] == FinalStore(lad.config.ladder_path).frozen().body  # type: ignore[union-attr]
    finally:
        lad.close()


def test_a_team_selects_its_final_version_in_the_browser_before_the_deadline(tmp_path: Path, browser):  # type: ignore[no-untyped-def]
    real = datetime.datetime.now(datetime.UTC)
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        set_keys(lad.directory, deadline=real + 72 * HOUR, choose_from=2)
        lad.add_team("alpha")
        for _ in range(3):
            lad.add_version("alpha")
        config = load_ladder_config(lad.directory)
        with served(config, lad.state) as url:
            page = browser.new_page()
            blocked: list[str] = []
            page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
            page.goto(url + "/")
            assert page.text_content("#countdown").startswith("Deadline in 2 d 23 h (")
            page.goto(url + "/signin")
            page.fill("#token", lad.tokens["alpha"])
            page.click("#signin-button")
            page.wait_for_url(url + "/me")
            page.goto(url + "/final")
            assert "active version at the deadline will be final" in page.text_content("#final-choice")
            assert page.locator("#final-version option").all_text_contents() == ["alpha@2", "alpha@3"]
            page.select_option("#final-version", "2")
            page.click("#final-choose")
            page.wait_for_url(url + "/final")
            assert "Selected: alpha@2." in page.text_content("#final-choice")
            assert FinalStore(config.ladder_path).choices() == {"alpha": "alpha@2"}
            assert blocked == []
            # The API refuses a version outside the last two, with one line.
            api = httpx.post(url + "/api/me/final", headers={"Authorization": f"Bearer {lad.tokens['alpha']}"},
                             json={"version": 1}, timeout=30)  # fmt: skip
            assert api.status_code == 400
            assert api.json()["detail"] == "version 1 cannot be selected: choose among your last 2 ranked versions (2, 3)"
            ok = httpx.post(url + "/api/me/final", headers={"Authorization": f"Bearer {lad.tokens['alpha']}"},
                            json={"version": 3}, timeout=30)  # fmt: skip
            assert ok.status_code == 200 and ok.json() == {"team": "alpha", "final": "alpha@3"}
    finally:
        lad.close()


def test_with_practice_an_upload_after_the_deadline_is_taken_and_the_final_table_does_not_move(tmp_path: Path):
    """``after_deadline = "practice"``: later uploads are built for practice tables; the final versions stay."""
    lad = frozen_ladder(tmp_path / "lad", after_deadline="practice")
    try:
        before = FinalStore(lad.config.ladder_path).frozen()
        with served(lad.config, lad.state) as url:
            taken = upload(url, lad.tokens["beta"])
            assert taken.status_code in (200, 201, 202), taken.text
            assert [v.entry for v in lad.store.versions(team="beta")] == ["beta@1", "beta@2"]
            home = httpx.get(url + "/").text
            assert "New uploads are built for practice tables only." in home and "uploads are closed" not in home
        late = lad.add_version("beta")  # as the build would: active now, after the deadline
        assert late.status == "active"
        results = open_results(lad.config, lad.store.meta()["ladder_id"])
        try:
            loop = LadderService(lad.config, lad.store, results, LocalTables())  # a restart after the upload
            assert loop.phase == "frozen" and loop.final_entries == ["alpha@1", "beta@1", "gamma@1"]
            assert loop.next_job(4) is None
            assert {s.entry for s in loop.state.standings} == {"alpha@1", "beta@1", "gamma@1"}
            with served(lad.config, lambda: loop.state) as url:  # the site as serve runs it, on the loop's state
                board = httpx.get(url + "/api/leaderboard").json()["standings"]
            # beta@1 is retired now (beta@2 replaced it for practice) and still a final version: listed
            assert sorted((r["entry"], r["team"]) for r in board) == [("alpha@1", "alpha"), ("beta@1", "beta"), ("gamma@1", "gamma")]
            loop.close()
        finally:
            results.close()
        assert FinalStore(lad.config.ladder_path).frozen() == before
    finally:
        lad.close()
