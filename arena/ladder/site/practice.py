"""The practice tables' routes on the ladder's site (a signed-in team only).

- ``POST /me/practice`` (the form on ``/me``; the site's Origin check covers
  it like every form that carries the session cookie): the person's seat, a
  version for the bots, and optionally another version per seat; opens a
  table and sends the browser to its page, or shows ``/me`` with the reason
  it cannot (off, full, quota used, a version not active);
- ``GET /practice/KEY``, ``WS /practice/KEY/ws``, ``GET /practice/KEY/replay/GAME``:
  the ``arena play`` table page, its WebSocket and its replay
  (:func:`arena.play.web.add_table_routes`), only for the team that opened
  the table (anyone else, even with the key, gets 404 and a refused socket);
- ``GET /me/practice/ID``: a finished practice game in the ladder's replay viewer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

from arena_sdk.engine import seat_name
from fastapi import APIRouter, FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection

from arena.ladder.site.guard import own_origin, request_origin
from arena.ladder.site.context import REPLAY_CSP, Site, SiteDep, Who, viewer
from arena.ladder.versions.lifecycle import ACTIVE

if TYPE_CHECKING:  # the tables load the referee and gRPC: only a whole ladder (serve) has them, not the site alone
    from arena.ladder.games.practice import PracticeTables
    from arena.play.table import PlayTable

router = APIRouter(include_in_schema=False)


def install(app: FastAPI, site: Site, config: Any) -> None:
    """Practice tables on this site when ``config`` is a whole ladder configuration (``arena ladder serve``)."""
    app.include_router(router)
    if getattr(config, "play", None) is None:
        return  # the site alone (its settings only): no tables to seat
    from arena.ladder.common.paths import practice_store
    from arena.ladder.games.practice import PracticeTables
    from arena.ladder.games.practice_store import PracticeStore
    from arena.play.web import add_table_routes

    ladder_id = site.store.meta()["ladder_id"]
    site.practice = PracticeTables(
        config, PracticeStore(practice_store(site.directory)), f"ladder-{ladder_id}",
        stopping=lambda: (live := site.state().live) is not None and live.stopping,
    )  # fmt: skip

    async def lookup(key: str, connection: HTTPConnection) -> PlayTable | None:
        practice: PracticeTables | None = site.practice
        if practice is None or len(key) > 64:
            return None
        who = await run_in_threadpool(viewer, connection, site)  # type: ignore[arg-type]
        return practice.table_of(key, who.team)

    add_table_routes(app, lookup, prefix="/practice", origin_ok=socket_from_own_origin)


def socket_from_own_origin(connection: HTTPConnection) -> bool:
    """Whether a WebSocket's page is this site's own (its Origin is the site's scheme and Host)."""
    scope = dict(connection.scope)
    scope["scheme"] = {"ws": "http", "wss": "https"}.get(scope.get("scheme", ""), scope.get("scheme", "http"))
    ours = own_origin(scope)
    return ours is not None and request_origin(scope) == ours


def panel(site: Site, team: str) -> dict[str, Any]:
    """What ``/me`` shows of practice tables: the form's choices, the quota, the team's practice games."""
    practice: PracticeTables | None = getattr(site, "practice", None)
    if practice is None:
        return {"available": False}
    n = site.settings.players
    settings = practice.settings
    return {
        "available": True,
        "enabled": settings.enabled,
        "per_day": settings.per_team_per_day,
        "used_today": practice.store.opened_today(team),
        "tables": settings.tables,
        "versions": [v.entry for v in site.store.active_versions() if v.image_id],
        "seats": [seat_name(n, s) for s in range(n)],
        "games": [g.to_dict() for g in practice.store.games(team)],
    }


def _me_with(site: Site, who: Any, message: str, status: int) -> HTMLResponse:
    shown = site.page("me.html", who, me=site.me(who.team, who.member), games=site.recent_games(30, who.team),
                      error=None, practice_error=message)  # fmt: skip
    shown.status_code = status
    return shown


@router.post("/me/practice")
async def open_practice(
    request: Request,
    site: SiteDep,
    who: Who,
    version: Annotated[str, Form(max_length=200)],
    seat: Annotated[int, Form()] = 0,
) -> Response:
    """Open a practice table: ``version`` at every bot seat unless ``seat_K`` names another for seat K."""
    from arena.ladder.games.practice import PracticeRefused, SeatBot

    if who.team is None:
        return RedirectResponse("/signin", status_code=303)
    practice: PracticeTables | None = site.practice
    if practice is None:
        return await run_in_threadpool(_me_with, site, who, "Practice tables are not available on this site.", 404)
    team = await run_in_threadpool(site.store.team, who.team)
    if team is not None and getattr(team, "pending", False):  # as its uploads: not before the organiser approves
        waiting = "Your team waits for the organiser's approval: practice tables open once it is approved."
        return await run_in_threadpool(_me_with, site, who, waiting, 403)
    refused = await run_in_threadpool(practice.refusal, who.team)  # off, full or quota used: before anything else
    if refused is not None:
        return await run_in_threadpool(_me_with, site, who, refused, 409 if practice.settings.enabled else 403)
    n = site.settings.players
    if not 0 <= seat < n:
        seats = ", ".join(seat_name(n, s) for s in range(n))
        return await run_in_threadpool(_me_with, site, who, f"Pick your seat: one of {seats}.", 400)
    form = await request.form()
    wanted = [str(form.get(f"seat_{s}") or version).strip() for s in range(n)]
    active = {v.entry: v for v in await run_in_threadpool(site.store.active_versions)}
    bots: list[SeatBot | None] = []
    for s, entry in enumerate(wanted):
        if s == seat:
            bots.append(None)
            continue
        found = active.get(entry)
        if found is None or found.status != ACTIVE or not found.image_id:
            shown = entry[:60]
            return await run_in_threadpool(
                _me_with, site, who, f"{shown!r} is not an active version: practice tables seat active versions only.", 400
            )
        bots.append(SeatBot(entry, found.image_id))
    try:
        opened = await practice.open(who.team, seat, bots)  # its row in a thread; its match starts on this loop
    except PracticeRefused as exc:
        return await run_in_threadpool(_me_with, site, who, str(exc), 409)
    return RedirectResponse(f"/practice/{opened.key}", status_code=303)


@router.get("/me/practice/{table_id}", response_class=HTMLResponse)
def practice_replay(table_id: int, site: SiteDep, who: Who) -> HTMLResponse:
    """A finished practice game of the asking team in the replay viewer (anyone else: 404)."""
    from arena.publish.steps import game_steps

    practice: PracticeTables | None = site.practice
    game = practice.store.game(table_id) if practice is not None else None
    if game is None or who.team is None or game.team != who.team or not game.record:
        raise HTTPException(404, "no such practice game")
    path = (site.directory / game.record).resolve()
    if not path.is_relative_to((site.directory / "practice").resolve()) or not path.is_file():
        raise HTTPException(404, "no such practice game")
    from arena_sdk.engine.record import record_assists

    from arena.play.assist import assists_words

    record = json.loads(path.read_text(encoding="utf-8"))
    steps = game_steps(record, with_notes=False)
    n = int(steps["players"])
    steps["names"] = [{"name": "you" if game.seats[k] == "person" else game.seats[k], "version": ""} for k in range(n)]
    helped = [assists_words(h) for h in record_assists(record).values()]
    return site.page("practice_replay.html", who, csp=REPLAY_CSP, game=game, steps=steps, assisted=helped)


__all__ = ["install", "panel", "router", "socket_from_own_origin"]
