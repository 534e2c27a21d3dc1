"""What the table's page is sent: :func:`table_snapshot`, rebuilt on every change.

It holds the person's seat's view and nothing more (their cards, the public
bids, tricks and scores), made true for the moment it is sent
(:func:`arena.play.views.table_view_json`: a card just played is on the table,
a finished hand shows all its tricks), the game's running totals, the open
decision, the finished hands (their tricks: all played), the comparisons
(trick by trick, :mod:`arena.play.explain`), the hint for the open decision,
whether an undo is possible, and the person's statistics.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from arena_sdk.engine import seat_name, team_name, team_of

from arena.play.compare import COMPARE_BOTS
from arena.play.explain import explained
from arena.play.views import (
    decision_json,
    hand_json,
    opening_bid,
    rules_json,
    table_view_json,
    totals_json,
)

if TYPE_CHECKING:
    from arena.play.table import PlayTable


def _decision(table: PlayTable) -> dict[str, Any] | None:
    decision = table.seat.decision
    if decision is None:
        return None
    start = opening_bid(decision.view, decision.legal) if decision.kind.value == "bid" else None
    return decision_json(
        decision.request_id, decision.kind.value, decision.legal, decision.move_ms, decision.bank_ms,
        decision.allowed_ms, int((time.monotonic() - decision.asked_at) * 1000), start,
    )  # fmt: skip


#: The latest finished hands whose tricks and comparisons go with every state (the page shows the
#: latest, and the one before while its last cards are still being laid); older hands go as their
#: score lines only, so a long game's states stay small.
RECENT_HANDS = 2


def _hands(table: PlayTable) -> list[dict[str, Any]]:
    """This game's finished hands: every one's score, the recent ones' tricks too."""
    hands = [hand_json(table.players, table.config.seat, h) for h in table.seat.hands]
    for old in hands[:-RECENT_HANDS]:
        old["tricks_played"] = []
        old["last_trick"] = None
    return hands


def _comparisons(table: PlayTable, hands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """This game's comparisons of the recent hands; the finished ones with their swing, rows and explanation."""
    n, me = table.players, table.config.seat
    by_number = {h["number"]: h for h in hands[-RECENT_HANDS:]}
    shown = []
    for (game, number, _), comparison in sorted(table.comparisons.items()):
        if game != table.seat.game_index or number not in by_number:
            continue
        hand = by_number.get(comparison["hand"])
        item = with_swing(comparison, hand)
        if item.get("status") == "done" and hand is not None and "teams" in item:
            item = explained(n, me, hand, item)
        shown.append(item)
    return shown


def _game_over(table: PlayTable) -> dict[str, Any] | None:
    """The game just ended (until the next one starts): who won, the scores, its replay."""
    end = table.seat.game_end
    if end is None:
        return None
    n = table.players
    winner = end.winner if end.winner >= 0 else None
    return {
        "game_id": end.game_id,
        "ending": end.ending,
        "winner": winner,
        "you_won": None if winner is None else winner == team_of(n, table.config.seat),
        "scores": list(end.scores),
        "bags": list(end.bags),
        "replay": f"replay/{end.game_id}" if end.game_id in table.records else None,
        "last_of_match": table.seat.game_index + 1 >= table.config.games,
    }


def _new_game(table: PlayTable) -> dict[str, Any] | None:
    if not table.finished or table.error:
        return None
    if table.new_game is not None:
        return {"kind": "button"}
    if table.new_game_link is not None:
        return {"kind": "link", "href": table.new_game_link}
    return None


def _hint(table: PlayTable) -> dict[str, Any] | None:
    decision = table.seat.decision
    if decision is None:
        return None
    hint = table.assists.hints.get(decision.request_id)
    return None if hint is None else {"request_id": decision.request_id, **hint}


def table_snapshot(table: PlayTable) -> dict[str, Any]:
    """Everything the page shows now, as JSON-ready data."""
    seat = table.seat
    n = table.players
    view = seat.decision.view if seat.decision is not None else seat.view
    hands = _hands(table)
    games_ended = [
        {"game_id": g.game_id, "ending": g.ending, "winner": g.winner, "scores": list(g.scores),
         "replay": f"replay/{g.game_id}" if g.game_id in table.records else None}
        for g in seat.games_ended
    ]  # fmt: skip
    return {
        "version": table.version,
        "players": n,
        "seat": table.config.seat,
        "seat_names": [seat_name(n, s) for s in range(n)],
        "team_names": [team_name(n, t) for t in range(2)],
        "names": table.names(),
        "rules": rules_json(table.config.rules),
        "games": table.config.games,
        "game_index": seat.game_index,
        "game_id": seat.game_id,
        "view": None if view is None else table_view_json(view, seat.hands, seat.just_played),
        "totals": totals_json(view, seat.hands, seat.game_end),
        "decision": _decision(table),
        "just_played": None if seat.just_played is None else {"seat": seat.just_played[0], "card": seat.just_played[1]},
        "hands": hands,
        "comparisons": _comparisons(table, hands),
        "compare_available": table.builtin_tiers() is not None,
        "compare_bots": list(COMPARE_BOTS),
        "compare_bot": table.config.compare_bot,
        "games_ended": games_ended,
        "game_over": _game_over(table),
        "new_game": _new_game(table),
        "hint": _hint(table),
        "can_undo": table.can_undo(),
        "undo_available": table.undo_book is not None,
        "assists": dict(table.assists.counts),
        "stats": None if table.stats is None else table.stats.summary(),
        "stats_message": table.stats_message,
        "finished": table.finished,
        "abandoned": seat.abandoned,
        "message": seat.message,
        "error": table.error,
    }


def with_swing(comparison: dict[str, Any], hand: dict[str, Any] | None) -> dict[str, Any]:
    """A finished comparison with its swing: the bot's margin (its side's points less the other
    side's) less the person's, in the same hand.  Positive: the bot did better."""
    if comparison.get("status") != "done" or hand is None:
        return comparison
    yours = hand["you"]["side_points"] - hand["you"]["other_points"]
    return {**comparison, "swing": comparison["margin"] - yours}


__all__ = ["table_snapshot", "with_swing"]
