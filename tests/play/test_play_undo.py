"""Undo and hints at a real table, without a browser: the referee's loop goes back, the record says so.

A :class:`PlayTable` hosts a real match (the referee, Medium at the other seats
as local processes) and the test answers for the person through the seat
adapter, as the page does.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from arena_sdk.engine import replay_record, resolve_ruleset
from arena_sdk.engine.record import RecordError, record_assists
from arena_sdk.view import View
from arena_sdk.wire import arena_pb2 as pb

from arena.match.undo import UndoBook
from arena.play.table import PlayTable, TableConfig
from arena.referee.botspec import parse_bot_spec

pytestmark = pytest.mark.timeout(300)


def _table(tmp_path: Path, bots: str = "builtin:medium", seed: str = "undo-1") -> PlayTable:
    rules = resolve_ruleset("pagat", {"max_hands": "1"})
    bot = parse_bot_spec(bots)
    return PlayTable(TableConfig(rules=rules, seat=2, bots=(bot, bot, None, bot), out_dir=tmp_path, seed=seed))


async def _play(table: PlayTable, decide: Any) -> list[dict[str, Any]]:
    """Play the person's seat with ``decide(table, decision)`` (returns an answer, or None after asking
    for help itself); every snapshot's view as it was sent after each change."""
    table.seat.page_connected()
    seen: list[dict[str, Any]] = []
    table.listeners.append(lambda: seen.append(table.snapshot()))
    run = asyncio.create_task(table.run())
    while not run.done():
        await asyncio.sleep(0.01)
        decision = table.seat.decision
        if decision is None or decision.answer.done():
            continue
        text = await decide(table, decision)
        if text is not None:
            table.seat.answer(decision.request_id, text)
    await run
    await table.close()
    return seen


def _record(tmp_path: Path) -> dict[str, Any]:
    (path,) = tmp_path.glob("*-g1.json")
    return json.loads(path.read_text())


def test_undo_takes_the_hand_back_to_the_previous_card_and_the_record_replays(tmp_path: Path) -> None:
    table = _table(tmp_path)
    undone_at: list[tuple[int, int]] = []
    replayed: list[tuple[int, int]] = []

    async def decide(table: PlayTable, decision: Any) -> str | None:
        tricks = len(decision.view.tricks)
        if tricks == 4 and not undone_at:
            assert table.can_undo()
            undone_at.append((tricks, len(decision.view.hand)))
            assert table.undo(decision.request_id) is None
            return None
        if undone_at and not replayed:
            replayed.append((len(decision.view.tricks), len(decision.view.hand)))
        return decision.legal[-1] if decision.kind.value == "play" else "3"

    asyncio.run(_play(table, decide))
    # Asked again one card back: a trick less, a card more in the hand.
    assert replayed == [(undone_at[0][0] - 1, undone_at[0][1] + 1)]
    record = _record(tmp_path)
    report = replay_record(record)  # the record is the line of play that stood, and it checks
    assert report.result.ending == "max_hands"
    mine = [a for a in record["hands"][0]["actions"] if a["seat"] == "S"]
    assert len(mine) == 14 and [a.get("assisted") for a in mine].count(["undo"]) == 1
    assert mine[4].get("assisted") == ["undo"]  # the bid, three cards, then the card asked again
    counted = record["meta"]["assisted"]["S"]
    assert counted["hints"] == 0 and counted["undos"] == 1
    (taken,) = counted["undone"]
    # The person's card, the rest of its trick, and the next trick's cards before the person's turn.
    assert taken[0]["seat"] == "S" and all(a["seat"] != "S" for a in taken[1:]) and 4 <= len(taken) <= 7
    assert record_assists(record) == {"S": {"hints": 0, "undos": 1}}
    # The referee's bookkeeping went back too: one entry per recorded decision, no strike.
    assert sum(len(h["actions"]) for h in record["hands"]) == 4 + 52
    assert record["strikes"] == {"N": 0, "E": 0, "S": 0, "W": 0}
    assert json.loads((tmp_path / "play.json").read_text())["games"][0]["assisted"]["S"]["undos"] == 1


def test_a_hint_is_hards_choice_with_a_reason_and_marks_the_decision(tmp_path: Path) -> None:
    table = _table(tmp_path, seed="hint-1")
    hints: dict[str, dict[str, Any]] = {}

    async def decide(table: PlayTable, decision: Any) -> str | None:
        kind = decision.kind.value
        if kind not in hints and (kind == "bid" or len(decision.view.current_trick) == 2):
            assert table.hint(decision.request_id) is None
            assert table.hint(decision.request_id) is None  # asked twice: one hint
            while table.assists.hints[decision.request_id]["status"] == "running":
                await asyncio.sleep(0.02)
            hints[kind] = {**table.assists.hints[decision.request_id], "legal": decision.legal,
                           "hand": list(decision.view.hand)}  # fmt: skip
            return hints[kind]["action"]
        return decision.legal[0] if kind == "play" else "2"

    asyncio.run(_play(table, decide))
    bid, play = hints["bid"], hints["play"]
    assert bid["status"] == play["status"] == "done"
    assert bid["action"] in bid["legal"] and play["action"] in play["legal"]
    assert bid["reason"].startswith(f"Bid {'nil' if bid['action'] == '0' else bid['action']}: your hand counts about")
    assert "sampled deals" in play["reason"] or "only legal card" in play["reason"]
    record = _record(tmp_path)
    mine = [a for a in record["hands"][0]["actions"] if a["seat"] == "S"]
    assert [a.get("assisted") for a in mine].count(["hint"]) == 2
    assert record["meta"]["assisted"]["S"] == {"hints": 2, "undos": 0}
    replay_record(record)


def test_no_undo_at_a_table_with_another_authors_bot(tmp_path: Path) -> None:
    bot = "cmd:python example_bots/random/bot.py"
    table = _table(tmp_path, bots=bot)
    assert table.undo_book is None and table.spec.undo is None
    assert "built-in bots" in (table.undo(1) or "")


def test_the_undo_book_keeps_points_within_one_hand_and_never_before_blind_nil() -> None:
    from arena_sdk.engine import GameState

    rules = resolve_ruleset("pagat", {})
    state = GameState.new(rules, "book")
    book = UndoBook({state.to_move})
    seat = state.to_move
    book.mark(0, seat, state, "first")
    assert not book.can_undo()  # nothing before the first decision
    with pytest.raises(ValueError):
        book.request()
    book.mark(0, seat, state, "second")
    assert book.can_undo()
    book.mark(1, seat, state, "another game")  # a new game: the old points are settled
    assert not book.can_undo()
    book.mark(1, (seat + 1) % 4, state, "not the person's")
    assert not book.can_undo()
    book.mark(1, seat, state, "again")
    book.request()
    point = book.take(state)
    assert point is not None and point.books == "another game" and not book.can_undo()
    assert book.take(state) is None  # one undo, one rewind


def test_the_assisted_field_is_checked_by_replay_and_old_records_stay_readable(tmp_path: Path) -> None:
    from arena_sdk.bots import MediumBot
    from arena_sdk.testing import play_game

    game = play_game([MediumBot] * 4, "pagat", seed="assist", max_hands=1)
    record = json.loads(json.dumps(game.record))
    replay_record(record)  # without the field: as before
    assert record_assists(record) == {}
    action = record["hands"][0]["actions"][0]
    for good in (["hint"], ["undo"], ["hint", "undo"]):
        action["assisted"] = good
        replay_record(record)
    for bad in ([], ["hint", "hint"], ["help"], "hint", [["hint"]]):
        action["assisted"] = bad
        with pytest.raises(RecordError, match=r"hands\[0\]\.actions\[0\]\.assisted"):
            replay_record(record)
    action["assisted"] = ["hint"]
    assert record_assists(record) == {action["seat"]: {"hints": 1, "undos": 0}}
    if record["version"] == 2:
        record["version"] = 1  # a version 1 record has no referee fields: refused there
        with pytest.raises(RecordError, match="unknown"):
            replay_record(record)


def test_a_bots_view_is_not_fooled_by_a_hand_that_went_back() -> None:
    """After an undo a bot may be asked with a trick it knew replaced by another: it reads the new one."""
    from arena_sdk.engine import resolve_ruleset as rules_of

    rules = rules_of("pagat", {})

    def request(tricks: list[tuple[int, list[str], int]]) -> pb.DecisionRequest:
        view = pb.SeatView(seat=1, hand_number=1, hand=["C2"])
        for leader, cards, winner in tricks:
            view.tricks.add(leader=leader, cards=cards, winner=winner)
        return pb.DecisionRequest(request_id=1, kind=pb.PLAY, view=view, legal=["C2"])

    first = View(rules, request([(0, ["H2", "H3", "H4", "H5"], 3)]))
    known = first.tricks
    again = View(rules, request([(0, ["H2", "H3", "H4", "HA"], 3)]), known)
    assert [str(c) for c in again.tricks[0].cards] == ["H2", "H3", "H4", "HA"]
    same = View(rules, request([(0, ["H2", "H3", "H4", "H5"], 3), (3, ["D2", "D3", "D4", "D5"], 2)]), known)
    assert same.tricks[0] is known[0]  # still this hand's: reused, not parsed again


def test_a_long_games_states_do_not_grow_with_its_hands(tmp_path: Path) -> None:
    """Every change pushes the whole state: old hands go as score lines only (their tricks and
    comparisons stay on the server), so the sixth hand's state is about the size of the third's."""
    from arena.play.table import dumps

    rules = resolve_ruleset("pagat", {"max_hands": "6", "target": "10000"})
    easy = parse_bot_spec("builtin:easy")
    table = PlayTable(TableConfig(rules=rules, seat=2, bots=(easy, easy, None, easy), out_dir=tmp_path,
                                  seed="small", compare_bot="easy"))  # fmt: skip
    sizes: dict[int, int] = {}

    async def decide(table: PlayTable, decision: Any) -> str:
        done = len(table.seat.hands)
        if done in (3, 5) and decision.kind.value == "bid":
            while any(c["status"] == "running" for c in table.comparisons.values()):
                await asyncio.sleep(0.02)  # the comparisons of the finished hands are in the state
            sizes[done] = len(dumps(table.snapshot()))
        return decision.legal[0] if decision.kind.value == "play" else "3"

    asyncio.run(_play(table, decide))
    assert set(sizes) == {3, 5}
    assert sizes[5] - sizes[3] < 4000, sizes  # two more score lines (about 900 bytes each), not two hands of tricks and replays
