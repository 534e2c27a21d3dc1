"""BotDriver: a bug in bot code is a strike, not a crash; notices reach the bot."""

from __future__ import annotations

from arena_sdk import Bot
from arena_sdk.bot import BotDriver
from arena_sdk.engine import Decision, GameState, resolve_ruleset
from arena_sdk.protocol import request_to_proto
from arena_sdk.testing import play_game
from arena_sdk.wire import arena_pb2 as pb


class Buggy(Bot):
    name = "buggy"

    def __init__(self) -> None:
        super().__init__()
        self.notices: list[tuple[str, str]] = []

    def bid(self, view):
        return 3

    def play(self, view):
        raise ZeroDivisionError("oops")

    def on_notice(self, level, code, message):
        self.notices.append((level, code))


def welcome() -> pb.RefereeMessage:
    import json

    rules = resolve_ruleset("pagat")
    return pb.RefereeMessage(
        welcome=pb.Welcome(seat=0, partner=2, players=4, ruleset_json=json.dumps(rules.to_dict()))
    )


def play_request() -> pb.RefereeMessage:
    state = GameState.new(resolve_ruleset("pagat"), 1, first=3)
    for _ in range(4):
        state.apply(3)
    assert state.decision is Decision.PLAY and state.to_move == 0
    return pb.RefereeMessage(request=request_to_proto(9, state.view(0), 1000, 1000))


def test_exception_in_bot_code_becomes_an_empty_answer(capsys):
    driver = BotDriver(Buggy())
    driver.handle(welcome())
    answer = driver.handle(play_request())
    assert answer is not None and answer.request_id == 9
    assert answer.WhichOneof("action") is None, "no action: the referee strikes it as malformed"
    assert "ZeroDivisionError" in capsys.readouterr().err
    assert "play() raised" in (driver.last_error or "")


def test_strict_driver_lets_the_exception_through():
    driver = BotDriver(Buggy(), catch_errors=False)
    driver.handle(welcome())
    try:
        driver.handle(play_request())
    except ZeroDivisionError:
        return
    raise AssertionError("the exception should propagate")


def test_notices_reach_the_bot():
    bot = Buggy()
    driver = BotDriver(bot)
    driver.handle(welcome())
    driver.handle(pb.RefereeMessage(notice=pb.Notice(level=pb.Notice.STRIKE, code="timeout", message="late")))
    assert bot.notices == [("strike", "timeout")]


def test_lenient_harness_counts_defaults_for_a_buggy_bot():
    result = play_game([Buggy, Buggy], "pagat", seed=3, max_hands=1, strict=False)
    assert result.defaults == (13, 13, 13, 13), "every play was a default move"
    assert result.result.hands == 1


def test_discards_seen_stop_counting_as_placed_once_the_opponent_exchanged():
    from arena_sdk.engine import Card
    from arena_sdk.view import View

    rules = resolve_ruleset("two-player")
    state = GameState.new(rules, 9, first=0, decks={1: list(range(52))})
    state.apply(True)  # A: blind nil
    state.apply(False)  # B declines
    for _ in range(13):
        state.apply(True)  # B keeps each offered card; it sees the next go out
    before = View(rules, request_to_proto(1, _fake_to_move(state, 1), 1000, 1000))
    state.apply((Card.C2, Card.C6, Card.CT))  # A returns three, draws three unseen
    state.apply(4)  # B bids; now B plays first
    after = View(rules, request_to_proto(2, state.view(1), 1000, 1000))
    assert after.exchanged == [3, 0] and after.seen_discards
    assert not set(after.seen_discards) & after.cards_seen(), "which discards A drew is not public"
    assert set(after.seen_discards) <= after.unseen_cards()
    assert set(before.seen_discards) <= before.cards_seen()


def _fake_to_move(state: GameState, seat: int):
    """B's view while A is to exchange, as if B were asked (its seen discards all placed)."""
    import dataclasses

    view = state.view(seat)
    return dataclasses.replace(view, decision=Decision.BID, legal_actions=tuple(range(14)))


class Overruns(Bot):
    """Overruns its first decision; remembers the time each view said it had."""

    name = "overruns"

    def __init__(self) -> None:
        super().__init__()
        self.left: list[float] = []

    def bid(self, view):
        return 3

    def play(self, view):
        self.left.append(view.time_left())
        if len(self.left) == 1:
            import time

            time.sleep(0.15)  # over its 0.1 s: the referee has closed this request
        return view.legal_cards()[0]


def test_a_request_that_waited_behind_a_late_answer_counts_from_when_it_could_arrive():
    # Issue #16.3: after one overrun the next request has already waited; the
    # view must not say the full budget is left.
    def request(rid: int) -> pb.RefereeMessage:
        message = play_request()
        message.request.request_id = rid
        message.request.move_ms, message.request.bank_ms, message.request.allowed_ms = 100, 0, 100
        return message

    bot = Overruns()
    driver = BotDriver(bot)
    driver.handle(welcome())
    driver.handle(request(1))
    driver.handle(request(2), queued=True)  # it was waiting when the read returned
    assert bot.left[0] > 0.09
    assert bot.left[1] < 0.06, bot.left  # at least 50 ms of it were gone already
    driver.handle(request(3))  # read after a wait: counts from now
    assert bot.left[2] > 0.09


def test_the_docs_say_what_the_code_does():
    # Issue #16.11: an exception in bid/play is a strike (not a crash); the
    # default blind_nil declines; Welcome's seat names are a snapshot.
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "writing-a-bot.md").read_text()
    assert "ends your process" not in docs and "trails by 200" not in docs
    assert "declines (returns `False`)" in docs
    assert "not updated later" in docs

    class BadBid(Buggy):
        def bid(self, view):
            raise ValueError("no")

    driver = BotDriver(BadBid())
    driver.handle(welcome())
    state = GameState.new(resolve_ruleset("pagat"), 1, first=3)
    answer = driver.handle(pb.RefereeMessage(request=request_to_proto(1, state.view(0), 1000, 0)))
    assert answer is not None and answer.WhichOneof("action") is None  # a malformed strike, no crash
    assert Bot().blind_nil(None) is False  # type: ignore[arg-type]
