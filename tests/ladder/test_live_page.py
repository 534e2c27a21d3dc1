"""The live page on arena play's felt, in Debian's Chromium, with no Docker: every card of every hand.

A real game between built-in bots (local processes, the ladder's table
runner) is played first and its live feed kept; a real site (uvicorn, a
ladder directory) then serves its live page while the feed is published into
the site's hub in bursts, so the page is folded past the ends of hands as a
slow spectator is.  The felt must still lay down every card of every hand,
the last trick of each included, in the order the record has them.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from arena_sdk.engine import resolve_ruleset
from site_support import SyntheticLadder, served

from arena.ladder.games.live import LiveGames
from arena.ladder.games.state import LadderState
from arena.match import TimeControl
from arena.sandbox.docker import ContainerLimits
from arena.tables.players import LocalTables
from arena.tables.spec import SeatSpec, TableSpec

pytestmark = pytest.mark.timeout(600)
GAME = "L0000001-t1"
FELT = """
document.addEventListener('DOMContentLoaded', () => {
  const trick = document.getElementById('trick');
  if (!trick) return;  // the replay's page, at the end
  let before = [];
  new MutationObserver(() => {
    const cards = Array.from(trick.querySelectorAll('.spot .card')).map((c) => c.getAttribute('aria-label'));
    if (trick.classList.contains('past') && cards.length && cards.join() === before.join()) return;
    if (cards.length && cards.join() !== before.join()) window.__laid(cards);
    before = cards;
  }).observe(trick, {childList: true, subtree: true});
});
"""


def _feed(tmp_path: Path) -> tuple[list[tuple[int, bytes]], dict[str, Any]]:
    rules = resolve_ruleset("pagat", {"max_hands": "3"})
    seats = tuple(SeatSpec(name, "builtin", "easy") for name in ("a", "b", "a", "b"))
    spec = TableSpec(
        "live-t1", "live-match-t1", "live-test", rules, (GAME,), ("seed-live-page",), TimeControl(),
        ContainerLimits(), 20.0, seats, log_dir=str(tmp_path), live=True,
    )  # fmt: skip
    views: list[tuple[int, bytes]] = []
    games: list[Any] = []

    async def play() -> None:
        await LocalTables().play(spec, games.append, threading.Event(), on_live=lambda g, m, v: views.append((m, v)))

    trio.run(play)
    return views, games[0].record


def _words(card: str) -> str:
    names = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
    ranks = {"T": "10", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}
    return f"{ranks.get(card[1], card[1])} of {names[card[0]]}"


def test_the_live_page_lays_every_card_of_every_hand_even_when_folded(tmp_path: Path, browser) -> None:
    views, record = _feed(tmp_path)
    played = [a["action"] for h in record["hands"] for a in h["actions"] if a["kind"] == "play"]
    assert len(played) == 3 * 52
    lad = SyntheticLadder(tmp_path / "lad")
    hub = LiveGames(4)
    hub.start(GAME, ("a@1", "b@1"))
    try:
        with served(lad.config, lambda: LadderState(live=hub)) as url:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            laid: list[list[str]] = []
            page.expose_function("__laid", lambda cards: laid.append(cards))  # kept across the move to the replay
            page.add_init_script(FELT)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{url}/live/{GAME}?speed=instant")
            page.wait_for_selector("#live-status:has-text('starting')", timeout=60_000)
            for i, (to_move, view) in enumerate(views):
                hub.publish(GAME, to_move, view)
                if i % 25 == 24:
                    time.sleep(0.4)  # bursts: the page reads only the latest of each
            hub.finish(GAME, replay=True)
            page.wait_for_url(f"{url}/games/{GAME}", timeout=120_000)  # the replay opens at the end
    finally:
        hub.close()
        lad.close()
    assert not errors
    # Each drawing adds one card to the trick or starts the next one; in the record's order, all 156.
    cards: list[str] = []
    previous: list[str] = []
    for shown in laid:
        assert (len(shown) == len(previous) + 1 and shown[:-1] == previous) or len(shown) == 1, (previous, shown)
        cards.append(shown[-1])
        previous = shown
    assert cards[-len(played) :] == [_words(c) for c in played] and len(cards) == len(played)
