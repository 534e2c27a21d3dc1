"""What the referee does that bots must be able to reproduce exactly.

The default move for a seat whose answer was late or unusable
(docs/architecture.md section 5: bid 1; the first legal card in canonical order;
blind nil: decline; two-player draw: keep; blind-nil exchange: none), and the
per-game seed each seat's bot gets.  The referee and the SDK's local harness
both use these, so a game plays out the same way in both.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from arena_sdk.engine.errors import IllegalActionError
from arena_sdk.engine.state import Decision, GameState


def default_action(state: GameState) -> Any:
    """The default move for the seat to move; :class:`IllegalActionError` if the game is over."""
    kind = state.decision
    if kind is None:
        raise IllegalActionError("the game is over: there is no default move")
    if kind is Decision.BID:
        return 1
    if kind is Decision.BLIND_NIL:
        return False
    if kind is Decision.DRAW:
        return True
    if kind is Decision.EXCHANGE:
        return ()
    return state.legal_actions()[0]


def bot_seed(deal_seed: str, seat: int, key: str = "") -> int:
    """The per-game seed a seat's bot gets: a one-way function of the deal seed, keyed by ``key``.

    The same deal gives the same bot seeds, so a match replays identically
    when no clock ran out; the deal cannot be recovered from it.  With a
    ``key`` (a run's secret, kept from the bots) a bot seed cannot even be
    checked against a guessed deal seed.
    """
    text = f"{deal_seed}/bot/{seat}".encode()
    digest = hmac.new(key.encode(), text, hashlib.sha256).digest() if key else hashlib.sha256(text).digest()
    return int.from_bytes(digest[:8], "big") >> 1
