"""What a spectator of a live ladder game is sent: public information only (arena.ladder.games.live).

The filter is tested directly on a view that carries every private field, and
end to end on a real table process (built-in bots, no Docker): every message
a spectator would get for a whole game is checked against the game's record,
card by card: nothing but the cards already played ever appears.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from typing import Any

import pytest
import trio
from arena_sdk.engine import resolve_ruleset
from arena_sdk.wire import arena_pb2 as pb

from arena.ladder.games.live import LiveGames, spectator_message
from arena.match import TimeControl
from arena.sandbox.docker import ContainerLimits
from arena.tables.players import LocalTables
from arena.tables.spec import SeatSpec, TableSpec

CARD = re.compile(r"\b[SHDC][2-9TJQKA]\b")


def _private_view() -> pb.SeatView:
    view = pb.SeatView(
        seat=2, hand_number=3, first=1, hand=["SA", "SK", "H2", "D9"], bids=[3, -1, 2, 4], blind=[False] * 4,
        tricks_won=[1, 0, 0, 0], leader=1, spades_broken=False, scores=[120, 80], bags=[1, 2],
        offered_card="CQ", seen_discards=["C7", "C8"], exchanged=[0, 0],
    )  # fmt: skip
    view.current_trick.add(seat=1, card="HA")
    trick = view.tricks.add(leader=0, winner=0)
    trick.cards.extend(["D2", "D3", "D4", "D5"])
    return view


def test_the_filter_keeps_the_public_view_and_drops_every_hidden_card():
    message = spectator_message("L0000001-t1", 2, _private_view().SerializeToString())
    text = json.dumps(message)
    assert set(CARD.findall(text)) == {"HA", "D2", "D3", "D4", "D5"}  # the cards on the table, and no other
    view = message["view"]
    assert "hand" not in view and "offered_card" not in view and "seen_discards" not in view
    assert view["bids"] == [3, -1, 2, 4] and view["scores"] == [120, 80]
    assert view["current_trick"] == [{"seat": 1, "card": "HA"}]
    assert message == {"type": "view", "game_id": "L0000001-t1", "to_move": 2, "view": view}


def test_the_filter_refuses_bytes_that_are_not_a_view():
    with pytest.raises(ValueError, match="not a seat view"):
        spectator_message("L0000001-t1", 0, b"\xff\xff\xff")


def test_the_hub_lists_a_game_from_its_start_to_its_replay():
    hub = LiveGames(4)
    view = _private_view().SerializeToString()
    hub.publish("L0000001-t1", 0, view)  # never announced: not a game of the ladder's pairs
    assert hub.latest("L0000001-t1") is None and hub.games() == []
    hub.start("L0000001-t1", ("a@1", "b@1"))
    assert hub.games() == [{"game_id": "L0000001-t1", "side0": "a@1", "side1": "b@1", "hand": 0, "over": False}]
    hub.publish("L0000001-t1", 1, view)
    seq, message = hub.latest("L0000001-t1")  # type: ignore[misc]
    assert message["type"] == "view" and "SA" not in json.dumps(message)
    hub.finish("L0000001-t1", replay=True)
    seq2, over = hub.latest("L0000001-t1")  # type: ignore[misc]
    assert seq2 > seq and over["type"] == "over" and over["replay"] == "/games/L0000001-t1"
    assert over["last"] == message  # the last public view goes with it (its end on the felt), nothing more
    assert set(CARD.findall(json.dumps(over))) == set(CARD.findall(json.dumps(message)))
    assert hub.games() == []  # over: off the list, still answered (a late spectator is sent to the replay)


def test_a_waiting_spectator_is_woken_from_another_thread():
    hub = LiveGames(4)
    hub.start("L0000002-t1", ("a@1", "b@1"))
    seq, _ = hub.latest("L0000002-t1")  # type: ignore[misc]

    async def wait() -> float:
        loop = asyncio.get_running_loop()
        threading.Timer(0.2, hub.publish, ("L0000002-t1", 0, _private_view().SerializeToString())).start()
        started = loop.time()
        await hub.wait("L0000002-t1", seq, timeout=60)
        return loop.time() - started

    assert asyncio.run(wait()) < 30  # woken by the publish, not by the timeout
    assert hub.latest("L0000002-t1")[0] == seq + 1  # type: ignore[index]


def _shown_cards(message: dict[str, Any]) -> list[str]:
    view = message["view"]
    return [c for t in view["tricks"] for c in t["cards"]] + [p["card"] for p in view["current_trick"]]


@pytest.mark.timeout(300)
def test_every_message_of_a_whole_live_game_shows_only_cards_already_played(tmp_path):
    rules = resolve_ruleset("pagat", {"max_hands": "2"})
    seats = tuple(SeatSpec(name, "builtin", "easy") for name in ("a", "b", "a", "b"))
    spec = TableSpec(
        "live-t1", "live-match-t1", "live-test", rules, ("G-live",), ("seed-live",), TimeControl(),
        ContainerLimits(), 20.0, seats, log_dir=str(tmp_path), live=True,
    )  # fmt: skip
    hub = LiveGames(4)
    hub.start("G-live", ("a", "b"))
    sent: list[dict[str, Any]] = []
    games = []

    def on_live(game_id: str, to_move: int, view: bytes) -> None:
        hub.publish(game_id, to_move, view)
        sent.append(hub.latest(game_id)[1])  # type: ignore[index]

    async def play() -> None:
        await LocalTables().play(spec, games.append, threading.Event(), on_live=on_live)

    trio.run(play)
    assert len(games) == 1
    record = games[0].record
    assert record["result"]["ending"] == "max_hands"
    played = {h["number"]: [a["action"] for a in h["actions"] if a["kind"] == "play"] for h in record["hands"]}
    decisions = sum(len(h["actions"]) for h in record["hands"])
    hands = len(record["hands"])
    assert hands == 2
    assert len(sent) == decisions + hands - 1  # one message a decision, and each hand but the last when it ends
    for message in sent:
        assert message["type"] == "view"
        text = json.dumps(message)
        number = message["view"]["hand_number"]
        shown = _shown_cards(message)
        assert shown == played.get(number, [])[: len(shown)], "a card shown before it was played"
        before = message.get("previous_hand")
        earlier: list[str] = []
        if before is not None:  # the hand before, whole: every one of its cards was played
            assert before["hand_number"] == number - 1
            earlier = [c for t in before["tricks"] for c in t["cards"]]
            assert earlier == played[number - 1]
        assert set(CARD.findall(text)) <= set(shown) | set(earlier), "a card that is on no table"
    # From the second hand on, every message carries the hand before (a spectator folded past its end sees it).
    assert all(m["view"]["hand_number"] == 1 or "previous_hand" in m for m in sent)
    # Each hand's end is shown, its last trick included: all 52 cards, once all were played.
    for number in played:
        assert any(m["view"]["hand_number"] == number and len(_shown_cards(m)) == 52 for m in sent), number
