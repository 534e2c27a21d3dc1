"""A real ``arena play`` in a subprocess and Debian's Chromium to sit at it (Playwright)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Fast bots for the other seats (Easy answers in well under a millisecond).
FAST = ("--partner", "builtin:easy", "--opponent", "builtin:easy")
#: How long any wait for the table may take on a loaded machine before the test fails.
WAIT_MS = 60_000
URL = re.compile(r"(http://127\.0\.0\.1:\d+/t/[A-Za-z0-9_-]+)")


class Table:
    """An ``arena play`` process: its URL, its output directory, its output so far."""

    def __init__(self, process: subprocess.Popen[str], url: str, out: Path) -> None:
        self.process = process
        self.url = url
        self.out = out

    @property
    def origin(self) -> str:
        return self.url.split("/t/")[0]

    def page(self, speed: str = "instant") -> str:
        """The page's address with the cards laid at ``speed`` (instant: no waiting in tests)."""
        return f"{self.url}?speed={speed}"

    def records(self) -> list[Path]:
        return sorted(p for p in self.out.rglob("play-*-g*.json"))


@contextmanager
def arena_play(tmp_path: Path, *args: str) -> Iterator[Table]:
    """Start ``arena play ARGS`` (port 0, output under ``tmp_path``); stop it with SIGINT after."""
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "--port", "0", "--out", str(out),
         "--stats-file", str(tmp_path / "stats.json"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        env={**os.environ, "COLUMNS": "400"},
    )  # fmt: skip
    try:
        url = _read_url(process)
        yield Table(process, url, out)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def _read_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        found = URL.search(line)
        if found:
            return found[1]
    raise AssertionError(f"arena play printed no table address: {''.join(seen)!r}")


def pushed(page: Any) -> list[dict[str, Any]]:
    """Every message the server pushes to ``page`` from now on, parsed (a list that grows)."""
    messages: list[dict[str, Any]] = []

    def on_socket(ws: Any) -> None:
        ws.on("framereceived", lambda payload: messages.append(json.loads(payload)))

    page.on("websocket", on_socket)
    return messages


def latest_state(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The last table state among ``messages``."""
    return next(m["state"] for m in reversed(messages) if m["type"] == "state")


#: What the page shows when the person has something to do, or the game is over.
ACTIONABLE = "button.card.legal, #actions button.action, #game-over h2"


def play_out(page: Any, *, keyboard: bool = False, max_moves: int = 200, until_moves: bool = False) -> int:
    """Play the person's seat until a game is over (or, ``until_moves``, ``max_moves`` moves made);
    by clicks, or by keys only.  Returns the moves made."""
    moves = 0
    while moves < max_moves:
        page.wait_for_selector(ACTIONABLE, timeout=WAIT_MS)
        if page.locator("#game-over h2").count():
            return moves
        asked = page.get_attribute("body", "data-request")
        if keyboard:
            # The page puts the focus on the first choice of each new decision (a bid: the hand's
            # own count, never nil); arrows move between the cards.  Keys only: no selector clicks.
            focused = page.evaluate("document.activeElement && document.activeElement.className")
            if "card" in (focused or "") and moves % 2:
                page.keyboard.press("ArrowRight")
            elif not focused or ("card" not in focused and "action" not in focused):
                raise AssertionError(f"the focus is not on a choice at a new decision: {focused!r}")
            page.keyboard.press("Enter")
        else:
            card = page.locator("button.card.legal")
            if card.count():
                card.first.click()
            elif page.locator(".bids button.action").count():
                page.locator(".bids button.action").nth(2).click()
            elif page.locator("#actions button.action", has_text="See my cards").count():
                page.locator("#actions button.action", has_text="See my cards").click()  # no blind nil
            else:  # keep the offered card, give back no cards
                page.locator("#actions button.action").first.click()
        moves += 1
        # The answer went: the page closes that decision at once (a selector: the page's CSP allows no eval).
        page.wait_for_selector(f'body:not([data-request="{asked}"])', state="attached", timeout=WAIT_MS)
    if until_moves:
        return moves
    raise AssertionError(f"no game end after {max_moves} moves")


CARD = re.compile(r"\b[SHDC][2-9TJQKA]\b")


def dealt(hand: dict[str, Any], seat: int, players: int = 4) -> set[str]:
    """The cards ``seat`` was dealt in a record's hand (four players: card i to the dealer's (1 + i)th left)."""
    first = "NESW".index(hand["first"])
    return {card for i, card in enumerate(hand["deck"]) if (first + 1 + i) % players == seat}


def states_show_no_hidden_card(messages: list[dict[str, Any]], record: dict[str, Any], seat: int = 2) -> int:
    """Check every table state pushed to the page against the game's record: the person's own cards,
    and other cards only once played (in play order; after an undo, a card the undo took back counts
    as played: it was); a finished hand's cards are all played.  Returns how many states were checked."""
    hands = {h["number"]: h for h in record["hands"]}
    played = {n: [a["action"] for a in h["actions"] if a["kind"] == "play"] for n, h in hands.items()}
    undone: dict[int, set[str]] = {}
    assisted = (record.get("meta") or {}).get("assisted", {})
    for counted in assisted.values():
        for taken in counted.get("undone", []):
            for a in taken:
                if a["kind"] == "play":
                    undone.setdefault(a["hand"], set()).add(a["action"])
    checked = 0
    for message in messages:
        if message["type"] != "state" or message["state"]["game_id"] != record["game_id"]:
            continue
        state = message["state"]
        view = state["view"]
        number = view["hand_number"] if view else 0
        over = {c for n in played if n < number or (n == number and view and view["hand_over"]) for c in played[n]}
        allowed = set(over)
        shown: list[str] = []
        if view:
            shown = [c for t in view["tricks"] for c in t["cards"]] + [p["card"] for p in view["current_trick"]]
            allowed |= dealt(hands[number], seat) if number in hands else set(view["hand"])
            if number in undone:
                assert set(shown) <= set(played[number]) | undone[number], "a card shown that was never played"
            else:
                assert shown == played[number][: len(shown)], "a card shown before it was played"
        found = set(CARD.findall(json.dumps(message)))
        assert found <= allowed | set(shown), f"a card of another seat before it was played: {found - allowed - set(shown)}"
        checked += 1
    return checked
