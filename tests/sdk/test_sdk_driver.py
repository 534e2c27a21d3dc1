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


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class Hostile(Bot):
    """Raises an exception that cannot be printed, or answers with an object that cannot be shown."""

    name = "hostile"

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def bid(self, view):
        return 3

    def play(self, view):
        if self.how == "raise":
            raise Unprintable()

        class NoRepr:
            def __repr__(self) -> str:
                raise RuntimeError("no repr either")

        return NoRepr()


def test_a_bots_unprintable_exception_or_answer_is_still_a_strike_not_a_crash(capsys):
    # The driver reports what went wrong in the bot's log and note; a bot whose
    # exception (or answer) raises when shown made that report crash the driver.
    for how, shown in (("raise", "<Unprintable that cannot be shown>"), ("answer", "<NoRepr that cannot be shown>")):
        driver = BotDriver(Hostile(how))
        driver.handle(welcome())
        answer = driver.handle(play_request())
        assert answer is not None and answer.WhichOneof("action") is None, how
        assert shown in (driver.last_error or "") or shown in answer.note, (how, driver.last_error, answer.note)


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


class FakeClock:
    """A monotonic clock that moves only when told (the driver's and the views' ``clock``)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Thinks(Bot):
    """Takes ``think[i]`` seconds (on the fake clock) over its i-th play; remembers what each view said."""

    name = "thinks"

    def __init__(self, clock: FakeClock, think: list[float]) -> None:
        super().__init__()
        self.clock = clock
        self.think = list(think)
        self.left: list[float] = []
        self.received: list[float] = []

    def bid(self, view):
        return 3

    def play(self, view):
        self.left.append(view.time_left())
        self.received.append(view.received_at)
        self.clock.advance(self.think.pop(0) if self.think else 0.0)
        return view.legal_cards()[0]


def timed_request(rid: int, allowed_ms: int = 1000) -> pb.RefereeMessage:
    message = play_request()
    message.request.request_id = rid
    message.request.move_ms, message.request.bank_ms, message.request.allowed_ms = allowed_ms, 0, allowed_ms
    return message


def hand_end() -> pb.RefereeMessage:
    return pb.RefereeMessage(hand_end=pb.HandEnd(hand_number=1, result_json="{}", scores=[0, 0], bags=[0, 0]))


def driven(think: list[float]) -> tuple[FakeClock, Thinks, BotDriver]:
    clock = FakeClock()
    bot = Thinks(clock, think)
    driver = BotDriver(bot, clock=clock)
    driver.handle(welcome())
    return clock, bot, driver


def test_a_request_right_behind_a_hand_end_gets_its_full_allowance():
    # Issue #16.3: the request came in the same read as the HandEnd before it
    # (so it is "queued"), long after our last answer.  It was stamped with
    # that answer's close, 2 s earlier: time_left said -1.0 instead of 1.0.
    clock, bot, driver = driven(think=[0.1])
    driver.handle(timed_request(1))  # read after a wait: arrived now
    clock.advance(2.0)  # the other seats play out the hand
    driver.handle(hand_end())  # waited for: arrived now
    clock.advance(0.0001)
    driver.handle(timed_request(2), queued=True)  # it was right behind the HandEnd
    assert bot.left[0] == 1.0
    assert bot.received[1] == 1002.1, "no earlier than the HandEnd it came behind"
    assert abs(bot.left[1] - (1.0 - 0.0001)) < 1e-9, bot.left


def test_a_request_that_waited_behind_an_overrun_counts_from_the_overruns_end():
    # Our answer to request 1 came 0.5 s after its 1 s; the referee closed it at
    # its deadline, struck it (a notice), and sent request 2, which waited.
    clock, bot, driver = driven(think=[1.5, 0.0])
    driver.handle(timed_request(1))
    strike = pb.RefereeMessage(notice=pb.Notice(level=pb.Notice.STRIKE, code="timeout", message="late"))
    driver.handle(strike, queued=True)  # waiting since the deadline, read at the overrun's end
    driver.handle(timed_request(2), queued=True)
    assert bot.received == [1000.0, 1001.0], "stamped at the overrun's end (the deadline), not at the read"
    assert abs(bot.left[1] - 0.5) < 1e-9, bot.left  # 0.5 s of its 1 s were gone already
    clock.advance(3.0)
    driver.handle(timed_request(3))  # read after a wait: counts from now
    assert bot.left[2] == 1.0


def test_a_queued_request_is_never_stamped_after_it_was_read():
    # An early answer closes the request at once; the next one was already
    # there (e.g. our partner had nothing to decide): it arrived by the read.
    clock, bot, driver = driven(think=[0.2, 0.0])
    driver.handle(timed_request(1))
    driver.handle(timed_request(2), queued=True, read_at=clock() + 0.0001)  # the transport's read time
    assert bot.received == [1000.0, 1000.2]
    assert bot.left[1] == 1.0


def test_stamps_of_an_earlier_game_do_not_shorten_the_next_one():
    clock, bot, driver = driven(think=[0.1])
    driver.handle(timed_request(1))
    clock.advance(5.0)  # the rest of the game is played by the others
    driver.handle(pb.RefereeMessage(game_end=pb.GameEnd(game_index=0, game_id="g0", ending="target", winner=0)))
    driver.handle(pb.RefereeMessage(game_start=pb.GameStart(game_index=1, game_id="g1", bot_seed=1)), queued=True)
    driver.handle(timed_request(2), queued=True)  # came with the GameStart, right behind the GameEnd
    assert bot.received[1] == 1005.1 and bot.left[1] == 1.0, (bot.received, bot.left)


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


def test_an_overrun_at_the_end_of_a_game_still_bounds_the_next_games_first_request():
    # The last play of game 1 ran 0.5 s over; GameEnd, GameStart and game 2's
    # first request all waited behind it: that request came after the deadline.
    clock, bot, driver = driven(think=[1.5, 0.0])
    driver.handle(timed_request(1))
    driver.handle(pb.RefereeMessage(game_end=pb.GameEnd(game_index=0, game_id="g0", ending="target")), queued=True)
    driver.handle(pb.RefereeMessage(game_start=pb.GameStart(game_index=1, game_id="g1", bot_seed=1)), queued=True)
    driver.handle(timed_request(2), queued=True)
    assert bot.received == [1000.0, 1001.0] and abs(bot.left[1] - 0.5) < 1e-9, (bot.received, bot.left)


class HandListener(Bot):
    name = "hands"

    def __init__(self) -> None:
        super().__init__()
        self.summaries: list = []

    def on_hand_end(self, summary):
        self.summaries.append(summary)


def test_a_hand_end_is_read_only_for_a_bot_that_listens():
    """HandEnd comes right before the next hand's first request: a bot without on_hand_end or
    on_trick_end does not pay for its JSON and tricks (a broken JSON would show it was read)."""
    trick = pb.Trick(leader=1, cards=["C2", "C3", "C4", "C5"], winner=0)
    message = pb.RefereeMessage(
        hand_end=pb.HandEnd(hand_number=1, result_json="{not json", tricks=[trick], scores=[1, 2], bags=[0, 0])
    )
    quiet = BotDriver(Buggy())
    quiet.handle(welcome())
    assert quiet.handle(message) is None
    listening = HandListener()
    driver = BotDriver(listening)
    driver.handle(welcome())
    message.hand_end.result_json = '{"number": 1}'
    driver.handle(message)
    (summary,) = listening.summaries
    assert summary.result == {"number": 1} and summary.scores == (1, 2)
    assert [(t.leader, [str(c) for c in t.cards], t.winner) for t in summary.tricks] == [
        (1, ["C2", "C3", "C4", "C5"], 0)
    ]
    # A hook set on the instance counts too.
    seen: list = []
    plain = Buggy()
    plain.on_hand_end = seen.append  # type: ignore[method-assign]
    third = BotDriver(plain)
    third.handle(welcome())
    third.handle(message)
    assert [s.scores for s in seen] == [(1, 2)]
