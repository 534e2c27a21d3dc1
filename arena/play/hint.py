"""A hint, when the person asks: Hard's choice for their open decision, with its reason in a line.

Hard is asked exactly what the person's seat was asked (the referee's own
request, the person's view: their cards and the public play, nothing else),
with the comparison's fixed budget (:data:`arena.play.compare.COMPARE_HARD_WORLDS`
sampled worlds a decision, seeded by the person's seat's bot seed: the same
decision gets the same hint).  Its search is watched (:class:`ExplainingHard`)
so the reason can say what it found: how a card or a bid fared in the sampled
deals against the rule-of-thumb choice.  The reason names only the person's
own cards.

It runs in a worker process (``python -m arena.play.hint``,
:mod:`arena.play.worker`): the search is CPU-bound.
"""

from __future__ import annotations

import base64
import contextlib
import statistics
from collections.abc import Callable, Iterator
from typing import Any

import arena_sdk.bots.hard as hard_search
from arena_sdk.bot import BotDriver
from arena_sdk.bots import HardBot
from arena_sdk.bots.medium import beats, estimate_tricks
from arena_sdk.engine import Card, Decision, Ruleset
from arena_sdk.protocol import (
    KIND_FROM_PROTO,
    action_text,
    answer_from_proto,
    game_start_message,
    welcome_message,
)
from arena_sdk.view import View
from arena_sdk.wire import arena_pb2 as pb

from arena.play.compare import COMPARE_HARD_WORLDS
from arena.play.words import SUIT_NAMES, card_words, describe

#: The move time Hard is told it has: long enough that only the worlds bound its search.
_MOVE_MS = 20_000


@contextlib.contextmanager
def _watching(name: str, seen: dict[str, Any]) -> Iterator[None]:
    """While inside, Hard's module function ``name`` (its final choice) also records its arguments.

    Hard keeps its search's figures in local variables and hands them to this
    one function to choose: watching it is how the reason learns them without
    a second copy of the search.  The worker runs one job, so nothing else uses
    the module meanwhile.
    """
    original: Callable[..., Any] = getattr(hard_search, name)

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen["args"] = args
        return original(*args, **kwargs)

    setattr(hard_search, name, watched)
    try:
        yield
    finally:
        setattr(hard_search, name, original)


class ExplainingHard(HardBot):
    """Hard with a fixed number of worlds, keeping what its last search found (for the reason)."""

    def __init__(self, worlds: int = COMPARE_HARD_WORLDS) -> None:
        super().__init__(worlds=worlds)
        self.found: dict[str, Any] = {}
        self.last_view: View | None = None

    def _search_play(self, view: View, legal: list[Card]) -> Card | None:
        self.found = {}
        with _watching("_best", self.found):
            return super()._search_play(view, legal)

    def _search_bid(self, view: View, base: int) -> int:
        self.found = {"base": base}
        with _watching("_best_bid", self.found):
            return super()._search_bid(view, base)

    def play(self, view: View) -> Card:
        self.last_view = view
        return super().play(view)

    def bid(self, view: View) -> int:
        self.last_view = view
        return super().bid(view)


def _tactic(view: View, card: Card) -> str:
    """What the card does in the trick, in a few words."""
    text = str(card)
    higher_out = [c for c in view.unseen_cards() if c.suit == card.suit and c > card]
    if not view.current_trick:
        if not higher_out:
            return f"lead the {card_words(text)}: it is the highest {SUIT_NAMES[text[0]]} left"
        return f"lead the {card_words(text)}"
    win = view.winning_play()
    assert win is not None
    last = len(view.current_trick) == view.players - 1
    if beats(card, win[1]):
        led = view.led_suit
        verb = "trump" if card.suit != led else "win"
        if last:
            return f"{verb} the trick with the {card_words(text)}"
        safe = "" if higher_out or card.suit != led else ": no higher one is left"
        return f"{verb} the trick so far with the {card_words(text)}{safe}"
    if view.partner is not None and win[0] == view.partner:
        return f"your partner is winning the trick: play the {card_words(text)}"
    if card.suit == view.led_suit:
        return f"the trick cannot be won cheaply: play low, the {card_words(text)}"
    return f"discard the {card_words(text)}"


def play_reason(view: View, card: Card, found: dict[str, Any]) -> str:
    """Why Hard plays ``card``: what it does in the trick and how it fared in the sampled deals."""
    tactic = _tactic(view, card)
    if len(view.legal_cards()) == 1:
        return f"{tactic}: it is your only legal card."
    args = found.get("args")
    if not args:
        return f"{tactic} (the rule-of-thumb card: the unseen cards could not be sampled)."
    prior, diffs = int(args[0]), args[1]
    means = {c: statistics.fmean(d) for c, d in diffs.items() if d}
    worlds = max((len(d) for d in diffs.values()), default=0)
    if int(card) != prior:
        gain = means.get(int(card), 0.0)
        return (
            f"{tactic}: over {worlds} sampled deals of the unseen cards it scores {gain:.1f} points "
            f"a deal more than the {card_words(str(Card(prior)))}."
        )
    if not means:
        return f"{tactic}."
    rival = max(means, key=lambda c: means[c])
    if means[rival] > 0:
        return (
            f"{tactic}: over {worlds} sampled deals no other card did clearly better (the closest, the "
            f"{card_words(str(Card(rival)))}, {means[rival]:.1f} points a deal more: within the noise)."
        )
    return (
        f"{tactic}: over {worlds} sampled deals every other card scored less (the next best, the "
        f"{card_words(str(Card(rival)))}, {-means[rival]:.1f} points a deal less)."
    )


def bid_reason(view: View, bid: int, found: dict[str, Any]) -> str:
    """Why Hard bids ``bid``: the hand's trick count, and how the bids fared in the sampled deals."""
    count = estimate_tricks(view.hand, view.players)
    words = "nil" if bid == 0 else str(bid)
    start = f"Bid {words}: your hand counts about {count:.1f} tricks on its own"
    args = found.get("args")
    if not args:
        return start + "."
    values: dict[int, list[float]] = args[1]
    means = {b: statistics.fmean(v) for b, v in values.items() if v}
    worlds = max((len(v) for v in values.values()), default=0)
    others = [b for b in sorted(means) if b != bid]
    if bid not in means or not others:
        return start + "."
    compared = ", ".join(f"{'nil' if b == 0 else b}: {means[b]:+.0f}" for b in others)
    return (
        f"{start}; over {worlds} sampled deals a bid of {words} leaves your side {means[bid]:+.0f} points "
        f"against the other side on average ({compared})."
    )


def other_reason(kind: Decision, text: str, players: int) -> str:
    """The decisions Hard takes by rule (Medium's): blind nil, the draw, the exchange."""
    what = describe(kind, text)
    if kind is Decision.BLIND_NIL:
        if players == 2:
            return f"Hard chooses {what}: with two players the opponent sees it coming (it is rarely made)."
        why = "far behind, with the other side close to winning" if text == "true" else (
            "it keeps blind nil for when it is far behind and the other side is close to winning"
        )
        return f"Hard chooses {what}: {why}."
    if kind is Decision.DRAW:
        return f"Hard chooses {what}: it keeps spades and cards from the jack up."
    return f"Hard chooses {what}: it gives back its highest cards, which could take tricks."


def hint_job(job: dict[str, Any]) -> dict[str, Any]:
    """The worker's side: Hard's answer to the person's request, and its reason."""
    rules = Ruleset.from_dict(job["rules"])
    request = pb.DecisionRequest.FromString(base64.b64decode(job["request"]))
    request.move_ms, request.bank_ms, request.allowed_ms = _MOVE_MS, 0, _MOVE_MS
    seat = int(job["seat"])
    bot = ExplainingHard(int(job.get("worlds", COMPARE_HARD_WORLDS)))
    driver = BotDriver(bot, catch_errors=True)
    driver.reproduce_hints = False
    welcome = welcome_message(
        "hint", seat, rules, move_ms=_MOVE_MS, bank_ms=0, hard_cap_ms=_MOVE_MS, strikes_to_forfeit=3,
        games=1, seat_names=[""] * rules.players,
    )  # fmt: skip
    driver.handle(pb.RefereeMessage(welcome=welcome))
    view = request.view
    driver.handle(game_start_message(0, "hint", int(job["bot_seed"]), view.first, view.scores, view.bags))
    answer = driver.handle(pb.RefereeMessage(request=request))
    kind = KIND_FROM_PROTO[request.kind]
    if answer is None:
        raise RuntimeError("Hard gave no answer")
    action = answer_from_proto(kind, answer)
    text = action_text(kind, action)
    if kind is Decision.PLAY and bot.last_view is not None:
        reason = play_reason(bot.last_view, Card(int(action)), bot.found)
    elif kind is Decision.BID and bot.last_view is not None:
        reason = bid_reason(bot.last_view, int(action), bot.found)
    else:
        reason = other_reason(kind, text, rules.players)
    return {"action": text, "kind": kind.value, "reason": reason[:400]}


def main() -> int:
    """``python -m arena.play.hint``: one job (JSON on stdin) in, :func:`hint_job`'s answer out."""
    from arena.play.worker import worker_main

    return worker_main(hint_job)


if __name__ == "__main__":
    raise SystemExit(main())
