"""Every member is who they say: red team 5's attacks on the roster, against a real served ladder.

Each test is one attack, sent as a student would (HTTP to a real uvicorn on
loopback, the real CLI on a real ladder directory), and what the ladder must
do instead of what it did:

- a classmate's e-mail (in any case) taken on /join: refused, so the grade
  export never has two rows for one student; an older store that already holds
  such a pair makes ``export --final`` refuse, naming the e-mail;
- a roster's team names and e-mails reserved (``import --reserve``, and by the
  import itself): the join page cannot take them, nor a look-alike name;
- a squatted team name met by an import: refused in one line, nothing moved;
- a revoked member rejoining with the team's invite code: refused; the
  organiser rotates a team's invite code (CLI, admin page, API);
- one address making team after team: refused after ``[roster] teams_per_hour``;
  ``Alpha`` then ``a1pha``: refused.
"""

from __future__ import annotations

import csv
import html
import io
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from calendar_support import frozen_ladder
from ladder_support import bot_source, cli, tarball
from site_support import SyntheticLadder, served

from arena.ladder.course.export import FINAL_COLUMNS
from arena.ladder.teams.roster import set_join_code

CODE = "course-code-2026"
ANN = "ann-token-" + "a" * 22


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[SyntheticLadder, str]]:
    """A served ladder with a roster team (red: Ann) and self-registration open."""
    lad = SyntheticLadder(tmp_path / "lad")
    lad.store.import_members([("red", "Ann", "ann@uni.example", ANN)])
    set_join_code(lad.directory, CODE)
    with served(lad.config, lambda: lad.state()) as url:
        yield lad, url
    lad.close()


def join(url: str, path: str, **fields: str) -> httpx.Response:
    return httpx.post(url + path, data=fields, headers={"Origin": url}, timeout=60)


def create(url: str, team: str, name: str, email: str) -> httpx.Response:
    return join(url, "/join/create", join_code=CODE, team=team, name=name, email=email)


def shown(page: str, element: str) -> str:
    found = re.search(rf'<code id="{element}">([^<]*)</code>', page)
    assert found, page
    return found[1]


def error_of(page: str) -> str:
    found = re.search(r'<p class="error" id="join-error">([^<]*)</p>', page)
    assert found, page
    return html.unescape(found[1])


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# ------------------------------------------------------------ one e-mail, one member


def test_a_classmates_email_in_any_case_cannot_be_taken_on_the_join_page(site: tuple[SyntheticLadder, str]):
    lad, url = site
    for email in ("ann@uni.example", "ANN@Uni.Example"):
        forged = create(url, f"forged{len(email)}", "Not Ann", email)
        assert forged.status_code == 400, forged.text
        assert "belongs to a member of this ladder already" in error_of(forged.text)
    assert [t.name for t in lad.store.teams()] == ["red"], "a refused sign-up left a team behind"
    made = create(url, "tigers", "Zoe", "zoe@uni.example")
    invite = shown(made.text, "invite-code")
    joined = join(url, "/join/team", join_code=CODE, team="tigers", invite=invite, name="Ann again", email="Ann@UNI.example")
    assert joined.status_code == 400 and "belongs to a member" in error_of(joined.text)
    assert [m.name for m in lad.store.members("tigers")] == ["Zoe"]


def test_the_final_export_has_one_row_per_email_even_after_a_forged_sign_up(tmp_path: Path):
    lad = frozen_ladder(tmp_path / "lad", bands=[[30, "A"], [67, "B"], [100, "C"]], missing="F")
    lad.store.add_member("alpha", "Ada", "ada@uni.example")
    set_join_code(lad.directory, CODE)
    with served(lad.config, lambda: lad.state()) as url:
        forged = create(url, "forgery", "Ada L", "Ada@Uni.example")  # the "F" row the attack put last
        assert forged.status_code == 400, forged.text
    lad.close()
    done = cli("ladder", "export", str(lad.directory), "--final", "--csv", "-")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [r["grade"] for r in rows if r["email"].casefold() == "ada@uni.example"] == ["A"]


def test_an_older_store_with_one_email_twice_makes_the_final_export_refuse_and_say_why(tmp_path: Path):
    lad = frozen_ladder(tmp_path / "lad", bands=[[30, "A"], [67, "B"], [100, "C"]], missing="F")
    lad.store.add_member("alpha", "Ada", "ada@uni.example")
    with sqlite3.connect(lad.config.ladder_path) as db:  # as a ladder before this check could hold it
        db.execute("INSERT INTO members(team, name, email, token_hash, created) VALUES "
                   "('delta', 'Ada L', 'ADA@uni.example', 'x', '2026-01-01T00:00:00+00:00')")  # fmt: skip
    with served(lad.config, lambda: lad.state()) as url:  # the organiser's page shows the pair
        admin = httpx.Client(base_url=url, timeout=60, headers={"Origin": url})
        assert admin.post("/signin", data={"token": lad.admin}).headers["location"] == "/admin"
        shown_pair = re.search(r'<div class="error" id="shared-emails">.*?</div>', admin.get("/admin").text, re.DOTALL)
        assert shown_pair and "ada@uni.example: Ada of alpha, Ada L of delta" in shown_pair[0]
    lad.close()
    out = tmp_path / "final.csv"
    refused = cli("ladder", "export", str(lad.directory), "--final", "--csv", str(out))
    assert refused.returncode != 0 and not out.exists()
    said = " ".join(refused.stderr.split())
    assert "the gradebook's key" in said and "ada@uni.example is Ada of alpha, Ada L of delta" in said, said
    assert "member-remove" in said
    listed = cli("ladder", "team", "members", str(lad.directory))
    assert "one e-mail, 2 members" in " ".join(listed.stdout.split()), listed.stdout
    assert cli("ladder", "team", "member-remove", str(lad.directory), "delta", "Ada L").returncode == 0
    done = cli("ladder", "export", str(lad.directory), "--final", "--csv", str(out))
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert tuple(rows[0]) == FINAL_COLUMNS
    emails = [r["email"].casefold() for r in rows if r["email"]]
    assert emails == ["ada@uni.example"]


# ------------------------------------------------------------ the roster's names and e-mails


def roster_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_reserved_roster_keeps_its_names_and_emails_from_the_join_page(site: tuple[SyntheticLadder, str], tmp_path: Path):
    lad, url = site
    roster = roster_file(tmp_path, "team,member,email\nAlpha,Cy,cy@uni.example\nAlpha,Di,di@uni.example\n")
    reserved = cli("ladder", "team", "import", str(lad.directory), str(roster), "--reserve")
    assert reserved.returncode == 0, reserved.stderr
    assert "reserved 1 team name(s) and 2 e-mail(s)" in " ".join(reserved.stdout.split())
    assert lad.store.team("Alpha") is None and not (lad.directory / "member-tokens.csv").exists()
    for team in ("Alpha", "a1pha", "ALPHA"):
        squat = create(url, team, "Mallory", "mal@evil.example")
        assert squat.status_code == 400 and "reserved for the organiser" in error_of(squat.text), team
    taken = create(url, "owls", "Not Cy", "CY@uni.example")
    assert taken.status_code == 400 and "on the organiser's roster" in error_of(taken.text)
    assert lad.store.team("owls") is None
    done = cli("ladder", "team", "import", str(lad.directory), str(roster))
    assert done.returncode == 0, done.stderr
    assert [(m.name, m.email) for m in lad.store.members("Alpha")] == [("Cy", "cy@uni.example"), ("Di", "di@uni.example")]


def test_an_import_meeting_a_squatted_team_refuses_in_one_line_and_moves_nothing(site: tuple[SyntheticLadder, str], tmp_path: Path):
    lad, url = site
    assert create(url, "tigers", "Mallory", "mal@evil.example").status_code == 200
    assert create(url, "0wls", "Eve", "eve@evil.example").status_code == 200
    roster = roster_file(tmp_path, "team,member,email\ntigers,Cy,cy@uni.example\nowls,Di,di@uni.example\n"
                                   "blue,Ed,ed@uni.example\n")  # fmt: skip
    refused = cli("ladder", "team", "import", str(lad.directory), str(roster))
    assert refused.returncode == 2, refused.stdout
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    said = " ".join(refused.stderr.split())
    assert "2 wrong line(s); nothing was imported" in said, said
    assert "line 2: team 'tigers' was made on the join page" in said and "rename the team in the roster" in said
    assert "line 3: team 'owls' looks too much like the ladder's team '0wls'" in said
    assert len(lines) <= 6, lines  # one line each (the console may wrap a long one)
    assert [m.name for m in lad.store.members("tigers")] == ["Mallory"], "a real member went to the squatter"
    assert lad.store.team("blue") is None and not (lad.directory / "member-tokens.csv").exists()


# ------------------------------------------------------------ revoked members and invite codes


def test_a_revoked_member_cannot_rejoin_with_the_invite_code(site: tuple[SyntheticLadder, str]):
    lad, url = site
    made = create(url, "tigers", "Zoe", "zoe@uni.example")
    invite = shown(made.text, "invite-code")
    assert join(url, "/join/team", join_code=CODE, team="tigers", invite=invite, name="Yan",
                email="yan@uni.example").status_code == 200  # fmt: skip
    lad.store.revoke_member("tigers", "Yan")
    for name, email in (("Yan", "yan2@uni.example"), ("Yan B", "yan@gmail.example")):
        back = join(url, "/join/team", join_code=CODE, team="tigers", invite=invite, name=name, email=email)
        assert back.status_code == 403, back.text
    assert [(m.name, m.revoked) for m in lad.store.members("tigers")] == [("Zoe", False), ("Yan", True)]
    # The team makes a new code for a real teammate; Yan's e-mail stays Yan's (revoked, not gone).
    zoe = httpx.Client(base_url=url, timeout=60, headers={"Origin": url})
    zoe.post("/signin", data={"token": shown(made.text, "member-token")})
    fresh = shown(zoe.post("/me/invite").text, "invite-code")
    again = join(url, "/join/team", join_code=CODE, team="tigers", invite=fresh, name="Yan C", email="YAN@uni.example")
    assert again.status_code == 400 and "belongs to a member" in error_of(again.text)
    assert join(url, "/join/team", join_code=CODE, team="tigers", invite=fresh, name="Xu",
                email="xu@uni.example").status_code == 200  # fmt: skip


def test_the_organiser_rotates_a_teams_invite_code_by_cli_admin_page_and_api(site: tuple[SyntheticLadder, str]):
    lad, url = site
    made = create(url, "tigers", "Zoe", "zoe@uni.example")
    first = shown(made.text, "invite-code")
    rotated = cli("ladder", "team", "invite", str(lad.directory), "tigers", "--json")
    assert rotated.returncode == 0, rotated.stderr
    by_cli = re.search(r'"invite": "([^"]+)"', rotated.stdout)[1]  # type: ignore[index]
    old = join(url, "/join/team", join_code=CODE, team="tigers", invite=first, name="A", email="a@uni.example")
    assert old.status_code == 403
    admin = httpx.Client(base_url=url, timeout=60, headers={"Origin": url})
    assert admin.post("/signin", data={"token": lad.admin}).headers["location"] == "/admin"
    assert 'action="/admin/new-invite"' in admin.get("/admin").text
    page = admin.post("/admin/new-invite", data={"target": "tigers"})
    assert page.status_code == 200 and "no-store" in page.headers["cache-control"]
    by_page = shown(page.text, "invite-code")
    assert join(url, "/join/team", join_code=CODE, team="tigers", invite=by_cli, name="A",
                email="a@uni.example").status_code == 403  # fmt: skip
    assert join(url, "/join/team", join_code=CODE, team="tigers", invite=by_page, name="A",
                email="a@uni.example").status_code == 200  # fmt: skip
    api = httpx.post(url + "/api/admin/teams/tigers/invite", headers=bearer(lad.admin), timeout=60)
    assert api.status_code == 200 and api.json()["invite"] not in (by_cli, by_page, first)
    assert httpx.post(url + "/api/admin/teams/tigers/invite", headers=bearer(ANN), timeout=60).status_code == 403
    assert admin.post("/admin/new-invite", data={"target": "nobody"}).status_code == 404


# ------------------------------------------------------------ many teams from one address, look-alike names


def test_one_address_makes_at_most_teams_per_hour_teams(site: tuple[SyntheticLadder, str]):
    lad, url = site
    assert create(url, "taken-by-red", "X", "red@uni.example").status_code == 200
    assert create(url, "taken-by-red", "Y", "y@uni.example").status_code == 400, "a refused sign-up"
    for n in (1, 2):
        assert create(url, f"team{n}", f"M{n}", f"m{n}@uni.example").status_code == 200
    fourth = create(url, "team9", "M9", "m9@uni.example")
    assert fourth.status_code == 429 and "the most it may" in error_of(fourth.text)
    assert lad.store.team("team9") is None and len(lad.store.teams()) == 4  # red and the three made


def test_a_look_alike_team_name_is_refused(site: tuple[SyntheticLadder, str]):
    lad, url = site
    assert create(url, "Alpha", "Al", "al@uni.example").status_code == 200
    for look_alike in ("a1pha", "ALPHA", "al-pha", "A1.PHA"):
        refused = create(url, look_alike, "Mal", "mal@evil.example")
        assert refused.status_code == 400 and "looks too much like the team 'Alpha'" in error_of(refused.text), look_alike
    assert create(url, "Comer", "C", "c@uni.example").status_code == 200
    corner = create(url, "Corner", "D", "d@uni.example")
    assert corner.status_code == 400 and "looks too much like the team 'Comer'" in error_of(corner.text)
    assert sorted(t.name for t in lad.store.teams()) == ["Alpha", "Comer", "red"]


def test_numbered_teams_stay_distinct_and_look_alikes_share_a_skeleton():
    from arena.ladder.teams.names import name_key

    numbered = {name_key(f"g{n:02d}") for n in range(100)}
    assert len(numbered) == 100
    assert name_key("Alpha") == name_key("a1pha") == name_key("AL_PHA") and name_key("corner") == name_key("comer")
    assert name_key("team1") != name_key("team2")


def test_an_upload_still_works_for_a_roster_member(site: tuple[SyntheticLadder, str]):
    """The reservations and checks leave the roster's own members alone."""
    lad, url = site
    archive = tarball({"bot.py": bot_source("ann")})
    made = httpx.post(url + "/api/submissions", headers=bearer(ANN), timeout=60,
                      files={"bot": ("bot.tar.gz", archive, "application/gzip")}, data={"note": "ann"})  # fmt: skip
    assert made.status_code == 201, made.text


def test_the_sign_up_counter_counts_and_gives_back_per_address_within_its_hour():
    from arena.ladder.site.join import JoinGuard

    now = [0.0]
    guard = JoinGuard(window_s=3600, clock=lambda: now[0])
    assert [guard.take("a", 2) for _ in range(3)] == [0.0, 0.0, 3600.0]
    assert guard.take("b", 2) == 0.0, "another address has its own count"
    guard.give_back("a")  # a sign-up refused after it was counted
    now[0] = 10.0
    assert guard.take("a", 2) == 0.0 and guard.take("a", 2) == 3590.0
    now[0] = 3601.0
    assert guard.take("a", 2) == 0.0
    assert guard.take("c", 0) == 3600.0, "teams_per_hour = 0: no team is made"
