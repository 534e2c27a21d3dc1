"""``time_left()`` keeps the transport's share in hand (issue 23 item 7).

The referee's clock for a decision starts before it writes the request and
stops when it has read the answer; the SDK sees only its own read and write.
Before the fix ``time_left()`` at the first moment of a decision was the whole
allowance (less a few µs): a bot that spent it to the last millisecond was
late by the transport time.  Over gRPC the SDK now counts from
``TRANSPORT_MARGIN_S`` before its read; the in-process harness, which has no
transport, does not.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from arena.match import MatchSpec, TimeControl, game_seeds
from arena.referee.host import host_match
from arena.referee.server import RefereeServer
from arena.referee.session import RemoteSeat
from arena_sdk.bot import TRANSPORT_MARGIN_S, Bot, BotDriver
from arena_sdk.client import join_match
from arena_sdk.engine import resolve_ruleset

from test_sdk_driver import FakeClock, timed_request, welcome


class FirstMoment(Bot):
    """Notes, at the first moment of each decision, what the view says is left."""

    name = "first-moment"

    def __init__(self) -> None:
        super().__init__()
        self.short: list[tuple[float, float]] = []  # (allowed - time_left, move - move_time_left), in s

    def note(self, view) -> None:
        left, move_left = view.time_left(), view.move_time_left()
        self.short.append((view.allowed_ms / 1000 - left, min(view.move_ms, view.allowed_ms) / 1000 - move_left))

    def bid(self, view) -> int:
        self.note(view)
        return 3

    def play(self, view):
        self.note(view)
        return view.legal_cards()[0]


def test_over_grpc_time_left_starts_below_the_allowance_by_the_margin() -> None:
    spec = MatchSpec(
        match_id="margin", rules=resolve_ruleset("two-player", {"max_hands": "1"}),
        deal_seeds=tuple(game_seeds("margin", 1)), time_control=TimeControl(move_s=1.0, bank_s=5.0, hard_cap_s=10.0),
    )  # fmt: skip
    bots = [FirstMoment(), FirstMoment()]
    folder = Path(tempfile.mkdtemp(prefix="arena-margin-", dir="/tmp"))  # short: Unix socket paths are limited

    async def scenario():
        server = await RefereeServer().start([f"unix:{folder / 'r.sock'}"])
        seats = [RemoteSeat(s, spec.match_id) for s in range(2)]
        try:
            hosting = asyncio.create_task(
                host_match(server, spec, [None, None], server.addresses[0], seats=seats, start_timeout=30)
            )
            await asyncio.sleep(0)  # the match is open for joining
            await asyncio.gather(*(join_match(b, server.addresses[0], s.token) for b, s in zip(bots, seats)))
            return await hosting
        finally:
            await server.stop(0.5)

    try:
        hosted = asyncio.run(asyncio.wait_for(scenario(), 120))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    game = hosted.outcome.games[0]
    assert game.ending in ("max_hands", "target"), (game.ending, game.forfeit)
    for bot in bots:
        assert len(bot.short) >= 13, "it bid and played its cards"
        for short_total, short_move in bot.short:
            assert short_total >= TRANSPORT_MARGIN_S and short_move >= TRANSPORT_MARGIN_S, bot.short


def test_the_margin_is_exact_at_the_first_moment_and_the_harness_keeps_none() -> None:
    clock = FakeClock()
    for margin, expected in ((TRANSPORT_MARGIN_S, 1.0 - TRANSPORT_MARGIN_S), (0.0, 1.0)):
        bot = FirstMoment()
        driver = BotDriver(bot, clock=clock, transport_margin_s=margin)
        driver.handle(welcome())
        driver.handle(timed_request(1, allowed_ms=1000))
        assert abs(bot.short[0][0] - (1.0 - expected)) < 1e-9, bot.short
    assert BotDriver(FirstMoment()).transport_margin_s == 0.0  # the in-process harness: no transport
    assert 0.001 <= TRANSPORT_MARGIN_S <= 0.02, "a few ms: the transport's share, not a bot's budget"
