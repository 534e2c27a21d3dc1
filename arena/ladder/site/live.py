"""Watching a ladder game live: its page and its server-sent events (public information only).

- ``GET /live/GAME_ID``: the page (our own script, :file:`static/live.js`, and
  stylesheet; no inline script);
- ``GET /live/GAME_ID/events``: a ``text/event-stream``: one ``data:`` line of
  JSON whenever the game changes (``start``, then ``view`` after each decision,
  then ``over`` with the replay's address, and the stream ends).

What is sent is only ever :class:`~arena.ladder.games.live.LiveGames`' content,
which holds nothing but :func:`~arena.ladder.games.live.spectator_message`'s
output: bids, cards played, tricks, scores; no hand, not even the watcher's
own team's.  Anyone may watch (the leaderboard is public, and so is this).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from fastapi import APIRouter, HTTPException
from fastapi.responses import HTMLResponse, StreamingResponse

from arena.ladder.games.live import MAX_SPECTATORS
from arena.ladder.site.context import SiteDep, Who, side_of_seat
from arena.ladder.games.ids import GAME_ID

if TYPE_CHECKING:
    from arena.ladder.games.live import LiveGames

router = APIRouter(include_in_schema=False)

#: The live page's policy: our own script and stylesheet, the event stream back to us, nothing else.
LIVE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: Seconds between two keep-alive comments on a quiet stream (proxies close silent connections).
KEEP_ALIVE_S = 15.0


def _hub(site: SiteDep) -> LiveGames | None:
    return site.state().live


def _game_or_404(site: SiteDep, game_id: str) -> tuple[LiveGames, tuple[str, str]]:
    hub = _hub(site)
    sides = hub.sides(game_id) if hub is not None and GAME_ID.fullmatch(game_id) else None
    if hub is None or sides is None:
        raise HTTPException(404, "no such game is being played (it may be over: see the recent games)")
    return hub, sides


@router.get("/live/{game_id}", response_class=HTMLResponse)
def live_page(game_id: str, site: SiteDep, who: Who) -> HTMLResponse:
    """A running game, as it is played: bids, cards, tricks and scores (no hand is ever shown)."""
    _, sides = _game_or_404(site, game_id)
    n = site.settings.players
    seats = [sides[side_of_seat(n, s)] for s in range(n)]
    return site.page("live.html", who, csp=LIVE_CSP, game_id=game_id, sides=sides, seats=seats, players=n)


@router.get("/live/{game_id}/events")
async def live_events(game_id: str, site: SiteDep) -> StreamingResponse:
    """The game's public events as server-sent events, until it is over (then its replay's address)."""
    hub, _ = _game_or_404(site, game_id)
    if hub.spectators >= MAX_SPECTATORS:
        raise HTTPException(503, "too many spectators at the moment: try again later")
    return StreamingResponse(
        _events(hub, game_id), media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )  # fmt: skip


async def _events(hub: LiveGames, game_id: str) -> AsyncIterator[str]:
    """The stream: each change once (changes in between are folded into the latest), a comment when quiet."""
    hub.spectators += 1
    try:
        seen = -1
        while not hub.stopping:
            found = hub.latest(game_id)
            if found is None:  # gone from the list meanwhile
                yield _data({"type": "over", "game_id": game_id, "replay": None})
                return
            seq, message = found
            if seq != seen:
                seen = seq
                yield _data(message)
                if message["type"] == "over":
                    return
            else:
                yield ": still playing\n\n"
            await hub.wait(game_id, seen, KEEP_ALIVE_S)
        yield _data({"type": "closed", "game_id": game_id})
    finally:
        hub.spectators -= 1


def _data(message: dict[str, object]) -> str:
    return f"data: {json.dumps(message, separators=(',', ':'))}\n\n"


__all__ = ["LIVE_CSP", "router"]
