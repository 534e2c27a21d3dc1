"""The SDK under the CPU move clock (issue 23 item 9, docs/time-control.md).

The Welcome says which clock counts; under the CPU clock ``time_left()`` and
``move_time_left()`` count this process's CPU time (and the wall hard cap),
and the built-in Hard's search budget counts the same clock.
"""

from __future__ import annotations

import time

import pytest
from arena_sdk.bot import Bot, BotDriver
from arena_sdk.bots.hard import HardBot
from arena_sdk.engine import Decision, GameState, resolve_ruleset
from arena_sdk.protocol import request_to_proto, welcome_message
from arena_sdk.view import View
from arena_sdk.wire import arena_pb2 as pb

RULES = resolve_ruleset("pagat")


class Ticking:
    """A clock that moves only when told, or by ``step`` at every read."""

    def __init__(self, start: float = 100.0, step: float = 0.0) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def play_request(allowed_ms: int = 1000, move_ms: int = 500) -> pb.DecisionRequest:
    state = GameState.new(RULES, 1, first=3)
    for _ in range(4):
        state.apply(3)
    assert state.decision is Decision.PLAY and state.to_move == 0
    return request_to_proto(9, state.view(0), move_ms, allowed_ms - move_ms, allowed_ms)


def test_under_the_cpu_clock_time_left_counts_cpu_and_the_wall_hard_cap() -> None:
    wall, cpu = Ticking(), Ticking(5.0)
    view = View(RULES, play_request(), received_at=wall(), hard_cap_ms=2000, clock=wall, cpu_clock=cpu)
    wall.now += 0.9  # waited 0.9 s for a core, used no CPU
    assert view.time_left() == pytest.approx(1.0) and view.move_time_left() == pytest.approx(0.5)
    cpu.now += 0.4  # thought 0.4 s of CPU
    assert view.time_left() == pytest.approx(0.6) and view.move_time_left() == pytest.approx(0.1)
    wall.now += 1.05  # 1.95 s of wall time: the hard cap (2 s, wall) is nearer than the CPU allowance
    assert view.time_left() == pytest.approx(0.05)
    assert view.time_clock is cpu and view.time_start == pytest.approx(5.0)
    # The same view under the wall clock counts wall time.
    walled = View(RULES, play_request(), received_at=100.0, hard_cap_ms=2000, clock=lambda: 100.9)
    assert walled.time_left() == pytest.approx(0.1) and walled.time_clock() == pytest.approx(100.9)


class Burns(Bot):
    """Burns 60 ms of CPU on a play and notes what time_left() said before and after."""

    name = "burns"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[float, float]] = []

    def play(self, view):
        before = view.time_left()
        until = time.process_time() + 0.06
        while time.process_time() < until:
            pass
        self.seen.append((before, view.time_left()))
        return view.legal_cards()[0]


@pytest.mark.parametrize("clock", ["cpu", "wall"])
def test_the_welcome_sets_the_clock_views_count_by(clock: str) -> None:
    bot = Burns()
    frozen = Ticking()  # the driver's wall clock does not move: only CPU time can shrink time_left()
    driver = BotDriver(bot, clock=frozen)
    welcome = welcome_message(
        "m", 0, RULES, move_ms=500, bank_ms=500, hard_cap_ms=5000, strikes_to_forfeit=3, games=1,
        seat_names=["a", "b", "c", "d"], clock=clock,
    )  # fmt: skip
    driver.handle(pb.RefereeMessage(welcome=welcome))
    assert bot.match is not None and bot.match.clock == clock
    driver.handle(pb.RefereeMessage(request=play_request()))
    [(before, after)] = bot.seen
    if clock == "cpu":
        assert driver.last_view is not None and driver.last_view.cpu_clock is time.process_time
        assert before - after >= 0.06  # the CPU it burned
    else:
        assert before == after  # wall time did not move


def test_hards_budget_counts_the_views_clock() -> None:
    # A CPU clock that moves 1 ms a read: a 0.05 s budget stops the search after about
    # 50 reads, however long they take in wall time (a frozen wall clock would never stop it).
    cpu = Ticking(step=0.001)
    view = View(RULES, play_request(allowed_ms=10_000, move_ms=10_000), hard_cap_ms=20_000,
                clock=Ticking(), cpu_clock=cpu)  # fmt: skip
    bot = HardBot(budget_s=0.05)
    assert bot._deadline(view) == pytest.approx(view.time_start + 0.05)
    bot.play(view)
    assert bot.searched and bot.searched[-1] <= 60, bot.searched
