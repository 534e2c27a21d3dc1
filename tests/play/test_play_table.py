"""The pieces of ``arena play`` without a browser: the comparison, the seat's checks, its clock."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from arena_sdk.bots import MediumBot
from arena_sdk.engine import Decision, resolve_ruleset
from arena_sdk.engine.seats import parse_seat
from arena_sdk.testing import play_game
from arena_sdk.wire import arena_pb2 as pb

from arena.play.compare import HandSetup, replay_hand, seat_play
from arena.play.seat import AnswerRefused, HumanSeat, OpenDecision, default_answer, refusal
from arena.play.snapshot import with_swing
from arena.play.table import PlayError, PlayTable, TableConfig, parse_time_control
from arena.referee.botspec import parse_bot_spec

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("rules", ["pagat", "two-player"])
def test_replaying_a_hand_with_the_same_bots_plays_it_exactly_again(rules: str) -> None:
    """The comparison deals the same hand: with the game's own bot in the seat, the same cards come out."""
    players = resolve_ruleset(rules, {}).players
    game = play_game([MediumBot] * players, rules, seed="c0ffee", max_hands=3)
    for hand in game.record["hands"][:3]:
        teams = list(hand["result"]["teams"].values())
        setup = HandSetup(
            rules=game.rules.to_dict(), deal_seed="c0ffee", hand_number=hand["number"],
            first=parse_seat(players, hand["first"]),
            scores=(teams[0]["score_before"], teams[1]["score_before"]),
            bags=(teams[0]["bags_before"], teams[1]["bags_before"]), bot_seeds=game.bot_seeds,
        )  # fmt: skip
        for seat in range(players):
            replayed = replay_hand(setup, seat, [MediumBot] * players)
            tricks, trick = [], []
            for action in hand["actions"]:
                if action["kind"] == "play":
                    trick.append((parse_seat(players, action["seat"]), action["action"]))
                    if len(trick) == players:
                        tricks.append((trick[0][0], [c for _, c in trick]))
                        trick = []
            assert replayed == seat_play(players, seat, hand["result"], tricks), (rules, hand["number"], seat)


def _decision(kind: Decision, legal: list[str], hand: list[str], trick: list[tuple[int, str]] = (),
              broken: bool = False) -> OpenDecision:  # fmt: skip
    view = pb.SeatView(seat=2, hand=hand, spades_broken=broken,
                       current_trick=[pb.Play(seat=s, card=c) for s, c in trick])  # fmt: skip
    loop = asyncio.new_event_loop()
    try:
        return OpenDecision(1, kind, tuple(legal), view, 1000, 0, 1000, 0.0, loop.create_future())
    finally:
        loop.close()


def test_an_illegal_card_is_refused_with_the_reason_in_words() -> None:
    follow = _decision(Decision.PLAY, ["H4", "HK"], ["C2", "H4", "HK", "SA"], trick=[(1, "H9")])
    assert refusal(follow, "HK") is None
    assert refusal(follow, "C2") == "you cannot play the 2 of clubs: follow suit, play hearts"
    assert refusal(follow, "DA") == "you do not hold the ace of diamonds"
    assert refusal(follow, "zz") == "'zz' is not a card"
    lead = _decision(Decision.PLAY, ["C2", "H4"], ["C2", "H4", "SA"])
    assert refusal(lead, "SA") == "you cannot lead the ace of spades: spades are not broken yet"
    bid = _decision(Decision.BID, [str(b) for b in range(14)], ["C2"])
    assert "not a bid" in refusal(bid, "14")
    swap = _decision(Decision.EXCHANGE, [], ["C2", "H4", "SA", "D7"])
    assert refusal(swap, "C2,H4") is None and refusal(swap, "") is None
    assert refusal(swap, "C2,H4,SA,D7") == "you may return at most 3 cards"
    assert refusal(swap, "C2,C2") == "each card can be returned once"
    assert default_answer(bid) == "1" and default_answer(follow) == "H4" and default_answer(swap) == ""


def test_an_answer_to_a_closed_decision_is_refused() -> None:
    seat = HumanSeat()
    with pytest.raises(AnswerRefused, match="no longer open"):
        seat.answer(1, "SA")


def test_bad_table_settings_are_one_line_errors(tmp_path: Path) -> None:
    rules = resolve_ruleset("pagat", {})
    easy = parse_bot_spec("builtin:easy")
    with pytest.raises(PlayError, match="--time-control"):
        parse_time_control("sixty")
    with pytest.raises(PlayError, match="move time"):
        parse_time_control("0,10")
    assert parse_time_control("30").hard_cap_s == 330
    with pytest.raises(PlayError, match="every seat but the person's"):
        TableConfig(rules=rules, seat=2, bots=(easy, easy, easy, easy), out_dir=tmp_path, seed="s")
    with pytest.raises(PlayError, match="--compare-with"):
        TableConfig(rules=rules, seat=2, bots=(easy, easy, None, easy), out_dir=tmp_path, seed="s", compare_bot="x")


def test_the_swing_is_the_bots_margin_less_the_persons() -> None:
    hand = {"you": {"side_points": 40, "other_points": 60}}
    assert with_swing({"status": "done", "margin": 10}, hand)["swing"] == 30
    assert "swing" not in with_swing({"status": "running"}, hand)


def test_when_the_persons_clock_runs_out_the_seat_plays_the_default_in_time(tmp_path: Path) -> None:
    """No strike, ever: a person who does not answer gets the default move just before the limit."""
    rules = resolve_ruleset("pagat", {"max_hands": "1"})
    easy = parse_bot_spec("builtin:easy")
    config = TableConfig(rules=rules, seat=0, bots=(None, easy, easy, easy), out_dir=tmp_path, seed="clock",
                         time_control=parse_time_control("1.6,0"))  # fmt: skip
    table = PlayTable(config)
    table.seat.auto_margin_s = 1.5  # answered 0.1 s into each decision, 1.5 s before the limit
    messages: list[str] = []
    table.listeners.append(lambda: messages.append(table.seat.message))

    async def play() -> None:
        table.seat.page_connected()  # a page is there, and says nothing
        await table.run()
        await table.close()

    asyncio.run(play())
    (game,) = table.outcomes
    assert game.ending == "max_hands"
    assert game.stats[0].strikes == 0 and game.stats[0].decisions == 14
    assert "Your time ran out: a bid of 1 was played for you." in messages


def test_the_public_view_holds_no_hand() -> None:
    """What a spectator's feed is built from: bids, cards played, tricks, scores; no seat's cards."""
    from arena.play.views import public_view_json, seat_view_json

    view = pb.SeatView(seat=1, hand=["SA", "H2"], offered_card="D3", seen_discards=["C4"], bids=[2, -1, -1, -1],
                       current_trick=[pb.Play(seat=0, card="HK")], scores=[10, 20], bags=[1, 2])  # fmt: skip
    public = json.dumps(public_view_json(view))
    for secret in ("SA", "H2", "D3", "C4"):
        assert secret not in public
    assert "HK" in public
    assert seat_view_json(view)["hand"] == ["SA", "H2"]


def test_before_the_first_page_the_seat_waits_longer_than_the_reconnect_window() -> None:
    """Opening the printed address takes a moment: the short window counts only once a page has come."""
    from arena.play.seat import FIRST_PAGE_WAIT_S

    seat = HumanSeat(reconnect_s=2)
    assert seat.reconnect_window() == FIRST_PAGE_WAIT_S
    seat.page_connected()
    seat.page_disconnected()
    assert seat.reconnect_window() == 2
