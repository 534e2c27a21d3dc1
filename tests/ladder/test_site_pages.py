"""The site's pages and API over a real uvicorn, on a ladder filled through its stores (no Docker).

What a team sees of its own (its bots' notes in a replay, its validation
records), what it does not see of another's, the replay naming its seats
team@version with links back, the leaderboard's timed reload, the limits in
MiB, and the static files served by the framework.
"""

from __future__ import annotations

import html
import json
import random
import re
from collections.abc import Iterator

import httpx
import pytest
from site_support import SyntheticLadder, served

from arena.ladder.site.queries import PLOT_POINTS, Reads


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyntheticLadder]:
    lad = SyntheticLadder(tmp_path_factory.mktemp("site") / "lad")
    for team in ("alpha", "beta", "alphaB", "alpha.x"):
        lad.add_team(team)
    lad.versions = {t: lad.add_version(t, note=f"{t} first") for t in ("alpha", "beta", "alphaB", "alpha.x")}  # type: ignore[attr-defined]
    rng = random.Random(3)
    lad.add_pair("alpha@1", "beta@1", rng=rng, records=True)
    for _ in range(3):
        lad.add_pair("alphaB@1", "alpha.x@1", rng=rng)
    lad.add_validation_record(lad.versions["alpha"], "validate-alpha@1.json", '{"game_id": "validate-alpha@1"}')  # type: ignore[attr-defined]
    lad.add_validation_record(lad.versions["beta"], "validate-beta@1.json", '{"game_id": "validate-beta@1"}')  # type: ignore[attr-defined]
    yield lad
    lad.close()


@pytest.fixture(scope="module")
def url(ladder: SyntheticLadder) -> Iterator[str]:
    state = ladder.state()
    with served(ladder.config, lambda: state) as base:
        yield base


def get(url: str, path: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(url + path, headers=headers, timeout=30)


def steps_of(page: str) -> dict:
    found = re.search(r'<script type="application/json" class="game-data"[^>]*>(.*?)</script>', page, re.DOTALL)
    assert found, page[:2000]
    return json.loads(found[1])


def notes_in(steps: dict) -> set[str]:
    return {s["a"]["note"] for s in steps["steps"] if isinstance(s.get("a"), dict) and "note" in s["a"]}


def test_a_replay_shows_only_the_asking_teams_notes(ladder: SyntheticLadder, url: str):
    anyone = steps_of(get(url, "/games/L0000001-t1").text)
    alpha = steps_of(get(url, "/games/L0000001-t1", ladder.tokens["alpha"]).text)
    beta = steps_of(get(url, "/games/L0000001-t1", ladder.tokens["beta"]).text)
    organiser = steps_of(get(url, "/games/L0000001-t1", ladder.admin).text)
    assert notes_in(anyone) == set()
    assert notes_in(alpha) and all(n.startswith("note of alpha@1") for n in notes_in(alpha))
    assert notes_in(beta) and all(n.startswith("note of beta@1") for n in notes_in(beta))
    assert notes_in(organiser) == notes_in(alpha) | notes_in(beta)
    # The same rule in the API.
    record = get(url, "/api/games/L0000001-t1", ladder.tokens["alpha"]).json()
    noted = {a["note"] for h in record["hands"] for a in h["actions"] if "note" in a}
    assert noted == notes_in(alpha)


def test_a_signed_in_teams_replay_shows_its_notes_by_cookie(ladder: SyntheticLadder, url: str):
    with httpx.Client(base_url=url, timeout=30) as client:
        signed = client.post("/signin", data={"token": ladder.tokens["beta"]}, headers={"Origin": url})
        assert signed.status_code == 303
        page = client.get("/games/L0000001-t2").text
    assert notes_in(steps_of(page)) and all(n.startswith("note of beta@1") for n in notes_in(steps_of(page)))
    assert "Your bots' notes are shown for beta@1" in page


def test_the_replay_names_seats_team_at_version_and_links_back(url: str):
    response = get(url, "/games/L0000001-t2")
    page = response.text
    steps = steps_of(page)
    # Table 2 swaps the partnerships: beta sits N-S, alpha E-W.
    assert [n["name"] for n in steps["names"]] == ["beta@1", "alpha@1", "beta@1", "alpha@1"]
    assert "RandomBot" not in page, "the bot's class is not how the ladder names a seat"
    assert 'href="/" id="back-to-leaderboard"' in page
    assert 'href="/teams/alpha"' in page and 'href="/teams/beta"' in page
    assert '<script src="/static/replay.js"></script>' in page
    assert not re.search(r"<script>", page), "no inline script"
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy


def test_static_files_are_served_by_the_framework(url: str):
    css = get(url, "/static/ladder.css")
    js = get(url, "/static/replay.js")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert get(url, "/static/../ladder.sqlite").status_code == 404
    assert get(url, "/static/%2e%2e/%2e%2e/store.py").status_code == 404


def test_the_leaderboard_reloads_itself(url: str):
    page = get(url, "/").text
    assert re.search(r'<meta http-equiv="refresh" content="30"', page)


def test_a_team_downloads_its_own_validation_records_and_no_one_elses(ladder: SyntheticLadder, url: str):
    path = "/teams/alpha/versions/1/validation/validate-alpha@1.json"
    own = get(url, path, ladder.tokens["alpha"])
    assert own.status_code == 200 and own.json() == {"game_id": "validate-alpha@1"}
    assert "attachment" in own.headers["content-disposition"]
    assert get(url, path, ladder.admin).status_code == 200
    for token in (ladder.tokens["beta"], None):
        assert get(url, path, token).status_code == 404
    for bad in ("/teams/alpha/versions/1/validation/..%2F..%2Fladder.sqlite",
                "/teams/alpha/versions/1/validation/.hidden.json",
                "/teams/alpha/versions/2/validation/validate-alpha@1.json",
                "/teams/alpha/versions/1/validation/validate-beta@1.json"):  # fmt: skip
        assert get(url, bad, ladder.tokens["alpha"]).status_code == 404, bad


def test_the_teams_pages_link_the_validation_record_with_its_reproduce_line(ladder: SyntheticLadder, url: str):
    link = 'href="/teams/alpha/versions/1/validation/validate-alpha@1.json"'
    with httpx.Client(base_url=url, timeout=30) as client:
        client.post("/signin", data={"token": ladder.tokens["alpha"]}, headers={"Origin": url})
        me = client.get("/me").text
        team = client.get("/teams/alpha").text
    for page in (me, team):
        assert link in page
        assert "--replay validate-alpha@1.json --seat N" in html.unescape(page)
        assert "validate-beta" not in page
    assert link not in get(url, "/teams/alpha").text, "the public page does not list them"
    assert get(url, "/api/me", ladder.tokens["alpha"]).json()["versions"][0]["validation_records"] == ["validate-alpha@1.json"]


def test_limits_are_shown_in_mib(ladder: SyntheticLadder, url: str):
    page = get(url, "/me", ladder.tokens["alpha"]).text
    assert "at most 32 MiB and 2000 files" in page
    assert "33554432" not in page


def test_unknown_or_malformed_game_ids_are_404(url: str):
    for game in ("L0000099-t1", "nope", "L0000001-t3", "..%2Fladder"):
        assert get(url, f"/api/games/{game}").status_code == 404, game
        assert get(url, f"/games/{game}").status_code == 404, game


def test_a_teams_games_are_its_own_and_not_a_prefix_namesakes(ladder: SyntheticLadder, url: str):
    shown = get(url, "/teams/alpha").text
    assert "L0000001-t1" in shown and "alphaB@1" not in shown and "alpha.x@1" not in shown
    games = Reads(ladder.config.results_path, ladder.config.ladder_path).recent_games(50, "alphaB")
    assert len(games) == 6 and all("alphaB@1" in (g.side0, g.side1) for g in games)


def test_history_is_thinned_for_the_plot_and_whole_in_the_api(ladder: SyntheticLadder, url: str):
    rows = [("beta@1", f"2026-01-01T00:{k // 60:02d}:{k % 60:02d}+00:00", k, 1500.0 + k, 1400.0, 1600.0 + k)
            for k in range(1000)]  # fmt: skip
    ladder.add_history(rows)
    reads = Reads(ladder.config.results_path, ladder.config.ladder_path)
    thin = reads.history("beta", PLOT_POINTS)
    assert thin[0] == rows[0] and thin[-1] == rows[-1] and len(thin) <= PLOT_POINTS + 1
    assert len(get(url, "/api/teams/beta").json()["history"]) == 1000
    page = get(url, "/teams/beta").text
    assert page.count('class="version-line"') == 1
