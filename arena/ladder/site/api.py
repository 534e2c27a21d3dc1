"""The JSON API under ``/api/`` (docs/ladder.md, "The API"; the schema is ``/openapi.json``).

The upload (``POST /api/submissions``) is assembled with the sign-in in
:mod:`arena.ladder.site.app`: it reads the request body itself.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse, PlainTextResponse

from arena.ladder.site.admin import disable_version, set_paused, set_team_disabled
from arena.ladder.site.context import SiteDep, Who, admin_only, team_only
from arena.ladder.versions.lifecycle import DISABLED

router = APIRouter(prefix="/api")


@router.get("/leaderboard")
def api_leaderboard(site: SiteDep) -> JSONResponse:
    """The table shown now, best first: the active versions' standings, or after the deadline the final table
    (phase named, ``table`` "final", tied groups and each row's verdict; :func:`arena.ladder.course.board.board`)."""
    state = site.state()
    shown = site.board()
    return JSONResponse({"ladder": site.settings.name, "paused": site.store.paused, "phase": shown.phase,
                         "table": shown.kind, "settled": shown.settled, "warning": shown.warning,
                         "standings": site.leaderboard(shown),
                         "in_play": [list(p) for p in state.in_play], "building": state.building,
                         "engine_waiting": state.engine_down is not None})  # fmt: skip


@router.get("/teams/{team}")
def api_team(team: str, site: SiteDep, who: Who) -> JSONResponse:
    """A team's ranked versions (all of its versions, logs included, for the team itself and the organiser)."""
    found = site.team_or_404(team)
    mine = who.may_see(team)
    shown = site.board()  # the table every page shows now: the final one after the freeze
    versions = [site.version_private(v, shown) if mine else site.version_public(v, shown)
                for v in site.store.versions(team=team) if mine or site.ranked(v)]  # fmt: skip
    history = [dict(zip(("entry", "at", "pairs", "elo", "low", "high"), h, strict=True))
               for h in site.history(team, thin=False)]  # fmt: skip
    return JSONResponse({"team": found.name, "disabled": found.disabled, "versions": versions, "history": history})


@router.get("/games")
def api_games(site: SiteDep, limit: int = 50) -> JSONResponse:
    """The latest games, newest first."""
    return JSONResponse({"games": site.recent_games(max(1, min(limit, 500)))})


@router.get("/games/{game_id}")
def api_game(game_id: str, site: SiteDep, who: Who) -> JSONResponse:
    """A game's record (docs/record-format.md); the bots' notes only those of the asking team's seats."""
    _, record = site.record(game_id, who)
    return JSONResponse(record)


@router.get("/me")
def api_me(site: SiteDep, who: Who) -> JSONResponse:
    """The signed-in team's versions (with build and validation logs, validation records, who uploaded each), quota, members."""
    return JSONResponse(site.me(team_only(who), who.member))


@router.get("/me/games/{game_id}/logs", response_class=PlainTextResponse)
def api_my_logs(game_id: str, site: SiteDep, who: Who) -> PlainTextResponse:
    """The logs of the team's own seats in one game (the organiser: every seat)."""
    if who.team is None and not who.admin:
        raise HTTPException(401, "sign in with your team's token")
    return PlainTextResponse(site.game_logs(game_id, who))


@router.post("/admin/pause")
def api_pause(site: SiteDep, who: Who) -> JSONResponse:
    admin_only(who)
    set_paused(site, True)
    return JSONResponse({"paused": True})


@router.post("/admin/resume")
def api_resume(site: SiteDep, who: Who) -> JSONResponse:
    admin_only(who)
    set_paused(site, False)
    return JSONResponse({"paused": False})


@router.post("/admin/teams/{team}/disable")
def api_disable_team(team: str, site: SiteDep, who: Who) -> JSONResponse:
    admin_only(who)
    set_team_disabled(site, team, True)
    return JSONResponse({"team": team, "disabled": True})


@router.post("/admin/teams/{team}/enable")
def api_enable_team(team: str, site: SiteDep, who: Who) -> JSONResponse:
    admin_only(who)
    set_team_disabled(site, team, False)
    return JSONResponse({"team": team, "disabled": False})


@router.post("/admin/versions/{entry}/disable")
def api_disable_version(entry: str, site: SiteDep, who: Who) -> JSONResponse:
    admin_only(who)
    disable_version(site, entry)
    return JSONResponse({"entry": entry, "status": DISABLED})
