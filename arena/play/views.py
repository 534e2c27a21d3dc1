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

from arena_sdk.engine import seat_name, team_name
from arena_sdk.wire import arena_pb2 as pb

from arena.play.compare import seat_play
from arena.play.seat import HandEnd

#: The longest bot name the page shows.
NAME_CHARS = 40


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
    """A finished hand: bids, tricks, and each side's score breakdown (from the referee's HandEnd)."""
    result = hand.result
    names = [seat_name(players, s) for s in range(players)]
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
                "score_after": score["score_after"],
                "bags_after": score["bags_after"],
            }
        )
    you = seat_play(players, seat, result, hand.tricks)
    return {
        "number": hand.number,
        "bids": [result["bids"][n] for n in names],
        "blind": [n in result.get("blind", []) for n in names],
        "tricks": [result["tricks"][n] for n in names],
        "teams": teams,
        "last_trick": {"leader": hand.tricks[-1][0], "cards": hand.tricks[-1][1]} if hand.tricks else None,
        "you": {"bid": you.bid, "blind": you.blind, "cards": list(you.cards), "tricks": you.tricks,
                "side_points": you.side_points, "other_points": you.other_points},
    }  # fmt: skip


def decision_json(request_id: int, kind: str, legal: tuple[str, ...], move_ms: int, bank_ms: int,
                  allowed_ms: int, elapsed_ms: int) -> dict[str, Any]:  # fmt: skip
    """The open decision: what to answer, the legal answers, and the clock as it stands now."""
    return {
        "request_id": request_id,
        "kind": kind,
        "legal": list(legal),
        "move_ms": move_ms,
        "bank_ms": bank_ms,
        "allowed_ms": allowed_ms,
        "elapsed_ms": elapsed_ms,
    }
