"""Every member is who they say, in Debian's Chromium (Playwright) on a real uvicorn.

By keyboard (Tab from field to field, Enter to send): a student on /join
tries a team name reserved by the organiser's roster, a look-alike of it, a
classmate's e-mail in capitals; each is refused with a message and the form
keeps what was typed.  By mouse: the organiser gives a team a new invite code
on the admin page, a member makes another on the team's page, and the old
codes are refused in the join form; a revoked member's rejoin is refused.
No page breaks its Content-Security-Policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ladder_support import cli
from site_support import SyntheticLadder, served

from arena.ladder.teams.roster import set_join_code

CODE = "lecture-two-code"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[SyntheticLadder, str]]:
    lad = SyntheticLadder(tmp_path / "lad")
    set_join_code(lad.directory, CODE)
    with served(lad.config, lambda: lad.state()) as url:
        yield lad, url
    lad.close()


def by_keyboard(page, *values: str) -> None:  # type: ignore[no-untyped-def]
    """Type each value into the next field of the make-a-team form (Tab between), then Enter."""
    page.focus("#create-code")
    for n, value in enumerate(values):
        if n:
            page.keyboard.press("Tab")
        page.keyboard.press("Control+A")
        page.keyboard.type(value)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_reserved_names_look_alikes_and_a_classmates_email_are_refused_by_keyboard(site, browser, tmp_path):  # type: ignore[no-untyped-def]
    lad, url = site
    roster = tmp_path / "roster.csv"
    roster.write_text("team,member,email\nFalcons,Ada,ada@uni.example\n", encoding="utf-8")
    reserved = cli("ladder", "team", "import", str(lad.directory), str(roster), "--reserve")
    assert reserved.returncode == 0, reserved.stderr
    blocked: list[str] = []
    page = browser.new_context().new_page()
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(url + "/join")
    for team, said in (("Falcons", "is reserved for the organiser's roster"),
                       ("fa1cons", "looks too much like 'Falcons', which is reserved")):  # fmt: skip
        by_keyboard(page, CODE, team, "Mallory", "mal@evil.example")
        assert said in page.text_content("#join-error"), page.text_content("#join-error")
        assert page.input_value("#create-team") == team, "the form lost what was typed"
    by_keyboard(page, CODE, "owls", "Not Ada", "ADA@uni.example")
    assert "on the organiser's roster" in page.text_content("#join-error")
    assert [t.name for t in lad.store.teams()] == []
    by_keyboard(page, CODE, "owls", "Olu", "olu@uni.example")
    page.wait_for_selector("#member-token")
    assert page.text_content("#joined-team") == "owls"
    assert not blocked, blocked


def join_team(page, url: str, team: str, invite: str, name: str, email: str) -> str:  # type: ignore[no-untyped-def]
    """Fill the join-your-team form by mouse; the error shown, or '' when a token is shown."""
    page.goto(url + "/join")
    for field, value in (("#team-code", CODE), ("#team-team", team), ("#team-invite", invite),
                         ("#team-name", name), ("#team-email", email)):  # fmt: skip
        page.click(field)
        page.fill(field, value)
    with page.expect_navigation():
        page.click("#team-button")
    return page.text_content("#join-error") if page.locator("#join-error").count() else ""


def test_invite_codes_rotate_by_mouse_and_a_revoked_member_cannot_rejoin(site, browser):  # type: ignore[no-untyped-def]
    lad, url = site
    blocked: list[str] = []

    def person():  # type: ignore[no-untyped-def]
        page = browser.new_context().new_page()
        page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
        return page

    zoe = person()
    zoe.goto(url + "/join")
    by_keyboard(zoe, CODE, "owls", "Zoe", "zoe@uni.example")
    first_code, zoe_token = zoe.text_content("#invite-code"), zoe.text_content("#member-token")
    yan = person()
    assert join_team(yan, url, "owls", first_code, "Yan", "yan@uni.example") == ""
    lad.store.revoke_member("owls", "Yan")
    assert "do not match" in join_team(yan, url, "owls", first_code, "Yan B", "yan.b@gmail.example")

    organiser = person()
    organiser.goto(url + "/signin")
    organiser.fill("#token", lad.admin)
    organiser.click("#signin-button")
    organiser.wait_for_url(url + "/admin")
    organiser.locator('#teams tr[data-team="owls"] button.new-invite').click()
    organiser.wait_for_selector("#invite-code")
    by_organiser = organiser.text_content("#invite-code")
    assert by_organiser != first_code

    zoe.goto(url + "/signin")
    zoe.fill("#token", zoe_token)
    zoe.click("#signin-button")
    zoe.wait_for_url(url + "/me")
    zoe.click("#new-invite")
    zoe.wait_for_selector("#invite-code")
    by_team = zoe.text_content("#invite-code")
    assert "do not match" in join_team(yan, url, "owls", by_organiser, "Xu", "xu@uni.example")
    assert join_team(yan, url, "owls", by_team, "Xu", "xu@uni.example") == ""
    assert [(m.name, m.revoked) for m in lad.store.members("owls")] == [("Zoe", False), ("Yan", True), ("Xu", False)]
    assert not blocked, blocked
