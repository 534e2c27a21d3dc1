"""RemoteSeat stamps an answer when it is received, on the match loop's clock (issue #16.1).

The match loop judges an answer by ``SeatReply.received_at``; the loop's own
tests use a scripted seat.  Here the real :class:`RemoteSeat` sits between the
loop and a bot, with one manual clock for both and no network: each answer is
received 15 ms after its request, and the loop resumes only after 100 ms more
of other work in the same step.  Judged at resumption every decision would be
late (0.1 s allowed); judged on receipt each took 15 ms.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from referee_support import arun, check_record, make_spec

from arena.match import ManualClock, TimeControl
from arena.match.loop import play_game
from arena.referee.session import RemoteSeat
from arena_sdk import Bot
from arena_sdk.bot import BotDriver
from arena_sdk.wire import arena_pb2 as pb

THINK_S = 0.015  # under LAG_TICK_S: no timer tick runs (or would be late) before the answer
OTHER_WORK_S = 0.1


class First(Bot):
    name = "first"

    def bid(self, view):
        return 3

    def play(self, view):
        return view.legal_cards()[0]


def seated(seat: int, clock: ManualClock, rules_json: str) -> RemoteSeat:
    """A RemoteSeat on ``clock`` whose "stream" hands each request to an SDK driver; the answer
    comes back THINK_S later, and the loop resumes OTHER_WORK_S after that."""
    remote = RemoteSeat(seat, "m1", clock=clock.now)
    driver = BotDriver(First())
    welcome = pb.Welcome(seat=seat, players=4, partner=(seat + 2) % 4, ruleset_json=rules_json)
    driver.handle(pb.RefereeMessage(welcome=welcome))

    def deliver(answer: pb.Answer) -> None:
        clock.advance(THINK_S)
        remote.receive(pb.BotMessage(answer=answer))
        clock.advance(OTHER_WORK_S)  # e.g. other seats' messages handled in the same loop step

    async def write(message: pb.RefereeMessage) -> None:
        answer = driver.handle(message)
        if answer is not None:
            asyncio.get_running_loop().call_soon(deliver, answer)

    remote.attach(write, "first", "1")
    return remote


def test_an_answer_is_judged_by_when_the_seat_received_it() -> None:
    tc = TimeControl(move_s=0.1, bank_s=0.0, hard_cap_s=0.1)
    spec = make_spec(preset="pagat", max_hands=1, tc=tc)
    clock = ManualClock()
    rules_json = json.dumps(spec.rules.to_dict())
    seats = [seated(s, clock, rules_json) for s in range(4)]

    game = arun(play_game(spec, 0, seats, clock), 20)
    record = check_record(game.record)
    actions = [a for h in record["hands"] for a in h["actions"]]
    assert len(actions) == 4 + 52
    assert record["strikes"] == {"N": 0, "E": 0, "S": 0, "W": 0}
    assert {a["ms"] for a in actions} == {THINK_S * 1000}, "charged from request to receipt, on the loop's clock"
    assert not [a for a in actions if "lag_ms" in a]
    assert record["result"]["ending"] == "max_hands"


def test_a_reply_carries_its_receipt_time() -> None:
    from arena.match.seat import DecisionPrompt
    from arena_sdk.engine import GameState

    async def scenario() -> tuple[float, float]:
        clock = ManualClock(start=50.0)
        seat = seated(0, clock, json.dumps(make_spec(preset="pagat").rules.to_dict()))
        state = GameState.new(make_spec(preset="pagat").rules, 1, first=3)
        prompt = DecisionPrompt(1, state.view(0), 1000, 0, 1000)
        reply = await seat.decide(prompt, 1.0)
        return reply.received_at, clock.now()  # type: ignore[return-value]

    received, resumed = arun(scenario(), 10)
    assert received == 50.0 + THINK_S and resumed == 50.0 + THINK_S + OTHER_WORK_S


def test_a_stall_between_decisions_is_not_counted_in_the_next_one() -> None:
    """The seat's tick runs on from one decision to the next; a stall of the referee while no
    decision was open (here 80 ms, with the tick due 20 ms in) is no decision's business."""
    import time

    from arena.match.seat import DecisionPrompt
    from arena_sdk.engine import GameState

    rules = make_spec(preset="pagat").rules

    async def scenario() -> list[tuple[float, float]]:
        seat = RemoteSeat(0, "m1")  # the real clock: the event loop's
        loop = asyncio.get_running_loop()
        delays = iter([0.0, 0.03])

        async def write(message: pb.RefereeMessage) -> None:
            request = message.request
            answer = pb.BotMessage()
            answer.answer.request_id = request.request_id
            answer.answer.bid = 3
            loop.call_later(next(delays), seat.receive, answer)

        seat.attach(write, "bidder", "1")
        view = GameState.new(rules, 1, first=3).view(0)
        replies = []
        for rid in (1, 2):
            started = time.monotonic()
            reply = await seat.decide(DecisionPrompt(rid, view, 1000, 0, 1000), 1.0)
            assert reply.received_at is not None
            replies.append((reply.received_at - started, reply.platform_lag_s))
            if rid == 1:
                time.sleep(0.15)  # the referee busy between decisions (records, other seats)
        return replies

    (first_s, first_lag), (second_s, second_lag) = arun(scenario(), 10)
    # Counted from when the tick was due (20 ms in), the stall would be ~130 ms of lag.
    assert first_lag < 0.05 and second_lag < 0.05, "a stall before the decision opened was credited to it"
    assert 0.025 < second_s < 0.5


def test_a_decision_shorter_than_the_running_tick_still_expires_on_time(monkeypatch) -> None:
    """A tick left running by the previous decision is replaced when it would come after the
    next decision's deadline (ticks every 0.5 s here, so a reused one would be far too late)."""
    import time

    from arena.referee import session

    monkeypatch.setattr(session, "LAG_TICK_S", 0.5)

    from arena.match.seat import DecisionPrompt, DecisionTimeout
    from arena_sdk.engine import GameState

    rules = make_spec(preset="pagat").rules

    async def scenario() -> float:
        seat = RemoteSeat(0, "m1")
        loop = asyncio.get_running_loop()
        answers = iter([True, False])  # the first request is answered at once, the second never

        async def write(message: pb.RefereeMessage) -> None:
            if next(answers):
                answer = pb.BotMessage()
                answer.answer.request_id = message.request.request_id
                answer.answer.bid = 3
                loop.call_soon(seat.receive, answer)

        seat.attach(write, "bidder", "1")
        view = GameState.new(rules, 1, first=3).view(0)
        await seat.decide(DecisionPrompt(1, view, 1000, 0, 1000), 1.0)  # leaves its tick running (0.5 s)
        started = time.monotonic()
        with pytest.raises(DecisionTimeout):
            await seat.decide(DecisionPrompt(2, view, 3, 0, 3), 0.003)
        return time.monotonic() - started

    waited = arun(scenario(), 10)
    assert 0.003 <= waited < 0.25, f"expired after {waited * 1000:.1f} ms, not at its 3 ms deadline"
