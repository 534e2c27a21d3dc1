"""What the page is sent: a seat's view, a hand's breakdown, the public view, as plain JSON.

Everything here is built from the protocol's messages, so the person's page
holds exactly what the seat may know (:func:`seat_view_json`).  A spectator's
feed holds less: :func:`public_view_json` keeps only what every seat sees
(bids, cards played, tricks, scores), never a hand, an offered card or a
discard.  Names a bot chose are sent as data and put into the page with
``textContent`` (the script never builds HTML from them).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from arena_sdk.bots.medium import estimate_tricks
from arena_sdk.engine import Ruleset, seat_name
from arena_sdk.protocol import cards_from_text
from arena_sdk.wire import arena_pb2 as pb

from arena.play.compare import seat_play, team_breakdown
from arena.play.seat import HandEnd

#: The longest bot name the page shows.
NAME_CHARS = 40
#: A game of at most this many hands is described by its hands first (a ladder's short games).
SHORT_GAME_HANDS = 10
#: The rules' hand cap when none is set (docs/rules.md): not worth mentioning.
DEFAULT_MAX_HANDS = 200


def clean_name(name: str) -> str:
    """A bot's name for the page: control, format and bidirectional characters dropped, capped.

    (The page escapes it anyway: it is set with ``textContent``.)
    """
    return "".join(ch for ch in str(name) if unicodedata.category(ch)[0] != "C")[:NAME_CHARS]


def _trick_json(trick: pb.Trick) -> dict[str, Any]:
    return {"leader": trick.leader, "cards": list(trick.cards), "winner": trick.winner}


def public_view_json(view: pb.SeatView) -> dict[str, Any]:
    """The public part of a view: what any seat, or a spectator, may see."""
    return {
        "hand_number": view.hand_number,
        "first": view.first,
        "bids": list(view.bids),
        "blind": list(view.blind),
        "tricks_won": list(view.tricks_won),
        "current_trick": [{"seat": p.seat, "card": p.card} for p in view.current_trick],
        "tricks": [_trick_json(t) for t in view.tricks],
        "spades_broken": view.spades_broken,
        "scores": list(view.scores),
        "bags": list(view.bags),
        "exchanged": list(view.exchanged),
    }


def seat_view_json(view: pb.SeatView) -> dict[str, Any]:
    """The whole of a seat's view: the public part and the seat's own cards."""
    return {
        **public_view_json(view),
        "seat": view.seat,
        "hand": [] if view.hand_hidden else list(view.hand),
        "hand_hidden": view.hand_hidden,
        "offered_card": view.offered_card,
        "seen_discards": list(view.seen_discards),
    }


def hand_json(players: int, seat: int, hand: HandEnd) -> dict[str, Any]:
    """A finished hand: bids, tricks, each side's score breakdown (from the referee's HandEnd), and its
    tricks in play order (every card of a finished hand has been played: nothing hidden)."""
    result = hand.result
    names = [seat_name(players, s) for s in range(players)]
    you = seat_play(players, seat, result, hand.tricks)
    winners = hand.winners or (-1,) * len(hand.tricks)
    played = [{"leader": leader, "cards": cards, "winner": w} for (leader, cards), w in zip(hand.tricks, winners)]
    return {
        "number": hand.number,
        "bids": [result["bids"][n] for n in names],
        "blind": [n in result.get("blind", []) for n in names],
        "tricks": [result["tricks"][n] for n in names],
        "teams": team_breakdown(players, result),
        "tricks_played": played,
        "last_trick": played[-1] if played else None,
        "you": {"bid": you.bid, "blind": you.blind, "cards": list(you.cards), "tricks": you.tricks,
                "side_points": you.side_points, "other_points": you.other_points},
    }  # fmt: skip


def table_view_json(view: pb.SeatView, hands: list[HandEnd], just_played: tuple[int, str] | None) -> dict[str, Any]:
    """The person's view as it stands now, not as it stood at their last decision.

    The seat's view is the one of the last request; since then the person may
    have played a card (``just_played``) and the hand may have ended (its
    HandEnd is the last of ``hands``): the card leaves the hand for the table,
    and a finished hand shows all its tricks, its tricks won and no cards left.
    Only cards the person holds or that were played: nothing else is added.
    """
    shown = seat_view_json(view)
    last = hands[-1] if hands else None
    if last is not None and last.number == view.hand_number:
        names = [seat_name(len(view.bids), s) for s in range(len(view.bids))]
        winners = last.winners or (-1,) * len(last.tricks)
        shown.update(
            hand=[], current_trick=[], hand_over=True,
            tricks=[{"leader": leader, "cards": cards, "winner": w} for (leader, cards), w in zip(last.tricks, winners)],
            tricks_won=[int(last.result["tricks"][n]) for n in names],
            bids=[int(last.result["bids"][n]) for n in names],
        )  # fmt: skip
        return shown
    shown["hand_over"] = False
    if just_played is not None and just_played[1] in shown["hand"]:
        seat, card = just_played
        shown["hand"] = [c for c in shown["hand"] if c != card]
        shown["current_trick"] = [*shown["current_trick"], {"seat": seat, "card": card}]
    return shown


def totals_json(view: pb.SeatView | None, hands: list[HandEnd], game_end: pb.GameEnd | None) -> dict[str, Any]:
    """The scores and bags of both sides now: the game's end, else the last hand's end, else the hand's start."""
    if game_end is not None:
        return {"scores": list(game_end.scores), "bags": list(game_end.bags)}
    last = hands[-1] if hands else None
    if last is not None and (view is None or last.number >= view.hand_number):
        return {"scores": list(last.scores), "bags": list(last.bags)}
    if view is not None:
        return {"scores": list(view.scores), "bags": list(view.bags)}
    return {"scores": [0, 0], "bags": [0, 0]}


def game_length(rules: Ruleset) -> str:
    """How long a game is, in words: the target, and the hand cap where it can end the game first."""
    target = f"first to {rules.target}" + (f" (or down to {rules.lose_floor})" if rules.lose_floor is not None else "")
    hands = rules.max_hands
    if hands <= SHORT_GAME_HANDS:
        return f"{hands} hand{'s' if hands != 1 else ''}, or {target}"
    if hands < DEFAULT_MAX_HANDS:
        return f"{target}, at most {hands} hands"
    return target


def rules_json(rules: Ruleset) -> dict[str, Any]:
    """What the page says of the rules: the preset, the game's length, the bag limit."""
    return {
        "preset": rules.preset,
        "target": rules.target,
        "max_hands": rules.max_hands,
        "length": game_length(rules),
        "bag_threshold": rules.bag_threshold,
        "bag_penalty": rules.bag_penalty,
        "nil_value": rules.nil_value,
        "blind_nil_value": rules.blind_nil_value,
    }


def opening_bid(view: pb.SeatView, legal: tuple[str, ...]) -> str | None:
    """Where the bid buttons' focus starts: the hand's own trick count (Medium's rule), never nil."""
    non_nil = [b for b in legal if b != "0"]
    if not non_nil:
        return None
    try:
        estimate = estimate_tricks(cards_from_text(list(view.hand)), len(view.bids) or 4)
    except Exception:  # noqa: BLE001 - a view the rule cannot read: the lowest bid that is not nil
        return non_nil[0]
    wanted = str(max(1, min(13, int(estimate + 0.35))))
    return wanted if wanted in non_nil else non_nil[0]


def decision_json(request_id: int, kind: str, legal: tuple[str, ...], move_ms: int, bank_ms: int,
                  allowed_ms: int, elapsed_ms: int, start: str | None = None) -> dict[str, Any]:  # fmt: skip
    """The open decision: what to answer, the legal answers, where the focus starts, and the clock now."""
    return {
        "start": start,
        "request_id": request_id,
        "kind": kind,
        "legal": list(legal),
        "move_ms": move_ms,
        "bank_ms": bank_ms,
        "allowed_ms": allowed_ms,
        "elapsed_ms": elapsed_ms,
    }
