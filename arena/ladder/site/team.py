"""A signed-in team's pages: its own versions and uploads, its bots' logs, its validation records."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)

from arena.ladder.common.paths import validation_record
from arena.ladder.site.context import SiteDep, Who

router = APIRouter(include_in_schema=False)


@router.get("/me", response_class=HTMLResponse)
def me_page(site: SiteDep, who: Who) -> Response:
    if who.team is None:
        return RedirectResponse("/signin", status_code=303)
    return site.page("me.html", who, me=site.me(who.team, who.member), games=site.recent_games(30, who.team), error=None)


@router.get("/me/games/{game_id}/logs", response_class=PlainTextResponse)
def my_logs_page(game_id: str, site: SiteDep, who: Who) -> PlainTextResponse:
    if who.team is None and not who.admin:
        raise HTTPException(404, "no such game")
    return PlainTextResponse(site.game_logs(game_id, who))


@router.get("/teams/{team}/versions/{number}/validation/{name}", include_in_schema=True, tags=["team"])
def validation_record_file(team: str, number: int, name: str, site: SiteDep, who: Who) -> FileResponse:
    """The record of one of a version's validation games (the team's own and the organiser's only; else 404)."""
    version = site.store.version_by_entry(f"{team}@{number}") if who.may_see(team) else None
    path = validation_record(site.directory, version.id, name) if version is not None else None
    if path is None:
        raise HTTPException(404, "no such record")  # another team's: the same answer as for none
    return FileResponse(path, media_type="application/json", filename=name)
