"""People on the ladder's site (issue 31): practice tables and watching live, against a real ladder.

A real ``arena ladder serve`` on 127.0.0.1, two teams' bots built into images
and rated by the ladder as usual (Docker), Debian's Chromium through
Playwright.  The bots sleep a little before each move, so a game lasts long
enough to be watched.

- a team opens a practice table on its page, plays it through by clicks,
  finds it on its page with its replay; it is in ``practice.sqlite`` and in
  nothing the ratings read; the team's daily quota then refuses the next one;
- another team cannot open it, even with its address;
- a spectator's event stream, collected for a whole ladder game, shows no
  card before it is played (checked against the game's record), and the live
  page shows a trick as it is played and opens the replay at the end;
- SIGTERM ends a practice table in play: its bots' containers are removed
  (the ``served`` fixture fails on any left) and its row says ``stopped``.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from docker_support import engine_or_skip
from guard_support import NO_BUILDS, signed_in
from ladder_support import Ladder, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1500)]

#: A random bot that sleeps before each bid and card: a one-hand game takes about ten seconds.
SLOW_BOT = """\
import time
from arena_sdk import run
from arena_sdk.testing import RandomBot


class Slow(RandomBot):
    name = {name!r}

    def bid(self, view):
        time.sleep(0.15)
        return super().bid(view)

    def play(self, view):
        time.sleep(0.15)
        return super().play(view)


run(Slow())
"""
#: How long a wait on the page may take on a loaded machine.
WAIT_MS = 120_000
CARD = re.compile(r"\b[SHDC][2-9TJQKA]\b")
WATCH = re.compile(r'href="/live/(L\d{7}-t[12])"')


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder's practice tables and live games")
    lad = Ladder(
        tmp_path_factory.mktemp("ladder") / "lad", "submissions.validation_hands=1", "play.per_team_per_day=1",
        "server.header_timeout=2.0",  # a practice table's WebSocket outlives the header deadline
        teams=("alpha", "beta", "gamma"),
    )  # fmt: skip
    with served(lad, client):
        for team in ("alpha", "beta"):
            assert lad.upload(team, tarball({"bot.py": SLOW_BOT.format(name=team)})).status_code == 201
        for team in ("alpha", "beta"):
            lad.wait_for(f"{team}@1 active", lambda team=team: lad.versions(team)[0]["status"] == "active")
        yield lad


def _sign_in(page: Any, ladder: Ladder, team: str) -> None:
    page.goto(ladder.url + "/signin")
    page.fill("#token", ladder.tokens[team])
    page.click("#signin-button")
    page.wait_for_url(ladder.url + "/me")


def _play_out(page: Any, max_moves: int = 60) -> int:
    """Click the person's seat through to the end of the game (a bid of 2, the first legal card)."""
    actionable = "button.card.legal, #actions button.action, #game-over h2"
    for moves in range(max_moves):
        page.wait_for_selector(actionable, timeout=WAIT_MS)
        if page.locator("#game-over h2").count():
            return moves
        asked = page.get_attribute("body", "data-request")
        if page.locator("button.card.legal").count():
            page.locator("button.card.legal").first.click()
        elif page.locator(".bids button.action").count():
            page.locator(".bids button.action").nth(2).click()
        else:
            page.locator("#actions button.action").first.click()
        page.wait_for_selector(f'body:not([data-request="{asked}"])', state="attached", timeout=WAIT_MS)
    raise AssertionError(f"no game end after {max_moves} moves")


def _practice_rows(ladder: Ladder) -> list[tuple[Any, ...]]:
    with sqlite3.connect(ladder.directory / "practice.sqlite") as db:
        return db.execute("SELECT id, team, status, game_id, record, seats FROM practice ORDER BY id").fetchall()


def test_a_practice_table_is_played_in_the_browser_kept_apart_and_limited(ladder: Ladder, browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    csp_errors: list[str] = []
    page.on("console", lambda m: csp_errors.append(m.text) if "Content Security Policy" in m.text else None)
    _sign_in(page, ladder, "alpha")
    page.select_option("#practice-version", "beta@1")
    page.select_option("#practice-seat", "2")  # S
    page.click("#practice-form summary")
    page.select_option("#practice-seat-0", "alpha@1")  # the partner: the team's own version
    page.click("#practice-open")
    page.wait_for_url(re.compile(re.escape(ladder.url) + r"/practice/[A-Za-z0-9_-]{20,}$"), timeout=WAIT_MS)
    key = page.url.rsplit("/", 1)[1]
    page.goto(page.url + "?speed=instant")  # the bots' cards at once: no waiting for the felt
    # Another team, even with the address, gets nothing: the table is bound to alpha's session.
    beta = signed_in(ladder, ladder.tokens["beta"])
    assert beta.get(f"/practice/{key}").status_code == 404
    assert httpx.get(f"{ladder.url}/practice/{key}", timeout=30).status_code == 404  # nobody signed in
    assert _play_out(page) == 14  # a bid and 13 cards (the ladder's rules: one hand)
    assert "over" in page.text_content("#game-over h2")
    # The table says the game's real length, offers another table on the team's page, and shows
    # no comparison box: the comparison replays built-in bots only.
    assert page.text_content("#rules").startswith("Rules: ") and "hand" in page.text_content("#rules")
    assert page.get_attribute("#new-game", "href") == "/me#practice"
    assert page.locator("#compare").is_hidden()
    # The table page's own replay link (arena play's viewer, served under the table's address).
    with page.expect_popup(timeout=WAIT_MS) as popup:
        page.click("#game-over a")
    viewer = popup.value
    viewer.wait_for_load_state()
    assert viewer.url.startswith(f"{ladder.url}/practice/{key}/replay/")
    assert viewer.url.rsplit("/", 1)[1] in viewer.title()
    viewer.close()
    assert not csp_errors

    # Stored apart: practice.sqlite has it with its record; results.sqlite (the ratings') does not.
    deadline = time.monotonic() + 60
    while (rows := _practice_rows(ladder))[-1][2] == "playing" and time.monotonic() < deadline:
        time.sleep(0.5)
    (table_id, team, status, game_id, record, seats) = rows[-1]
    assert (team, status) == ("alpha", "done")
    assert json.loads(seats) == ["alpha@1", "beta@1", "person", "beta@1"]
    saved = json.loads((ladder.directory / record).read_text())
    assert saved["game_id"] == game_id and saved["seats"]["S"]["name"] == "person"
    with sqlite3.connect(ladder.directory / "results.sqlite") as db:
        ids = [r[0] for r in db.execute("SELECT game_id FROM games")]
    assert game_id not in ids and all(re.fullmatch(r"L\d{7}-t[12]", g) for g in ids)
    assert ladder.get(f"/games/{game_id}").status_code == 404
    standings = ladder.get("/api/leaderboard").json()
    assert game_id not in json.dumps(standings)

    # Listed on the team's page with its replay (the team's only).
    page.goto(ladder.url + "/me")
    row = page.locator(f'#practice-games tr[data-practice="{table_id}"]')
    assert row.locator(".status").text_content().startswith("done")
    row.locator("a.practice-replay").click()
    page.wait_for_url(ladder.url + f"/me/practice/{table_id}")
    assert f"Practice table {table_id}" in page.text_content("#replay-title")
    page.wait_for_selector("#viewer, .viewer, main", timeout=WAIT_MS)
    assert beta.get(f"/me/practice/{table_id}").status_code == 404

    # The quota (one a day here) refuses the next one, with a message.
    page.goto(ladder.url + "/me")
    page.click("#practice-open")
    assert "practice table for today" in page.text_content("#practice-error")
    assert len(_practice_rows(ladder)) == 1
    assert not csp_errors


def _collect(url: str, into: list[str], done: threading.Event) -> None:
    with httpx.stream("GET", url, timeout=httpx.Timeout(30, read=120)) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            into.append(line)
            if line.startswith("data:") and json.loads(line[5:])["type"] in ("over", "closed"):
                break
    done.set()


def test_a_live_game_shows_its_tricks_then_its_replay_and_never_a_hidden_card(ladder: Ladder, browser) -> None:
    page = browser.new_page()
    for _attempt in range(6):  # a game may be caught at its very end: then the next one
        found = ladder.wait_for("a live game on the leaderboard", lambda: WATCH.search(ladder.get("/").text), timeout=300)
        game_id = found[1]
        lines: list[str] = []
        done = threading.Event()
        spectator = threading.Thread(target=_collect, args=(f"{ladder.url}/live/{game_id}/events", lines, done))
        spectator.start()
        page.goto(f"{ladder.url}/live/{game_id}")
        try:
            page.wait_for_selector("#trick .spot .card", timeout=30_000)
        except Exception:  # noqa: BLE001 - over before a card was seen on the page: try the next game
            spectator.join(180)
            continue
        page.wait_for_url(f"{ladder.url}/games/{game_id}", timeout=WAIT_MS)  # the replay opens at the end
        assert game_id in page.title()
        spectator.join(180)
        break
    else:
        pytest.fail("no live game was caught with a card on the table")
    assert done.is_set()
    messages = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
    over = messages[-1]
    assert (over["type"], over["game_id"], over["replay"]) == ("over", game_id, f"/games/{game_id}")
    views = [m for m in messages if m["type"] == "view"] + ([over["last"]] if "last" in over else [])
    assert views, messages
    record = json.loads((ladder.directory / "records" / f"{game_id}.json").read_text())
    played = {h["number"]: [a["action"] for a in h["actions"] if a["kind"] == "play"] for h in record["hands"]}
    for message in views:
        view = message["view"]
        assert "hand" not in view and "offered_card" not in view and "seen_discards" not in view
        shown = [c for t in view["tricks"] for c in t["cards"]] + [p["card"] for p in view["current_trick"]]
        assert shown == played[view["hand_number"]][: len(shown)], "a card shown before it was played"
        before = message.get("previous_hand")  # the hand before, whole (all its cards were played)
        earlier = [c for t in before["tricks"] for c in t["cards"]] if before else []
        assert earlier == (played[before["hand_number"]] if before else [])
        assert set(CARD.findall(json.dumps(message))) <= set(shown) | set(earlier), "a card that is on no table"
    # Every line of the stream was one of these messages or a keep-alive: nothing else reached the spectator.
    assert all(not line or line.startswith(("data:", ":")) for line in lines)


def test_sigterm_ends_a_practice_table_in_play_and_removes_its_bots(ladder: Ladder) -> None:
    gamma = signed_in(ladder, ladder.tokens["gamma"])
    opened = gamma.post("/me/practice", data={"version": "alpha@1", "seat": "0"}, headers={"Origin": ladder.url})
    assert opened.status_code == 303 and opened.headers["location"].startswith("/practice/")
    # Forged from another origin: refused by the site's Origin check (no table opened).
    forged = gamma.post("/me/practice", data={"version": "alpha@1", "seat": "0"}, headers={"Origin": "http://127.0.0.1:1"})
    assert forged.status_code == 403
    key = opened.headers["location"].rsplit("/", 1)[1]
    _check_the_socket(ladder, key, gamma.cookies["arena_session"])
    ladder.wait_for("the practice table's bots", lambda: _practice_containers(ladder), timeout=120)
    assert ladder.stop(signal.SIGTERM) == 0
    assert [r[2] for r in _practice_rows(ladder) if r[1] == "gamma"] == ["stopped"]
    assert not _practice_containers(ladder)  # and the served fixture checks the ladder's label too


def _check_the_socket(ladder: Ladder, key: str, session: str) -> None:
    """The table's WebSocket: its team's page from the site's own origin only."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    url = ladder.url.replace("http://", "ws://") + f"/practice/{key}/ws"
    cookie = {"Cookie": f"arena_session={session}"}
    with connect(url, origin=ladder.url, additional_headers=cookie, open_timeout=30) as socket:  # type: ignore[arg-type]
        first = json.loads(socket.recv(timeout=60))
        assert first["type"] == "state" and first["state"]["names"][0] == "You"
        assert "hand" in json.dumps(first)  # the person's own seat view (the seat's cards are theirs)
    refused = [
        {"origin": "http://127.0.0.1:1", "additional_headers": cookie},  # another origin, with the cookie
        {"origin": ladder.url, "additional_headers": {}},  # the site's origin, nobody signed in
    ]
    for kwargs in refused:
        with pytest.raises(InvalidStatus):
            connect(url, open_timeout=30, **kwargs).close()  # type: ignore[arg-type]


def _practice_containers(ladder: Ladder) -> list[Any]:
    """This ladder's containers (its run label) that a practice table started (their match id says so)."""
    from ladder_support import ladder_id

    import docker

    client = docker.from_env()
    try:
        mine = client.api.containers(all=True, filters={"label": f"arena.run=ladder-{ladder_id(ladder)}"})
        return [c for c in mine if (c.get("Labels") or {}).get("arena.match", "").startswith("practice-")]
    finally:
        client.close()


def test_practice_tables_turned_off_are_refused_with_a_message(tmp_path) -> None:
    client = engine_or_skip("the ladder's practice tables")
    lad = Ladder(tmp_path / "lad", NO_BUILDS, "play.enabled=false")
    with served(lad, client):
        alpha = signed_in(lad, lad.tokens["alpha"])
        assert "turned off" in alpha.get("/me").text
        refused = alpha.post("/me/practice", data={"version": "beta@1", "seat": "0"}, headers={"Origin": lad.url})
        assert refused.status_code == 403
        assert "Practice tables are turned off on this ladder" in refused.text
        assert not (lad.directory / "practice").exists()
