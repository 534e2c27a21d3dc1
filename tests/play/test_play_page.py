"""The table a Spades player enjoys (issue 47), in Debian's Chromium: a real ``arena play`` each time.

- the bots' cards are laid one at a time, each finished trick held with its
  winner marked (until a click when asked), the last trick on demand, the
  hand's tricks after the hand; a card, a trick's winner and a hand's result
  are said in a live region;
- whole hands by keys only, the focus never lost by a push (the comparison
  finishing during the bid prompt was the bug), the bid focus never on nil,
  nil confirmed;
- the numbers are the game's at every moment, the game-over state says who
  won and opens a new game;
- a hint (Hard's card and why) and an undo, both in the record as assisted;
  the score sheet, the statistics file, the comparison trick by trick;
- a phone-sized window shows the hand and the bid buttons without scrolling.

Every state the page was pushed is checked against the game's record: no
card of another seat before it is played.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from play_support import (
    FAST,
    WAIT_MS,
    arena_play,
    latest_state,
    play_out,
    pushed,
    states_show_no_hidden_card,
)

pytestmark = pytest.mark.timeout(600)

ONE_HAND = ("--set", "max_hands=1")
#: Records every line the page's live region says, from the page's first script on.
LISTEN = """
window.__said = [];
new MutationObserver((changes) => {
  for (const c of changes) for (const n of c.addedNodes) if (n.closest && n.closest('#announce')) window.__said.push(n.textContent);
}).observe(document, {subtree: true, childList: true});
window.__felt = [];
document.addEventListener('DOMContentLoaded', () => {
  const trick = document.getElementById('trick');
  new MutationObserver(() => window.__felt.push({
    cards: Array.from(trick.querySelectorAll('.spot .card')).map((c) => c.getAttribute('aria-label')),
    winner: Array.from(trick.querySelectorAll('.spot.winner .card')).map((c) => c.getAttribute('aria-label')),
    caption: (trick.querySelector('.caption') || {}).textContent || '',
    past: trick.classList.contains('past'),
  })).observe(trick, {childList: true, subtree: true});
});
"""


def wait_until(page: Any, script: str) -> None:
    """Poll ``script`` (a function's source) in the page until it is true (the page's CSP forbids
    Playwright's wait_for_function, which evaluates a string); fails after WAIT_MS."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while not page.evaluate(script):
        assert time.monotonic() < deadline, f"never true: {script}"
        time.sleep(0.05)


def words(card: str) -> str:
    """``"SA"`` -> ``"ace of spades"``, as the page says a card."""
    names = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
    ranks = {"T": "10", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}
    return f"{ranks.get(card[1], card[1])} of {names[card[0]]}"


def new_page(browser: Any, width: int = 1280, height: int = 800) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.add_init_script(LISTEN)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.errors.append(m.text) if "Content Security Policy" in m.text else None)
    return page


def record_of(table: Any) -> dict[str, Any]:
    (path,) = table.records()
    return json.loads(path.read_text())


def focused(page: Any) -> dict[str, Any]:
    return page.evaluate(
        "() => { const a = document.activeElement; return {tag: a.tagName, cls: a.className || '', id: a.id,"
        " action: a.dataset ? (a.dataset.action || a.dataset.card || '') : '', text: a.textContent}; }"
    )


def test_the_bots_cards_come_one_at_a_time_and_each_finished_trick_is_held_with_its_winner(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page("fast"))
        assert play_out(page) == 14
        page.wait_for_selector("#game-over h2", timeout=WAIT_MS)
        felt = page.evaluate("window.__felt")
        said = page.evaluate("window.__said")
        record = record_of(table)
        assert states_show_no_hidden_card(messages, record) > 14
    played = [a["action"] for a in record["hands"][0]["actions"] if a["kind"] == "play"]
    # One card at a time: each drawing of the felt adds one card to the trick, or starts the next
    # trick with its first card; the cards come in the order they were played.
    laid: list[str] = []
    previous: list[str] = []
    for f in felt:
        cards = f["cards"]
        if not cards or cards == previous:
            continue
        assert (len(cards) == len(previous) + 1 and cards[:-1] == previous) or len(cards) == 1, (previous, cards)
        laid.append(cards[-1])
        previous = cards
    assert laid == [words(c) for c in played]
    # Each finished trick was drawn whole, its winner marked and named, before the next began.
    finished = [f for f in felt if len(f["cards"]) == 4 and f["winner"]]
    assert len({tuple(f["cards"]) for f in finished}) == 13
    assert all(f["caption"].startswith("Won by") for f in finished)
    # The live region said every card, every trick's winner and the hand's result.
    plays = [line for line in said if " plays the " in line]
    assert len(plays) == 52 and len([line for line in said if line.endswith("wins the trick.")]) == 13
    assert [p.split(" plays the ")[1].rstrip(".") for p in plays] == [words(c) for c in played]
    assert any(line.startswith("Hand 1 over:") for line in said)
    assert not page.errors


def test_waiting_for_a_click_holds_the_finished_trick_until_the_click(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page("fast"))
        page.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        page.check("#wait-click")
        # Play until a trick is finished by the bots after the person's card and they lead again.
        for _ in range(13):
            play_out(page, max_moves=1, until_moves=True)
            wait_until(page, "() => document.querySelector('#trick .caption') !== null || document.body.dataset.request !== ''")
            caption = page.text_content("#trick .caption") or ""
            if "click or press Space to go on" in caption:
                break
        else:
            pytest.fail("no trick was held for a click")
        held = page.evaluate("Array.from(document.querySelectorAll('#trick .spot .card')).map(c => c.getAttribute('aria-label'))")
        assert len(held) == 4 and page.locator("#trick .spot.winner").count() == 1
        # The server has sent the next cards already; the felt still holds the trick (a second of it).
        shown = latest_state(messages)["view"]
        assert len(shown["current_trick"]) >= 1 or shown["hand_over"]
        page.wait_for_timeout(1000)
        assert "click or press Space to go on" in page.text_content("#trick .caption")
        page.click("#trick")
        wait_until(page, "() => !(document.querySelector('#trick .caption') || {textContent: ''}).textContent.includes('go on')")


def test_the_last_trick_and_the_hands_tricks_by_keys(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        play_out(page, keyboard=True, max_moves=4, until_moves=True)  # a bid and three cards
        page.wait_for_selector("button.card.legal", timeout=WAIT_MS)
        state = latest_state(messages)
        last = state["view"]["tricks"][-1]
        page.keyboard.press("l")
        assert page.get_attribute("#last-trick", "aria-pressed") == "true"
        caption = page.text_content("#trick .caption")
        assert caption.startswith(f"Last trick ({len(state['view']['tricks'])} of hand 1): won by")
        cards = page.evaluate("Array.from(document.querySelectorAll('#trick .spot .card')).map(c => c.getAttribute('aria-label'))")
        assert len(cards) == 4 and len(last["cards"]) == 4
        assert "card" in focused(page)["cls"]  # the focus stayed on the hand
        page.keyboard.press("Escape")
        assert page.get_attribute("#last-trick", "aria-pressed") == "false"
        play_out(page, keyboard=True)
        # After the hand: its 13 tricks, each with its winner.
        page.click("#last-hand details summary")
        assert page.locator("#last-hand .tricks-table tbody tr").count() == 13
        record = record_of(table)
        assert states_show_no_hidden_card(messages, record) > 0


def test_keys_only_the_focus_is_never_lost_and_the_bid_never_starts_on_nil(tmp_path: Path, browser) -> None:
    """Two hands by keys, with Hard's comparison finishing while the next bid is asked: its push
    must not take the focus from the bid buttons (the bug: Enter then did nothing)."""
    with arena_play(tmp_path, *FAST, "--set", "max_hands=2") as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        moves = 0
        bids_seen = 0
        while True:
            page.wait_for_selector("button.card.legal, .bids button.action, #game-over h2", timeout=WAIT_MS)
            if page.locator("#game-over h2").count():
                break
            where = focused(page)
            assert where["tag"] == "BUTTON", where  # at every decision the focus is on a choice
            if "bid" in where["cls"]:
                bids_seen += 1
                assert where["action"] != "0"  # never nil
                if bids_seen == 2:
                    # Wait for Hard's replay of hand 1 to arrive while the bid is asked.
                    page.wait_for_selector('#compare .comparison[data-status="done"]', timeout=WAIT_MS)
                    assert focused(page) == where
            asked = page.get_attribute("body", "data-request")
            if "card" in where["cls"] and moves % 2:
                page.keyboard.press("ArrowRight")
            page.keyboard.press("Enter")
            moves += 1
            page.wait_for_selector(f'body:not([data-request="{asked}"])', state="attached", timeout=WAIT_MS)
            assert focused(page)["tag"] != "BODY"  # a played card hands the focus to its neighbour
        assert moves == 28 and bids_seen == 2
        record = record_of(table)
        assert record["result"]["ending"] == "max_hands"
        assert states_show_no_hidden_card(messages, record) > 28
        assert not page.errors


def test_nil_is_confirmed_and_enter_out_of_habit_does_not_bid_it(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser)
        page.goto(table.page())
        page.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        page.focus('.bids button[data-action="0"]')
        page.keyboard.press("Enter")
        assert "Nil: you bid to take no tricks" in page.text_content("#prompt")
        assert focused(page)["text"] == "No, choose another bid"
        page.keyboard.press("Enter")  # habit: it goes back, it does not bid
        page.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        assert focused(page)["action"] not in ("", "0")
        page.click('.bids button[data-action="0"]')
        page.click("#actions button.confirm")
        play_out(page)
        record = record_of(table)
        bid = next(a for a in record["hands"][0]["actions"] if a["seat"] == "S" and a["kind"] == "bid")
        assert bid["action"] == 0


def test_the_numbers_are_the_games_and_the_game_over_offers_a_new_game(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, "--set", "max_hands=2") as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        play_out(page, max_moves=14, until_moves=True)  # hand 1
        page.wait_for_selector(".bids button.action", timeout=WAIT_MS)  # hand 2's bid
        hand = latest_state(messages)["hands"][0]
        header = page.locator("#scores .score").all_text_contents()
        assert [f"{t['score_after']} (" in text for t, text in zip(hand["teams"], header)] == [True, True]
        play_out(page)
        record = record_of(table)
        final = list(record["result"]["scores"].values())
        header = page.locator("#scores .score").all_text_contents()
        assert [f": {s} (" in text for s, text in zip(final, header)] == [True, True]
        prompt = page.text_content("#prompt")
        assert prompt.startswith("Game over:") and "won" in prompt or "draw" in prompt
        assert page.text_content("#game-over h2") == prompt
        # No card is left in the hand, even after reopening the page.
        page.reload()
        page.wait_for_selector("#game-over h2", timeout=WAIT_MS)
        assert page.locator("#hand button.card").count() == 0
        assert page.text_content("#prompt").startswith("Game over:")
        page.wait_for_selector("#new-game", timeout=WAIT_MS)
        old = page.url
        page.click("#new-game")
        page.wait_for_url(lambda url: url != old and "/t/" in url, timeout=WAIT_MS)
        page.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        assert page.locator("#scores .score").first.text_content().endswith(": 0 (0 bags)")
        assert states_show_no_hidden_card(messages, record) > 0


def test_a_hint_and_an_undo_are_marked_in_the_record_and_replay_says_so(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND, "--partner", "builtin:medium", "--opponent", "builtin:medium") as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        page.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        page.keyboard.press("h")
        page.wait_for_selector("#hint-text:has-text('Hint: Bid')", timeout=WAIT_MS)
        hinted = latest_state(messages)["hint"]
        assert hinted["status"] == "done" and page.locator(f'.bids button[data-action="{hinted["action"]}"].suggested').count() == 1
        page.click(f'.bids button[data-action="{hinted["action"]}"]')
        play_out(page, max_moves=3, until_moves=True)  # three cards
        page.wait_for_selector("button.card.legal", timeout=WAIT_MS)
        before = latest_state(messages)
        cards_before = sorted(before["view"]["hand"])
        asked = page.get_attribute("body", "data-request")
        page.keyboard.press("u")  # back to the previous card: the cards played since come back
        page.wait_for_selector(f'body[data-request]:not([data-request="{asked}"]):not([data-request=""])', timeout=WAIT_MS)
        after = latest_state(messages)
        assert len(after["view"]["tricks"]) == len(before["view"]["tricks"]) - 1
        assert len(after["view"]["hand"]) == len(cards_before) + 1
        assert "1 undo" in page.text_content("#assisted")
        play_out(page)
        record = record_of(table)
        assert states_show_no_hidden_card(messages, record) > 0
    marks = [a.get("assisted") for h in record["hands"] for a in h["actions"] if a["seat"] == "S"]
    assert marks[0] == ["hint"] and ["undo"] in marks
    counted = record["meta"]["assisted"]["S"]
    assert counted["hints"] == 1 and counted["undos"] == 1 and len(counted["undone"]) == 1
    path = next(table.out.rglob("*-g1.json"))
    replay = subprocess.run([sys.executable, "-m", "arena", "replay", str(path)], capture_output=True, text=True, timeout=120)
    assert replay.returncode == 0 and "assisted play: S had 1 hint and 1 undo" in replay.stdout


def test_the_score_sheet_the_statistics_and_the_comparison_trick_by_trick(tmp_path: Path, browser) -> None:
    with arena_play(tmp_path, *FAST, "--set", "max_hands=2") as table:
        page = new_page(browser)
        messages = pushed(page)
        page.goto(table.page())
        play_out(page)
        page.wait_for_selector('#compare .comparison[data-bot="hard"][data-status="done"]', timeout=WAIT_MS)
        state = latest_state(messages)
        record = record_of(table)
        # The score sheet: one row per hand, the side's figures first.
        rows = page.locator("#sheet tbody tr")
        assert rows.count() == 2
        for hand, row in zip(state["hands"], rows.all()):
            cells = row.locator("td").all_text_contents()
            mine, theirs = hand["teams"][0], hand["teams"][1]  # the person is S: side NS first
            assert cells[3] == f"{mine['score_after']} · {theirs['score_after']}"
            assert cells[4] == f"{mine['bags_after']} · {theirs['bags_after']}"
        # The comparison of hand 2, trick by trick, with its first divergence and its swing explained.
        shown = next(c for c in state["comparisons"] if c["bot"] == "hard" and c["hand"] == 2)
        assert len(shown["rows"]) == 13 and sum(shown["parts"].values()) == shown["swing"]
        box = page.locator('#compare .comparison[data-bot="hard"]')
        assert box.locator(".compare-rows tbody tr").count() == 13
        assert box.locator(".divergence").text_content().startswith(("First divergence", "Hard played your cards"))
        assert box.locator(".explain li").count() == sum(1 for v in shown["parts"].values() if v)
        assert states_show_no_hidden_card(messages, record) > 0
    # The statistics file: both hands, and the swing against Hard where its replay ran.
    summary = json.loads(subprocess.run(
        [sys.executable, "-m", "arena", "play", "--stats", "--json", "--stats-file", str(tmp_path / "stats.json")],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout)  # fmt: skip
    assert summary["hands"] == 2 and summary["games"] == 1 and summary["swing_hands"] >= 1
    assert page.locator("#stats dd").first.text_content().startswith("1 (")


@pytest.mark.parametrize("stage", ["bid", "play"])
def test_on_a_phone_the_hand_and_the_bids_are_on_screen_without_scrolling(tmp_path: Path, browser, stage: str) -> None:
    with arena_play(tmp_path, *FAST, *ONE_HAND) as table:
        page = new_page(browser, 375, 667)
        page.goto(table.page())
        if stage == "play":
            play_out(page, max_moves=4, until_moves=True)
            page.wait_for_selector("button.card.legal", timeout=WAIT_MS)
        else:
            page.wait_for_selector(".bids button.action", timeout=WAIT_MS)
        page.evaluate("window.scrollTo(0, 0)")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        targets = page.locator("#hand button.card").all() + page.locator(".bids button.action").all()
        assert len(targets) >= (10 if stage == "play" else 27)
        for target in targets:
            box = target.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
            assert box["y"] >= 0 and box["y"] + box["height"] <= 667, (target.get_attribute("aria-label"), box)
        assert not page.errors
