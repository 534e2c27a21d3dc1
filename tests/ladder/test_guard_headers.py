"""Every route of the real site answers with its security headers, the replay page and the guards' refusals included.

The routes are read from the app itself (a route added later is checked too).
Before this (the main branch) the replay page sent its policy only in a
``<meta>``, which cannot say ``frame-ancestors``: another site could frame it;
and no page sent ``X-Frame-Options``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from typing import Any
from pathlib import Path

import httpx
import pytest
from docker_support import engine_or_skip
from guard_support import NO_BUILDS, signed_in
from ladder_support import Ladder, served
from site_support import record_json
from standings_support import game
from starlette.routing import Route

from arena.ladder.config import load_ladder_config
from arena.results.store import ResultsStore
from arena.ladder.games.state import LadderState
from arena.ladder.site.app import create_app

pytestmark = [pytest.mark.docker, pytest.mark.timeout(600)]

GAME = "L0000001-t1"
#: A value for each path parameter of the site's routes.
PARAMS = {"team": "alpha", "game_id": GAME, "entry": "alpha@1", "action": "pause", "number": "1", "name": "validate-alpha@1.json",
          "table_id": "1", "key": "no-such-table",  # practice tables (arena.ladder.site.practice)
          "member": "nobody"}


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder's header tests")
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", NO_BUILDS)
    (lad.directory / "records").mkdir(exist_ok=True)
    (lad.directory / "records" / f"{GAME}.json").write_text(json.dumps(record_json(GAME, 1, ("alpha@1", "beta@1"), notes=False)))
    # Its row too: the site shows a stored game (its seats named team@version from the row).
    config = load_ladder_config(lad.directory)
    results = ResultsStore(config.results_path)
    results.record_game(dataclasses.replace(game(1, 1, "alpha@1", "beta@1", 300, 120), record=f"records/{GAME}.json"))
    results.close()
    with served(lad, client):
        yield lad


def _flat(routes: list[Any]) -> Iterator[Any]:
    """Every route, those of included routers too (FastAPI keeps an included router as one entry)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _flat(inner.routes)
        else:
            yield route


def _routes(ladder: Ladder) -> list[tuple[str, str]]:
    """(method, path) of every route of the site, its path parameters filled in."""
    app = create_app(load_ladder_config(ladder.directory), lambda: LadderState())
    found = []
    for route in _flat(app.routes):
        if not isinstance(route, Route):
            continue
        path = re.sub(r"\{(\w+)(:\w+)?\}", lambda m: PARAMS[m[1]], route.path)
        found += [(method, path) for method in sorted(route.methods or ()) if method != "HEAD"]
    app.state.site.close()
    return found


def _check(response: httpx.Response, what: str) -> None:
    h = response.headers
    policy = h.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in policy, (what, policy)
    assert "default-src 'none'" in policy, (what, policy)
    assert h.get("x-frame-options") == "DENY", what
    assert h.get("x-content-type-options") == "nosniff", what
    assert h.get("referrer-policy") == "same-origin", what
    assert len(h.get_list("content-security-policy")) == 1, (what, "two policies")


def test_every_route_sends_the_security_headers(ladder: Ladder):
    routes = _routes(ladder)
    assert ("GET", f"/games/{GAME}") in routes and ("POST", "/signin") in routes and len(routes) > 15
    admin = signed_in(ladder, ladder.admin)
    for method, path in routes:
        for who, client, headers in (("anonymous", httpx.Client(base_url=ladder.url, timeout=30), {}),
                                     ("organiser", admin, {"Origin": ladder.url})):  # fmt: skip
            if method == "POST" and path.startswith("/admin/"):
                continue  # the organiser's forms change the ladder: checked anonymously (refused) only
            response = client.request(method, path, headers=headers)
            assert response.status_code < 500, (method, path, who, response.status_code)
            _check(response, f"{method} {path} as {who} ({response.status_code})")


def test_the_guards_own_refusals_and_404s_send_them_too(ladder: Ladder):
    admin = signed_in(ladder, ladder.admin)
    _check(admin.post("/admin/pause"), "a refused forged post")  # 403 from the Origin check
    _check(httpx.post(ladder.url + "/signin", content=b"t" * 200_000, timeout=30,
                      headers={"Origin": ladder.url}), "a 413")  # fmt: skip
    _check(httpx.get(ladder.url + "/no/such/page", timeout=30), "a 404")


def test_the_replay_page_policy_is_a_header_that_admits_its_viewer(ladder: Ladder):
    response = httpx.get(ladder.url + f"/games/{GAME}", timeout=30)
    assert response.status_code == 200
    policy = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy, policy
    script = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    assert "'unsafe-inline'" not in script and ("'self'" in script or "'sha256-" in script), policy



def test_in_chromium_the_replay_runs_and_cannot_be_framed(ladder: Ladder, browser, tmp_path: Path):  # type: ignore[no-untyped-def]
    page = browser.new_page()
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(ladder.url + f"/games/{GAME}")
    page.wait_for_selector(".seat .bot-name", timeout=30_000)  # the viewer's script ran under the header's policy
    assert not blocked, blocked

    framing = tmp_path / "framing.html"
    framing.write_text(f'<!doctype html><iframe id="f" src="{ladder.url}/games/{GAME}"></iframe>')
    page.goto(framing.as_uri(), wait_until="load")  # the load event waits for the frame's own
    child = page.frames[1] if len(page.frames) > 1 else None
    shown = child.evaluate("document.querySelectorAll('.card').length") if child is not None else 0
    assert shown == 0, "the replay page was shown inside another page's frame"
