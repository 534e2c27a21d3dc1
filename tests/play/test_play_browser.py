"""A person at the table, in Debian's Chromium (Playwright): ``arena play`` as a newcomer runs it.

Every test starts the real command (``python -m arena play``) with fast bots and
a one-hand game (``--set max_hands=1``), and plays through the page as a person
would: clicks, or keys only.  Outcomes are checked on the page, in the messages
the server pushed (parsed) and in the records on disk.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from play_support import FAST, WAIT_MS, arena_play, latest_state, play_out, pushed

pytestmark = pytest.mark.timeout(600)

ONE_HAND = ("--set", "max_hands=1")


def new_page(browser, width: int = 1280, height: int = 800):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": width, "height": height})
    page.csp_errors = []  # type: ignore[attr-defined]
    page.on("console", lambda m: page.csp_errors.append(m.text) if "Content Security Policy" in m.text else None)
    return page


def test_a_whole_hand_by_clicks_is_recorded_scored_and_replayable(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        assert play_out(page) == 14  # a bid and 13 cards
        assert "over" in page.text_content("#game-over h2")
        # The hand's score breakdown, as the referee scored it (HandEnd), on the page.
        hand = latest_state(messages)["hands"][0]
        assert page.text_content("#last-hand h2") == "Hand 1: the score"
        cells = page.locator("#last-hand table.breakdown tbody tr").last.locator("td").all_text_contents()
        assert cells == [f"{t['score_after']} ({t['bags_after']} bags)" for t in hand["teams"]]
        # A normal record, with the person's seat in it and no strike.
        (record_path,) = table.records()
        record = json.loads(record_path.read_text())
        assert record["seats"]["S"]["name"] == "person"
        assert record["result"]["ending"] == "max_hands"
        assert record["strikes"]["S"] == 0
        assert [t["score_after"] for t in hand["teams"]] == list(record["result"]["scores"].values())
        # The end of the game links the replay viewer of that record.
        with page.expect_popup(timeout=WAIT_MS) as popup:
            page.click("#game-over a")
        viewer = popup.value
        viewer.wait_for_load_state()
        assert record["game_id"] in viewer.title()
        assert not page.csp_errors  # type: ignore[attr-defined]


def test_the_two_player_draw_game_by_clicks(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, "--rules", "two-player", "--opponent", "builtin:easy", *ONE_HAND) as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        moves = play_out(page)
        kinds = {m["state"]["decision"]["kind"] for m in messages if m["type"] == "state" and m["state"]["decision"]}
        assert {"draw", "bid", "play"} <= kinds
        assert moves == ("blind_nil" in kinds) + 13 + 1 + 13  # (declining blind nil), 13 draws, a bid, 13 cards
        (record_path,) = table.records()
        record = json.loads(record_path.read_text())
        assert record["seats"]["A"]["name"] == "person" and record["strikes"]["A"] == 0
        assert not page.csp_errors  # type: ignore[attr-defined]


def test_a_whole_hand_by_keyboard_only(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser)
        page.goto(table.page())
        assert play_out(page, keyboard=True) == 14
        (record_path,) = table.records()
        record = json.loads(record_path.read_text())
        assert record["result"]["ending"] == "max_hands"
        assert record["strikes"]["S"] == 0


def test_after_a_deal_the_page_shows_how_a_bot_played_the_same_cards(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND, "--compare-with", "easy") as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        play_out(page)
        page.wait_for_selector('#compare .comparison[data-bot="easy"][data-status="done"]', timeout=WAIT_MS)
        # Another bot, asked from the page.
        page.select_option("#compare-bot", "random")
        page.click("#compare button.action")
        page.wait_for_selector('#compare .comparison[data-bot="random"][data-status="done"]', timeout=WAIT_MS)
        state = latest_state(messages)
        # The box was drawn again at each push since (running, done): the person's choice stayed.
        assert state["compare_bots"].index("random") > 0
        assert page.input_value("#compare-bot") == "random"
        you = state["hands"][0]["you"]
        for bot in ("easy", "random"):
            shown = next(c for c in state["comparisons"] if c["bot"] == bot)
            # The same deal: the bot held exactly the cards the person held.
            assert sorted(shown["cards"]) == sorted(you["cards"]) and len(shown["cards"]) == 13
            assert shown["swing"] == shown["margin"] - (you["side_points"] - you["other_points"])
            text = page.text_content(f'#compare .comparison[data-bot="{bot}"]')
            assert f"Swing: {shown['swing']:+d}".replace("+0", "0") in text
        # Trick by trick: 13 rows, the bot's card in each.
        assert page.locator('#compare .comparison[data-bot="easy"] .compare-rows tbody tr td:nth-child(3) .card').count() == 13


def test_a_reload_in_the_middle_of_a_hand_resumes_it(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser)
        page.goto(table.page())
        play_out(page, max_moves=4, until_moves=True)
        page.wait_for_selector("button.card.legal", timeout=WAIT_MS)
        asked = page.get_attribute("body", "data-request")
        cards = page.locator("#hand button.card").count()
        assert cards == 10  # three of 13 played
        page.reload()
        page.wait_for_selector("button.card.legal", timeout=WAIT_MS)
        # The same decision, the same cards: the table waited.
        assert page.get_attribute("body", "data-request") == asked
        assert page.locator("#hand button.card").count() == cards
        assert play_out(page) == 10
        (record_path,) = table.records()
        assert json.loads(record_path.read_text())["result"]["ending"] == "max_hands"


def test_an_illegal_card_gets_a_message_and_the_same_decision_again(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        for _ in range(14):  # until a play where some cards are not legal (follow suit)
            page.wait_for_selector("button.card.legal, .bids button.action", timeout=WAIT_MS)
            if page.locator("button.card.legal").count() and page.locator("#hand button.card[aria-disabled='true']").count():
                break
            play_out(page, max_moves=1, until_moves=True)
        else:
            pytest.fail("no decision with an illegal card came up")
        asked = page.get_attribute("body", "data-request")
        card = page.locator("#hand button.card[aria-disabled='true']").first.get_attribute("data-card")
        illegal = page.locator(f'#hand button.card[data-card="{card}"]')
        # A card that cannot be played stays focusable (aria-disabled): a click sends it, and the
        # server refuses it with the reason (as it would a tampered page's).
        illegal.click(force=True)  # Playwright itself waits for aria-disabled to go; a browser does not
        page.wait_for_selector("#message:not(:empty)", timeout=WAIT_MS)
        assert "cannot" in page.text_content("#message") or "do not hold" in page.text_content("#message")
        refused = [m for m in messages if m["type"] == "refused"]
        assert refused and card
        page.wait_for_selector(f'body[data-request="{asked}"]', state="attached", timeout=WAIT_MS)
        assert play_out(page) >= 1
        (record_path,) = table.records()
        record = json.loads(record_path.read_text())
        assert record["strikes"]["S"] == 0  # never a strike against the person
        assert not [e for e in record["events"] if e["seat"] == "S"]


def test_a_second_tab_takes_the_seat_over(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        first = new_page(browser)
        first.goto(table.page())
        first.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        second = new_page(browser)
        second.goto(table.page())
        second.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        first.wait_for_selector("body.taken-over", timeout=WAIT_MS)
        assert "another tab" in first.text_content("#status")
        assert play_out(second) == 14


def test_a_closed_tab_is_waited_for_then_the_game_is_abandoned_and_recorded(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND, "--reconnect", "2", "--exit-when-done") as table:
        page = new_page(browser)
        page.goto(table.page())
        page.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        page.close()
        table.process.wait(WAIT_MS / 1000)
        (record_path,) = table.records()
        record = json.loads(record_path.read_text())
        assert record["result"]["ending"] == "forfeit:disconnect"
        assert record["result"]["forfeit"]["seat"] == "S"
        notes = [a.get("note", "") for h in record["hands"] for a in h["actions"] if a["seat"] == "S"]
        assert notes[-1] == "the person left the table (no page was connected for 2 s): abandoned"
        summary = json.loads(next(table.out.rglob("play.json")).read_text())
        assert summary["abandoned"] is True


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_the_table_fits_the_window(tmp_path: Path, browser, size: tuple[int, int]) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser, *size)
        page.goto(table.page())
        play_out(page, max_moves=2, until_moves=True)
        page.wait_for_selector("button.card.legal", timeout=WAIT_MS)
        # Nothing wider than the window (no sideways scrolling), every card on screen and labelled.
        assert page.evaluate("document.documentElement.scrollWidth") <= size[0]
        for box in page.locator("#hand button.card").all():
            b = box.bounding_box()
            assert b is not None and b["x"] >= 0 and b["x"] + b["width"] <= size[0]
            assert box.get_attribute("aria-label")
        assert not page.csp_errors  # type: ignore[attr-defined]


def test_bot_names_are_text_and_the_four_colour_deck_is_kept(tmp_path: Path, browser) -> None:
    """A bot's name (here from its file name) is shown as text, never as markup; the deck switch sticks."""
    hostile = tmp_path / "<img src=x onerror=alert(1)>.py"
    shutil.copy(Path(__file__).resolve().parents[2] / "example_bots" / "random" / "bot.py", hostile)
    spec = f"cmd:{shlex.join([sys.executable, str(hostile)])}"
    with arena_play(tmp_path, "--opponent", spec, "--partner", "builtin:easy", *ONE_HAND) as table:
        page = new_page(browser)
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(table.page())
        page.wait_for_selector(".bids button.action, button.card.legal", timeout=WAIT_MS)
        assert "<img src=x onerror=alert(1)> (W)" in page.text_content("#pos-left .name")
        assert page.locator(".seat img").count() == 0 and not dialogs
        page.check("#four-colour")
        page.reload()
        page.wait_for_selector("#hand .suit-D .pip, #hand .suit-C .pip", state="attached", timeout=WAIT_MS)
        assert page.is_checked("#four-colour")
        fills = page.eval_on_selector_all(
            "#hand .card-face .pip", "ps => ps.map(p => [p.closest('svg').classList[1], getComputedStyle(p).fill])"
        )
        colours = dict(fills)
        assert colours.get("suit-D", "rgb(20, 86, 200)") == "rgb(20, 86, 200)"
        assert colours.get("suit-C", "rgb(24, 128, 44)") == "rgb(24, 128, 44)"
        assert {"suit-D", "suit-C"} & colours.keys()
