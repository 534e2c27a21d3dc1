""""How would the bot have played it?": one hand replayed with a bot in the person's seat.

The same deal (the hand's deck, dealer, scores and bags before it), the other
seats played by the same built-in bots with the same bot seeds, and a chosen
bot in the person's seat; the engine plays it out in-process through each bot's
:class:`~arena_sdk.bot.BotDriver` (the messages a bot gets over the wire, as in
:mod:`arena_sdk.testing`).  The result says what that bot bid, which cards it
played, and how the hand would have scored: the *swing* is the difference
for the person's side (its points less the other side's) between the bot's hand
and the person's.

This runs in a process of its own (CPU-bound search must not hold up the page):
``python -m arena.play.compare`` reads one job as JSON on stdin and writes the
result as JSON on stdout (:func:`main`); it imports only the SDK.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

from arena_sdk.bot import Bot, BotDriver
from arena_sdk.engine import GameState, Ruleset, seat_name, team_name, team_of
from arena_sdk.engine.cards import CARD_NAMES
from arena_sdk.engine.policy import default_action
from arena_sdk.engine.state import shuffled_deck
from arena_sdk.protocol import (
    answer_from_proto,
    game_start_message,
    request_to_proto,
    welcome_message,
)
from arena_sdk.wire import arena_pb2 as pb

#: The bots the comparison can seat, by name (the built-in tiers and the SDK's random bot).
COMPARE_BOTS = ("hard", "medium", "easy", "random")
#: Hard's worlds a move in the comparison (docs/builtin-bots.md: 100 worlds, about 29 ms of CPU).
COMPARE_HARD_WORLDS = 100
#: The clock the replayed bots are told they have (the harness enforces none).
_MOVE_MS = 1000
_BANK_MS = 30_000


def make_compare_bot(name: str) -> Bot:
    """A fresh bot for the comparison; ``ValueError`` for a name not in :data:`COMPARE_BOTS`."""
    if name == "random":
        from arena_sdk.testing import RandomBot

        return RandomBot()
    if name not in COMPARE_BOTS:
        raise ValueError(f"no comparison bot {name!r}; choose one of {', '.join(COMPARE_BOTS)}")
    from arena_sdk.bots import HardBot, make_bot

    if name == "hard":
        # A fixed number of worlds a move: deterministic (the same deal gives the same
        # answer) and about ten times faster than Hard's 0.35 s budget (docs/builtin-bots.md).
        return HardBot(worlds=COMPARE_HARD_WORLDS)
    return make_bot(name)


@dataclasses.dataclass(frozen=True)
class HandSetup:
    """Where a hand started: enough to deal it again exactly.  Plain data (it crosses processes)."""

    rules: dict[str, Any]
    """The ruleset object (``Ruleset.to_dict()``)."""
    deal_seed: str
    hand_number: int
    first: int
    """The dealer (four players) or the first player (two players) of the hand."""
    scores: tuple[int, int]
    bags: tuple[int, int]
    bot_seeds: tuple[int, ...]
    """Each seat's bot seed in the game."""


@dataclasses.dataclass(frozen=True)
class SeatPlay:
    """What one seat did in a hand and how the hand scored for its side."""

    bid: int
    blind: bool
    cards: tuple[str, ...]
    """The cards it played, in order."""
    tricks: int
    side_points: int
    """Its side's points in the hand."""
    other_points: int
    """The other side's points in the hand."""

    @property
    def margin(self) -> int:
        return self.side_points - self.other_points


def seat_play(players: int, seat: int, result: dict[str, Any], tricks: Sequence[tuple[int, Sequence[str]]]) -> SeatPlay:
    """A seat's :class:`SeatPlay` from a hand's result (``hand_result_to_json``) and its tricks.

    ``tricks``: ``(leader, cards in play order)`` per trick.
    """
    me = seat_name(players, seat)
    teams = list(result["teams"].values())
    side = team_of(players, seat)
    cards = tuple(cs[(seat - leader) % players] for leader, cs in tricks if len(cs) == players)
    return SeatPlay(
        bid=int(result["bids"][me]),
        blind=me in result.get("blind", []),
        cards=cards,
        tricks=int(result["tricks"][me]),
        side_points=int(teams[side]["points"]),
        other_points=int(teams[1 - side]["points"]),
    )


def team_breakdown(players: int, result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each side's score breakdown of a hand (``hand_result_to_json``'s ``teams``), as the page shows it."""
    teams = []
    for t in range(2):
        score = result["teams"][team_name(players, t)]
        teams.append(
            {
                "name": team_name(players, t),
                "contract": score["contract"],
                "tricks": score["counted_tricks"],
                "made": score["made"],
                "contract_points": score["contract_points"],
                "bags": score["bags"],
                "bag_points": score["bag_points"],
                "nil": [
                    {"seat": n["seat"], "kind": n["kind"], "made": n["made"], "points": n["points"]}
                    for n in score["nil_results"]
                ],
                "penalty_points": score["penalty_points"],
                "points": score["points"],
                "score_before": score["score_before"],
                "score_after": score["score_after"],
                "bags_before": score["bags_before"],
                "bags_after": score["bags_after"],
            }
        )
    return teams


def replay_hand(setup: HandSetup, seat: int, bots: Sequence[Callable[[], Bot]]) -> SeatPlay:
    """Play the hand of ``setup`` again with ``bots[s]()`` at each seat; what ``seat`` did.

    The deck, dealer, scores and bags are the hand's; each bot is reseeded with
    its seat's bot seed of the game.  The hand is numbered as in the game (so
    the two-player exchange draws the same random discards).
    """
    rules = Ruleset.from_dict(setup.rules)
    result, tricks = replay_hand_result(setup, bots)
    return seat_play(rules.players, seat, result, [(leader, cards) for leader, cards, _ in tricks])


def replay_hand_result(
    setup: HandSetup, bots: Sequence[Callable[[], Bot]]
) -> tuple[dict[str, Any], list[tuple[int, list[str], int]]]:
    """:func:`replay_hand`'s whole hand: its result (``hand_result_to_json``) and its tricks
    ``(leader, cards in play order, winner)``."""
    rules = Ruleset.from_dict(setup.rules)
    n = rules.players
    k = setup.hand_number
    one_hand = dataclasses.replace(rules, max_hands=1)
    deck = shuffled_deck(setup.deal_seed, k)
    # Hand k's deck under both numbers: two players draw from it when the hand starts (as
    # hand 1), four are dealt it when first looked at (by then numbered k, below).
    state = GameState.new(
        one_hand, setup.deal_seed, first=setup.first, scores=setup.scores, bags=setup.bags, decks={1: deck, k: deck}
    )
    state.hand_number = k  # as in the game: the views say hand k, the exchange draws as it did
    drivers = [BotDriver(make(), catch_errors=True) for make in bots]
    for s, driver in enumerate(drivers):
        driver.reproduce_hints = False
        welcome = welcome_message(
            "compare", s, rules, move_ms=_MOVE_MS, bank_ms=_BANK_MS, hard_cap_ms=_MOVE_MS + _BANK_MS,
            strikes_to_forfeit=3, games=1, seat_names=[""] * n,
        )  # fmt: skip
        driver.handle(pb.RefereeMessage(welcome=welcome))
        driver.handle(game_start_message(0, "compare", setup.bot_seeds[s], setup.first, setup.scores, setup.bags))
    request_id = 0
    while not state.is_over:
        s, kind = state.to_move, state.decision
        assert s is not None and kind is not None
        request_id += 1
        answer = drivers[s].handle(pb.RefereeMessage(request=request_to_proto(request_id, state.view(s), _MOVE_MS, _BANK_MS)))
        try:
            state.apply(answer_from_proto(kind, answer) if answer is not None else None)
        except Exception:  # a bot's bad answer: the referee's default move, as in the arena
            state.apply(default_action(state))
    hand = state.hand_results[0]
    from arena_sdk.engine.record import hand_result_to_json

    result = hand_result_to_json(n, hand)
    return result, [(t.leader, [CARD_NAMES[c] for c in t.cards], t.winner) for t in hand.played]


def compare_job(setup: HandSetup, seat: int, bot: str, others: Sequence[str]) -> dict[str, Any]:
    """The worker's entry point: ``bot`` at ``seat``, ``others[s]`` (bot names) elsewhere.

    Returns the :class:`SeatPlay` as a dict (plain data back across the process).
    """
    names = [bot if s == seat else others[s] for s in range(len(others))]
    n = len(names)
    result, tricks = replay_hand_result(setup, [lambda name=name: make_compare_bot(name) for name in names])
    played = seat_play(n, seat, result, [(leader, cards) for leader, cards, _ in tricks])
    seats = [seat_name(n, s) for s in range(n)]
    return {
        **dataclasses.asdict(played),
        "margin": played.margin,
        # The whole replayed hand.  It is asked once the game's own hand is over: with four players
        # its 52 cards were all played there; with two, each card was played or went to the
        # discards of a hand that is over.  Nothing here is a card still held by another seat.
        "bids": [result["bids"][name] for name in seats],
        "hand_tricks": [{"leader": leader, "cards": cards, "winner": winner} for leader, cards, winner in tricks],
        "teams": team_breakdown(n, result),
    }


def result_json(text: str) -> dict[str, Any]:
    """A HandEnd's ``result_json`` as a dict (the referee's own text; parsed, not trusted further)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("a hand's result is not an object")
    return data


def job_from_json(job: dict[str, Any]) -> dict[str, Any]:
    """The worker's side: one comparison job (as :func:`arena.play.table.run_comparison` sends it) done."""
    raw = job["setup"]
    setup = HandSetup(**{**raw, "scores": tuple(raw["scores"]), "bags": tuple(raw["bags"]),
                         "bot_seeds": tuple(raw["bot_seeds"])})  # fmt: skip
    return compare_job(setup, int(job["seat"]), str(job["bot"]), [str(b) for b in job["others"]])


def main() -> int:
    """``python -m arena.play.compare``: one job (JSON on stdin) in, its :func:`compare_job` result out."""
    from arena.play.worker import worker_main

    return worker_main(job_from_json)


if __name__ == "__main__":
    raise SystemExit(main())
