"""Self-registration in Debian's Chromium (Playwright) on a real uvicorn: the join code, a team, its teammate.

A first member makes a team on /join (a wrong join code first: the page
says so), the page shows their token and the team's invite code once; a
teammate, in another browser context, joins with the invite code; the
organiser approves the team on the admin page; both members sign in with
their own tokens and see each other on the team's page.  No page breaks its
Content-Security-Policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from site_support import SyntheticLadder, served

from arena.ladder.teams.roster import set_join_code

CODE = "lecture-one-code"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[SyntheticLadder, str]]:
    lad = SyntheticLadder(tmp_path / "lad")
    set_join_code(lad.directory, CODE)
    toml = lad.directory / "ladder.toml"
    toml.write_text(toml.read_text().replace("approval = false", "approval = true"))
    with served(lad.config, lambda: lad.state()) as url:
        yield lad, url
    lad.close()


def test_a_team_and_its_teammate_sign_up_with_the_join_code_and_both_sign_in(site, browser):  # type: ignore[no-untyped-def]
    lad, url = site
    blocked: list[str] = []

    def person():  # type: ignore[no-untyped-def]
        page = browser.new_context().new_page()
        page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
        return page

    first = person()
    first.goto(url + "/signin")
    first.click("#to-join")
    first.wait_for_url(url + "/join")
    first.fill("#create-code", "not-the-code")
    first.fill("#create-team", "owls")
    first.fill("#create-name", "Ada <i>L</i>")
    first.fill("#create-email", "ada@uni.example")
    first.click("#create-button")
    assert "join code is wrong" in first.text_content("#join-error")
    assert first.input_value("#create-team") == "owls", "the form lost what was typed"
    assert lad.store.team("owls") is None
    first.fill("#create-code", CODE)
    first.click("#create-button")
    first.wait_for_selector("#member-token")
    assert first.text_content("#joined-team") == "owls" and first.text_content("#joined-member") == "Ada <i>L</i>"
    assert first.is_visible("#joined-pending")
    ada_token, invite = first.text_content("#member-token"), first.text_content("#invite-code")

    second = person()
    second.goto(url + "/join")
    second.fill("#team-code", CODE)
    second.fill("#team-team", "owls")
    second.fill("#team-invite", invite)
    second.fill("#team-name", "Grace")
    second.fill("#team-email", "grace@uni.example")
    second.click("#team-button")
    second.wait_for_selector("#member-token")
    grace_token = second.text_content("#member-token")
    assert grace_token != ada_token and second.locator("#invite-code").count() == 0

    organiser = person()
    organiser.goto(url + "/signin")
    organiser.fill("#token", lad.admin)
    organiser.click("#signin-button")
    organiser.wait_for_url(url + "/admin")
    row = organiser.locator('#pending-teams tr[data-team="owls"]')
    assert "Ada <i>L</i> <ada@uni.example>, Grace <grace@uni.example>" in row.text_content()
    row.locator("button.approve").click()
    organiser.wait_for_url(url + "/admin")
    assert organiser.locator("#pending-teams").count() == 0
    assert not lad.store.team("owls").pending  # type: ignore[union-attr]

    for page, token, name in ((first, ada_token, "Ada <i>L</i>"), (second, grace_token, "Grace")):
        page.click("#to-signin")
        page.fill("#token", token)
        page.click("#signin-button")
        page.wait_for_url(url + "/me")
        assert page.text_content("#signed-in-as") == f"Signed in as {name}."
        assert page.locator("#pending").count() == 0
        assert page.locator("#members td.name").all_text_contents() == ["Ada <i>L</i>", "Grace"]
    assert not blocked, blocked
