"""SDK bots as the other seats of a one-seat environment, one decision at a time.

Each :class:`BotSeat` feeds its bot the referee's messages (``Welcome``,
``GameStart``, ``DecisionRequest``, ``HandEnd``, ``GameEnd``) through the
same :class:`~arena_sdk.bot.BotDriver` the gRPC client and the local harness
use, so a bot plays here exactly as it would against the referee (no clock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena_sdk.bot import Bot, BotDriver
from arena_sdk.engine import GameState, MalformedInputError, Ruleset, RulesError, seat_name
from arena_sdk.engine.policy import bot_seed
from arena_sdk.protocol import (
    answer_from_proto,
    game_end_message,
    game_start_message,
    hand_end_message,
    request_to_proto,
    welcome_message,
)
from arena_sdk.testing import DEFAULT_BANK_MS, DEFAULT_MOVE_MS, STRIKES_TO_FORFEIT, BotArgument
from arena_sdk.testing import _copy_bot, _make_bot  # the harness's own rules for making seat bots
from arena_sdk.wire import arena_pb2 as pb


class BotSeatError(RuntimeError):
    """A bot in the environment answered something malformed or illegal."""


class BotSeat:
    """One seat played by an SDK bot."""

    def __init__(self, bot: Bot, seat: int, rules: Ruleset, names: Sequence[str], match_id: str) -> None:
        self.bot = bot
        self.seat = seat
        self.rules = rules
        self.driver = BotDriver(bot, catch_errors=False)  # a bug in an opponent is shown, not hidden
        self.driver.reproduce_hints = False  # no record to reproduce from
        self.request_id = 0
        welcome = welcome_message(
            match_id, seat, rules, move_ms=DEFAULT_MOVE_MS, bank_ms=DEFAULT_BANK_MS,
            hard_cap_ms=DEFAULT_MOVE_MS + DEFAULT_BANK_MS, strikes_to_forfeit=STRIKES_TO_FORFEIT,
            games=0, seat_names=list(names),
        )  # fmt: skip
        self.driver.handle(pb.RefereeMessage(welcome=welcome))

    def start_game(self, index: int, game_id: str, state: GameState) -> None:
        """Tell the bot a game starts (its ``rng`` is reseeded from the deal seed, as the referee does)."""
        seed = bot_seed(str(state.seed), self.seat)
        self.driver.handle(game_start_message(index, game_id, seed, state.first, state.scores, state.bags))

    def play(self, state: GameState) -> None:
        """Ask the bot for the decision due at its seat and apply it to ``state``."""
        kind = state.decision
        assert kind is not None and state.to_move == self.seat
        self.request_id += 1
        request = request_to_proto(self.request_id, state.view(self.seat), DEFAULT_MOVE_MS, DEFAULT_BANK_MS)
        answer = self.driver.handle(pb.RefereeMessage(request=request))
        where = f"bot {self.bot.name!r} at seat {seat_name(self.rules.players, self.seat)}"
        if answer is None:
            raise BotSeatError(f"{where} gave no answer to a {kind.value} decision")
        try:
            state.apply(answer_from_proto(kind, answer))  # the state is unchanged when this raises
        except (MalformedInputError, RulesError) as exc:
            raise BotSeatError(f"{where} gave a bad answer to a {kind.value} decision: {exc}") from exc

    def hand_end(self, state: GameState) -> None:
        """Tell the bot the last hand's result."""
        hand = state.hand_results[-1]
        self.driver.handle(hand_end_message(hand, hand.played, self.rules.players))

    def game_end(self, index: int, game_id: str, state: GameState) -> None:
        """Tell the bot the game is over."""
        r = state.result
        assert r is not None
        self.driver.handle(game_end_message(index, game_id, r.ending, r.winner, r.scores, r.bags))


def seat_bots(
    others: BotArgument | Sequence[BotArgument] | Mapping[int, BotArgument], seat: int, players: int
) -> dict[int, Bot]:
    """One bot object per seat other than ``seat``.

    ``others`` is one bot for every other seat (an instance is copied for each
    seat; a class, factory or name ``"easy"``, ``"medium"``, ``"hard"``,
    ``"random"`` makes one per seat), a sequence with one per other seat in
    seat order, or a mapping from seat index to bot.
    """
    seats = [s for s in range(players) if s != seat]
    if isinstance(others, Mapping):
        if sorted(others) != seats:
            raise ValueError(f"others must name seats {seats} exactly, got {sorted(others)}")
        specs = [others[s] for s in seats]
    elif isinstance(others, Sequence) and not isinstance(others, str):
        if len(others) != len(seats):
            raise ValueError(f"others must give {len(seats)} bots (seats {seats}), got {len(others)}")
        specs = list(others)
    else:
        specs = [others] * len(seats)
    bots: dict[int, Bot] = {}
    for s, spec in zip(seats, specs, strict=True):
        bot = _make_bot(spec)
        if any(bot is b for b in bots.values()):
            bot = _copy_bot(bot)
        bots[s] = bot
    return bots
