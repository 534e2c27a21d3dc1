"""A team's first day on the ladder, in a real browser (Debian's Chromium driven by Playwright).

It signs in with its token, uploads its bot through the form, sees the build
and validation result on its page, and finds its version on the leaderboard;
the leaderboard and team pages are read through the DOM and checked against
the JSON API.  The pages load nothing but their own stylesheet and run no
script (their Content-Security-Policy says so).
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_support import engine_or_skip
from ladder_support import Ladder, bot_source, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]



@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    engine_or_skip("the ladder browser test")
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", "submissions.validation_hands=1")
    lad.start()
    try:
        yield lad
    finally:
        lad.stop()



def test_sign_in_upload_see_the_build_and_the_leaderboard(ladder: Ladder, browser, tmp_path: Path):  # type: ignore[no-untyped-def]
    archive = tmp_path / "mybot.tar.gz"
    src = tmp_path / "src"
    src.mkdir()
    (src / "bot.py").write_text(bot_source("<b>ALPHA</b>"))  # markup in the name: shown as text
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src / "bot.py", arcname="bot.py")
    opponent = ladder.upload("beta", tarball({"bot.py": bot_source("BETA")}), note="the opponent")
    assert opponent.status_code == 201

    page = browser.new_page()
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(ladder.url + "/signin")
    page.fill("#token", "wrong-token")
    page.click("#signin-button")
    assert "not a team's" in page.text_content("#signin-error")
    page.fill("#token", ladder.tokens["alpha"])
    page.click("#signin-button")
    page.wait_for_url(ladder.url + "/me")
    assert page.text_content("h1") == "Team alpha"
    page.set_input_files("#bot-file", str(archive))
    page.fill("#note", 'first <script>alert("x")</script> try')
    page.click("#submit-button")
    page.wait_for_url(ladder.url + "/me")
    row = page.locator('#my-versions tr[data-entry="alpha@1"]')
    assert row.locator(".note").text_content() == 'first <script>alert("x")</script> try', "the note is text, not markup"

    ladder.wait_for("alpha@1 built and validated", lambda: ladder.versions("alpha")[0]["status"] == "active")
    ladder.wait_for("beta@1 active", lambda: ladder.versions("beta")[0]["status"] == "active")
    page.reload()
    assert row.locator(".status").text_content() == "active"
    page.locator('#my-versions tr.logs details summary').first.click()
    assert "validation:" in page.locator(".validation-log").first.text_content()

    rated = ladder.wait_for(
        "both rated", lambda: (r := ladder.get("/api/leaderboard").json()["standings"]) and all(x["elo"] is not None for x in r) and r
    )  # fmt: skip
    page.goto(ladder.url + "/")
    shown = page.locator("#leaderboard tbody tr")
    api = ladder.get("/api/leaderboard").json()["standings"]
    assert shown.count() == len(api) == len(rated) == 2
    for i, expected in enumerate(api):
        cells = shown.nth(i)
        assert cells.get_attribute("data-entry") == expected["entry"]
        assert cells.locator(".team").text_content() == expected["team"]
        assert cells.locator(".elo").text_content() == f"{expected['elo']:.0f}"
        assert cells.locator(".pairs").text_content() == str(expected["pairs"])
    page.click('#leaderboard a[href="/teams/alpha"]')
    assert page.text_content("#team-name") == "alpha"
    team = ladder.get("/api/teams/alpha").json()
    assert page.locator("#versions tbody tr").count() == len(team["versions"]) == 1
    assert page.locator('#versions tr[data-entry="alpha@1"] .status').text_content() == "active"
    assert not blocked, blocked

    # A game's replay names its seats team@version (not the bot's class) and links back.
    game = ladder.get("/api/games").json()["games"][0]
    page.goto(ladder.url + f"/games/{game['game_id']}")
    page.wait_for_selector(".seat .bot-name")
    assert set(page.locator(".seat .bot-name").all_text_contents()) == {game["side0"], game["side1"]} == {"alpha@1", "beta@1"}
    page.click("#back-to-leaderboard")
    page.wait_for_url(ladder.url + "/")
    assert not blocked, blocked

    # Another team's private page and logs: not there for alpha.
    game = ladder.get("/api/games").json()["games"][0]["game_id"]
    other = page.goto(ladder.url + f"/me/games/{game}/logs")
    assert other is not None and other.status == 200 and "BETA" not in page.content()
    page.goto(ladder.url + "/me")
    page.click("#signout")
    page.goto(ladder.url + "/me")
    assert page.url.endswith("/signin")
