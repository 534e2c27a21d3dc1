"""What a person sees of the site, in Debian's Chromium driven by Playwright (no Docker: a filled ladder).

A signed-in team finds its validation record's download link with its
reproduce line on its pages, opens a game's replay and sees its own bots'
notes (and not the other team's), the seats named team@version and the links
back; the leaderboard carries its timed reload.  No page runs inline script
or breaks its Content-Security-Policy.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from site_support import SyntheticLadder, served



@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SyntheticLadder, str]]:
    lad = SyntheticLadder(tmp_path_factory.mktemp("site") / "lad")
    for team in ("alpha", "beta"):
        lad.add_team(team)
        lad.add_version(team, note=f"{team}'s first")
    alpha = lad.store.version_by_entry("alpha@1")
    assert alpha is not None
    lad.add_validation_record(alpha, "validate-alpha@1.json", '{"game_id": "validate-alpha@1", "hands": []}')
    lad.add_pair("alpha@1", "beta@1", rng=random.Random(5), records=True)
    state = lad.state()
    with served(lad.config, lambda: state) as url:
        yield lad, url
    lad.close()



def test_a_team_sees_its_validation_record_its_notes_and_the_way_back(site, browser, tmp_path: Path):  # type: ignore[no-untyped-def]
    lad, url = site
    page = browser.new_page(accept_downloads=True)
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)

    page.goto(url + "/")
    assert page.locator('meta[http-equiv="refresh"]').get_attribute("content") == "30"

    page.goto(url + "/signin")
    page.fill("#token", lad.tokens["alpha"])
    page.click("#signin-button")
    page.wait_for_url(url + "/me")
    link = page.locator('#my-versions a.validation-record').first
    assert link.text_content() == "validate-alpha@1.json"
    assert "--replay validate-alpha@1.json --seat N" in page.locator("#my-versions .reproduce").first.text_content()
    with page.expect_download() as download:
        link.click()
    saved = tmp_path / "record.json"
    download.value.save_as(saved)
    assert saved.read_text() == '{"game_id": "validate-alpha@1", "hands": []}'

    page.goto(url + "/teams/alpha")
    assert page.locator("#private-versions a.validation-record").count() == 1

    page.goto(url + "/games/L0000001-t1")
    page.wait_for_selector(".seat .bot-name")
    names = page.locator(".seat .bot-name").all_text_contents()
    assert names == ["alpha@1", "beta@1", "alpha@1", "beta@1"]
    assert page.locator("#replay-title").text_content().startswith("alpha@1 (N-S) vs beta@1 (E-W)")
    # Step through the game: alpha's notes appear in the action lines, beta's never.
    seen: set[str] = set()
    for _ in range(60):
        seen.update(t for t in page.locator(".note").all_text_contents() if "note of" in t)
        page.keyboard.press("ArrowRight")
    assert any("note of alpha@1" in t for t in seen), seen
    assert not any("beta@1" in t for t in seen), seen
    page.click("#back-to-leaderboard")
    page.wait_for_url(url + "/")
    assert page.locator("#leaderboard tbody tr").count() == 2
    page.goto(url + "/games/L0000001-t1")
    page.click('#back a.team-link[href="/teams/beta"]')
    assert page.text_content("#team-name") == "beta"
    assert not blocked, blocked
