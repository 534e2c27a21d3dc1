"""Members on the site, over a real uvicorn and a real ladder directory (no Docker: uploads stay queued).

A member's token signs in (bearer and the sign-in form) and is revoked alone;
an upload names its member on the team's private page and in ``/api/me``;
``/join`` makes teams and members with the join code (read from ladder.toml
at each sign-up), refuses a wrong code with a message and bounds the guesses;
with approval on, a new team cannot upload until the organiser approves it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from ladder_support import bot_source, tarball
from site_support import SyntheticLadder, served

from arena.ladder.teams.roster import set_join_code
from arena.ladder.site.join import MAX_FAILURES, JoinGuard

CODE = "course-code-2026"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[SyntheticLadder, str]]:
    lad = SyntheticLadder(tmp_path / "lad")
    lad.add_team("legacy")  # a team with its shared token only, as every ladder before members
    lad.store.import_members([("red", "Ann", "ann@uni.example", "ann-token-" + "a" * 22),
                              ("red", "Bob", "bob@uni.example", "bob-token-" + "b" * 22)])  # fmt: skip
    set_join_code(lad.directory, CODE)
    with served(lad.config, lambda: lad.state()) as url:
        yield lad, url
    lad.close()


ANN, BOB = "ann-token-" + "a" * 22, "bob-token-" + "b" * 22


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def upload(url: str, token: str, note: str) -> httpx.Response:
    archive = tarball({"bot.py": bot_source(note)})
    return httpx.post(url + "/api/submissions", headers=bearer(token), timeout=60,
                      files={"bot": ("bot.tar.gz", archive, "application/gzip")}, data={"note": note})  # fmt: skip


def sign_in(url: str, token: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=30, headers={"Origin": url})
    answer = client.post("/signin", data={"token": token})
    assert answer.status_code == 303 and answer.headers["location"] == "/me", answer.text
    return client


def test_a_members_token_signs_in_and_is_revoked_alone(site: tuple[SyntheticLadder, str]):
    lad, url = site
    me = httpx.get(url + "/api/me", headers=bearer(ANN), timeout=30).json()
    assert me["team"] == "red" and me["member"] == "Ann"
    assert [(m["name"], m["revoked"]) for m in me["members"]] == [("Ann", False), ("Bob", False)]
    ann, bob = sign_in(url, ANN), sign_in(url, BOB)
    assert "Signed in as Ann." in ann.get("/me").text and "Signed in as Bob." in bob.get("/me").text
    legacy = httpx.get(url + "/api/me", headers=bearer(lad.tokens["legacy"]), timeout=30).json()
    assert legacy["team"] == "legacy" and legacy["member"] is None, "the team's shared token no longer works"

    admin = sign_in_admin(url, lad.admin)
    assert admin.post("/admin/revoke-member", data={"target": "red", "member": "Bob"}).status_code == 303
    assert httpx.get(url + "/api/me", headers=bearer(BOB), timeout=30).status_code == 401
    assert bob.get("/me", follow_redirects=False).status_code == 303, "Bob's session outlived his token"
    assert sign_in_fails(url, BOB)
    assert httpx.get(url + "/api/me", headers=bearer(ANN), timeout=30).json()["member"] == "Ann"
    assert "Signed in as Ann." in ann.get("/me").text, "revoking Bob ended Ann's session"
    page = admin.get("/admin").text
    assert re.search(r'data-member="Bob">.*?<td class="state">revoked</td>', page, re.DOTALL)
    # The same in the JSON API, with the admin token.
    listed = httpx.get(url + "/api/admin/members", headers=bearer(lad.admin), timeout=30).json()["teams"]
    red = next(t for t in listed if t["team"] == "red")
    assert [(m["name"], m["revoked"]) for m in red["members"]] == [("Ann", False), ("Bob", True)]
    assert httpx.get(url + "/api/admin/members", headers=bearer(ANN), timeout=30).status_code == 403
    revoked = httpx.post(url + "/api/admin/teams/red/members/Ann/revoke", headers=bearer(lad.admin), timeout=30)
    assert revoked.status_code == 200 and httpx.get(url + "/api/me", headers=bearer(ANN), timeout=30).status_code == 401
    unknown = httpx.post(url + "/api/admin/teams/red/members/Nobody/revoke", headers=bearer(lad.admin), timeout=30)
    assert unknown.status_code == 404


def sign_in_admin(url: str, token: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=30, headers={"Origin": url})
    assert client.post("/signin", data={"token": token}).headers["location"] == "/admin"
    return client


def sign_in_fails(url: str, token: str) -> bool:
    answer = httpx.post(url + "/signin", data={"token": token}, headers={"Origin": url}, timeout=30)
    return answer.status_code == 200 and "signin-error" in answer.text


def test_an_upload_names_the_member_who_made_it(site: tuple[SyntheticLadder, str]):
    lad, url = site
    assert upload(url, ANN, "ann's bot").status_code == 201
    made = upload(url, BOB, "bob's bot")
    assert made.status_code == 201 and made.json()["member"] == "Bob"
    assert upload(url, lad.tokens["legacy"], "shared").json()["member"] == ""
    versions = httpx.get(url + "/api/me", headers=bearer(ANN), timeout=30).json()["versions"]
    assert [(v["note"], v["member"]) for v in versions] == [("ann's bot", "Ann"), ("bob's bot", "Bob")]
    page = sign_in(url, BOB).get("/me").text
    members = re.findall(r'<td class="member">(.*?)</td>', page)
    assert members == ["Ann", "Bob"], members
    assert lad.store.versions(team="red")[0].member == "Ann"
    public = httpx.get(url + "/api/teams/red", timeout=30).json()
    assert "member" not in str(public), "who uploaded is the team's own business"


def join(url: str, path: str, **fields: str) -> httpx.Response:
    return httpx.post(url + path, data=fields, headers={"Origin": url}, timeout=30)


def shown(page: str, element: str) -> str:
    found = re.search(rf'<code id="{element}">([^<]*)</code>', page)
    assert found, page
    return found[1]


def test_join_makes_a_team_and_its_teammate_joins_with_the_invite_code(site: tuple[SyntheticLadder, str]):
    lad, url = site
    made = join(url, "/join/create", join_code=CODE, team="tigers", name="Zoë <b>", email="zoe@uni.example")
    assert made.status_code == 200, made.text
    assert "no-store" in made.headers["cache-control"]
    assert "Zoë &lt;b&gt;" in made.text and "Zoë <b>" not in made.text
    token, invite = shown(made.text, "member-token"), shown(made.text, "invite-code")
    wrong = join(url, "/join/team", join_code=CODE, team="tigers", invite="not-it", name="Yan", email="yan@uni.example")
    assert wrong.status_code == 403 and "do not match" in wrong.text
    joined = join(url, "/join/team", join_code=CODE, team="tigers", invite=invite, name="Yan", email="yan@uni.example")
    assert joined.status_code == 200, joined.text
    assert 'id="invite-code"' not in joined.text
    yan = shown(joined.text, "member-token")
    assert httpx.get(url + "/api/me", headers=bearer(token), timeout=30).json()["member"] == "Zoë <b>"
    assert httpx.get(url + "/api/me", headers=bearer(yan), timeout=30).json()["member"] == "Yan"
    assert upload(url, yan, "yan's").status_code == 201, "approval is off: a new team uploads at once"
    again = join(url, "/join/create", join_code=CODE, team="tigers", name="X", email="x@uni.example")
    assert again.status_code == 400 and "the team name &#39;tigers&#39; is taken" in again.text
    bad = join(url, "/join/create", join_code=CODE, team="two words", name="X", email="x@uni.example")
    assert bad.status_code == 400 and "team name" in bad.text
    assert lad.store.team("two words") is None
    formula = join(url, "/join/create", join_code=CODE, team="sheet", name="=HYPERLINK(1)", email="x@uni.example")
    assert formula.status_code == 400 and "spreadsheet formula" in formula.text and lad.store.team("sheet") is None
    # The team is full at [roster] team_size (4): Zoë and Yan, two more, then refused.
    for n in (1, 2):
        assert join(url, "/join/team", join_code=CODE, team="tigers", invite=invite, name=f"M{n}",
                    email=f"m{n}@uni.example").status_code == 200  # fmt: skip
    full = join(url, "/join/team", join_code=CODE, team="tigers", invite=invite, name="M3", email="m3@uni.example")
    assert full.status_code == 400 and "at most 4" in full.text
    # A new invite code from the team's page: the old one stops working.
    client = sign_in(url, token)
    fresh = client.post("/me/invite")
    assert fresh.status_code == 200 and "no-store" in fresh.headers["cache-control"]
    assert shown(fresh.text, "invite-code") != invite
    lad.store.revoke_member("tigers", "M1")
    old = join(url, "/join/team", join_code=CODE, team="tigers", invite=invite, name="M3", email="m3@uni.example")
    assert old.status_code == 403


def test_a_wrong_join_code_is_refused_and_guesses_are_bounded(site: tuple[SyntheticLadder, str]):
    lad, url = site
    empty = httpx.post(url + "/join/create", data={}, headers={"Origin": url}, timeout=30)
    assert empty.status_code == 403 and "join code is wrong" in empty.text, "an empty form is a page, never a 422"
    for n in range(MAX_FAILURES - 1):
        wrong = join(url, "/join/create", join_code=f"guess-{n:04d}", team=f"t{n}", name="X", email="x@uni.example")
        assert wrong.status_code == 403 and "join code is wrong" in wrong.text
    blocked = join(url, "/join/create", join_code=CODE, team="late", name="X", email="x@uni.example")
    assert blocked.status_code == 429 and "Too many wrong codes" in blocked.text
    assert [t.name for t in lad.store.teams()] == ["legacy", "red"], "a refused sign-up made a team"


def test_a_new_join_code_works_at_once_and_the_old_one_stops(site: tuple[SyntheticLadder, str]):
    lad, url = site
    set_join_code(lad.directory, "the-second-code")
    assert join(url, "/join/create", join_code=CODE, team="a1", name="X", email="x@uni.example").status_code == 403
    assert join(url, "/join/create", join_code="the-second-code", team="a1", name="X", email="x@uni.example").status_code == 200
    set_join_code(lad.directory, "")
    closed = join(url, "/join/create", join_code="the-second-code", team="a2", name="Y", email="y@uni.example")
    assert closed.status_code == 403 and "Self-registration is closed" in closed.text
    assert 'id="join-closed"' in httpx.get(url + "/join", timeout=30).text


def test_with_approval_on_a_new_team_uploads_only_once_approved(site: tuple[SyntheticLadder, str]):
    lad, url = site
    toml = lad.directory / "ladder.toml"
    toml.write_text(toml.read_text().replace("approval = false", "approval = true"))
    made = join(url, "/join/create", join_code=CODE, team="waiting", name="Wu", email="wu@uni.example")
    assert made.status_code == 200 and 'id="joined-pending"' in made.text
    token = shown(made.text, "member-token")
    client = sign_in(url, token)
    assert 'id="pending"' in client.get("/me").text
    refused = upload(url, token, "too early")
    assert refused.status_code == 403 and "approval" in refused.json()["detail"]
    assert lad.store.versions(team="waiting") == []
    admin = sign_in_admin(url, lad.admin)
    assert 'id="pending-teams"' in admin.get("/admin").text
    assert admin.post("/admin/approve-team", data={"target": "waiting"}).status_code == 303
    assert upload(url, token, "approved").status_code == 201
    assert 'id="pending"' not in client.get("/me").text
    # A refused team is gone, its members with it.
    other = join(url, "/join/create", join_code=CODE, team="spam", name="S", email="s@uni.example")
    spam = shown(other.text, "member-token")
    assert admin.post("/admin/refuse-team", data={"target": "spam"}).status_code == 303
    assert lad.store.team("spam") is None and httpx.get(url + "/api/me", headers=bearer(spam), timeout=30).status_code == 401


def test_a_sign_up_from_another_origin_is_refused(site: tuple[SyntheticLadder, str]):
    lad, url = site
    forged = httpx.post(url + "/join/create", data={"join_code": CODE, "team": "forged", "name": "F", "email": "f@x.example"},
                        headers={"Origin": "http://127.0.0.1:1"}, timeout=30)  # fmt: skip
    assert forged.status_code == 403 and lad.store.team("forged") is None


def test_the_join_guard_forgets_after_its_window():
    now = [0.0]
    guard = JoinGuard(max_failures=2, window_s=60, clock=lambda: now[0])
    guard.failed("a")
    guard.failed("a")
    assert guard.wait_s("a") == 60 and guard.wait_s("b") == 0
    now[0] = 61
    assert guard.wait_s("a") == 0
