"""The text picture of a table that the environments' ``render()`` shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena_sdk.engine import seat_name, team_name

if TYPE_CHECKING:
    from arena_sdk.envs.table import Table


def render_table(table: Table) -> str:
    """Scores, bids, tricks, the trick in progress and every hand (an observer's view, for people)."""
    state = table.state
    if state is None:
        return "no game yet"
    n = state.players
    lines = [
        f"hand {state.hand_number}  "
        + "  ".join(f"{team_name(n, t)} {state.scores[t]} ({state.bags[t]} bags)" for t in range(2))
    ]
    for seat in range(n):
        bid = state.bids[seat]
        bid_text = "-" if bid is None else ("blind nil" if state.blind[seat] else str(bid))
        cards = " ".join(f"{c}" for c in _names(table.hand_cards(seat)))
        mark = ">" if seat == state.to_move else " "
        lines.append(f"{mark} {seat_name(n, seat)}  bid {bid_text:>9}  tricks {state.tricks_won[seat]:>2}  {cards}")
    if state.trick:
        lines.append("trick: " + " ".join(f"{seat_name(n, s)}:{c}" for s, c in state.current_trick()))
    if state.result is not None:
        r = state.result
        won = "draw" if r.winner is None else f"{team_name(n, r.winner)} wins"
        lines.append(f"game over ({r.ending}): {won}")
    return "\n".join(lines)


def _names(cards: list[int]) -> list[str]:
    from arena_sdk.engine.cards import CARD_NAMES

    return [CARD_NAMES[c] for c in cards]


def render_in_mode(table: Table, render_mode: str | None) -> str | None:
    """What an environment's ``render()`` gives: nothing without a mode, the text for ``ansi``, printed for ``human``."""
    if render_mode is None:
        return None
    text = render_table(table)
    if render_mode == "human":
        print(text)
        return None
    return text
