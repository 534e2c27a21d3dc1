"""Cross-site and same-site request forgery against a real ladder server (issue 36).

``SameSite=Strict`` keeps the session cookie off other *sites*' requests, but a
page on another port of the same host, or on a sibling subdomain, is the same
site: its forms carry the cookie.  Every state-changing request with a cookie,
and every sign-in, must come from the ladder's own origin.  On the main branch
before this, each refused request below went through (the ladder was paused, a
version uploaded, a visitor signed into the attacker's team).
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
from docker_support import engine_or_skip
from guard_support import NO_BUILDS, paused, signed_in
from ladder_support import Ladder, bot_source, served, tarball
from tournament_support import free_port

pytestmark = [pytest.mark.docker, pytest.mark.timeout(600)]



@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder's CSRF tests")
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", NO_BUILDS)
    with served(lad, client):
        yield lad


def test_a_page_on_another_port_cannot_pause_the_ladder_with_the_organisers_cookie(ladder: Ladder):
    admin = signed_in(ladder, ladder.admin)
    other = f"http://127.0.0.1:{free_port()}"
    forged = [
        {"Origin": other},
        {"Referer": other + "/innocent.html"},  # a browser that sends no Origin: its Referer is checked
        {},  # neither: refused
        {"Origin": "null"},  # a sandboxed frame, or a privacy setting
        {"Origin": ladder.url.replace("http://", "https://")},  # the same host and port, another scheme
        {"Host": "ladder.example.org", "Origin": "http://evil.example.org"},  # a sibling subdomain
    ]
    for headers in forged:
        response = admin.post("/admin/pause", headers=headers)
        assert response.status_code == 403, (headers, response.status_code)
        assert "Origin" in response.json()["detail"]
        assert not paused(ladder), f"{headers}: the forged request paused the ladder"
    done = admin.post("/admin/pause", headers={"Origin": ladder.url})
    assert done.status_code == 303 and paused(ladder)
    done = admin.post("/admin/resume", headers={"Referer": ladder.url + "/admin"})
    assert done.status_code == 303 and not paused(ladder)


def test_a_page_on_another_port_cannot_upload_as_a_team(ladder: Ladder):
    alpha = signed_in(ladder, ladder.tokens["alpha"])
    archive = tarball({"bot.py": bot_source("forged")})
    forged = alpha.post("/me/submit", headers={"Origin": f"http://127.0.0.1:{free_port()}"},
                        files={"bot": ("bot.tar.gz", archive, "application/gzip")}, data={"note": "not mine"})  # fmt: skip
    assert forged.status_code == 403
    assert ladder.versions("alpha") == [], "the forged upload made a version"
    assert not any((ladder.directory / "tmp").glob("*")), "the forged upload left files"


def test_another_site_cannot_sign_a_visitor_into_its_team(ladder: Ladder):
    """Login CSRF: the attacker's team token posted from the attacker's page; the visitor's next upload would be theirs."""
    client = signed_in(ladder, ladder.tokens["alpha"])  # the visitor, signed in as itself
    for headers in ({"Origin": f"http://127.0.0.1:{free_port()}"}, {}):
        response = client.post("/signin", data={"token": ladder.tokens["beta"]}, headers=headers)
        assert response.status_code == 403
        assert "set-cookie" not in response.headers, "a forged sign-in set a session"
    me = client.get("/me")
    assert me.status_code == 200 and "Team alpha" in me.text, "the visitor is still signed in as itself"


def test_bearer_calls_and_anonymous_requests_need_no_origin(ladder: Ladder):
    """A Bearer call is not CSRF-able (no browser adds one across origins); with no cookie nothing is borrowed."""
    assert ladder.post("/api/admin/pause", "admin").status_code == 200 and paused(ladder)
    assert ladder.post("/api/admin/resume", "admin").status_code == 200 and not paused(ladder)
    anonymous = ladder.post("/api/submissions", None, files={"bot": ("b.tgz", b"x", "application/gzip")})
    assert anonymous.status_code == 401, "no cookie, no token: the app's own answer"


class _AttackerPage(http.server.BaseHTTPRequestHandler):
    """A page on another port of 127.0.0.1 with a form that posts to the ladder (the same site)."""

    target = ""

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        body = (f'<!doctype html><title>win a prize</title><form method="post" action="{self.target}/admin/pause">'
                '<button id="prize" type="submit">claim</button></form>').encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass



def test_in_chromium_the_sites_own_forms_work_and_a_same_site_page_is_refused(ladder: Ladder, browser):  # type: ignore[no-untyped-def]
    handler = type("Attacker", (_AttackerPage,), {"target": ladder.url})
    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        page = browser.new_page()
        page.goto(ladder.url + "/signin")
        page.fill("#token", ladder.admin)
        page.click("#signin-button")
        page.wait_for_url(ladder.url + "/admin")
        page.click("#toggle-pause")  # the site's own form: works
        page.wait_for_url(ladder.url + "/admin")
        assert page.text_content("#state") == "The ladder is paused." and paused(ladder)
        page.click("#toggle-pause")
        page.wait_for_url(ladder.url + "/admin")
        assert page.text_content("#state") == "The ladder is running." and not paused(ladder)

        page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")  # same site (127.0.0.1), another origin
        with page.expect_response(ladder.url + "/admin/pause") as answer:
            page.click("#prize")
        assert answer.value.status == 403
        assert not paused(ladder), "a page on another port paused the ladder with the organiser's cookie"
    finally:
        attacker.shutdown()
        attacker.server_close()
