"""The ladder's web site and JSON API, served by ``arena ladder serve`` (FastAPI under uvicorn).

Public: the leaderboard, each team's page (its ranked versions, notes, a
rating history plot), recent games with their replays.  Private to a team
(signed in with its token; the API takes it as ``Authorization: Bearer``):
its versions with build and validation logs, its bots' logs per game, its
quota, and the upload form.  The organiser (the admin token from ``arena
ladder init``): pause and resume, disable a version or a team, every log.

Everything a team controls (names, notes, logs) is escaped by the templates
(autoescape) or served as ``text/plain``; pages carry a strict
Content-Security-Policy (no inline script, nothing from elsewhere); the
session cookie is ``HttpOnly`` and ``SameSite=Strict``, and every
state-changing request with a cookie, and every sign-in, must come from the
site's own origin (:mod:`arena.ladder.guard`, applied by :func:`wrap`).  A
team asking for another team's private page or log gets 404, the same answer
as for something that does not exist.
"""


import json
import re
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Form, HTTPException, Request
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.types import ASGIApp

from arena.ladder.builds import source_dir
from arena.ladder.config import LadderConfig
from arena.ladder.guard import PAGE_CSP, BodyLimit, OriginCheck, SecurityHeaders, replay_csp
from arena.ladder.history import history_svg
from arena.ladder.service import LadderState
from arena.ladder.uploads import FORM_SLACK, OPENAPI_BODY, receive_upload
from arena.ladder.store import (
    ACTIVE,
    DISABLED,
    RETIRED,
    LadderError,
    LadderStore,
    Team,
    Version,
)
from arena.results.store import ResultsStore

#: The session cookie (a random id; the store keeps its hash).
COOKIE = "arena_session"
#: The ids of the ladder's games (:func:`arena.ladder.service.game_ids`): anything else is a 404.
GAME_ID = re.compile(r"L\d{7}-t[12]")
#: Bytes the body of any other request may have (a sign-in or an admin form).
SMALL_BODY = 64 * 1024
#: The routes that take an upload (their body may be as large as the upload cap).
UPLOAD_PATHS = frozenset({"/api/submissions", "/me/submit"})


@cache
def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("arena.ladder", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["elo"] = lambda v: "–" if v is None else f"{v:.0f}"
    env.filters["pm"] = lambda s: "" if s.low is None or s.high is None else f"±{(s.high - s.low) / 2:.0f}"
    env.filters["points"] = lambda v: "–" if v is None else f"{v:+.1f}"
    return env


class Viewer:
    """Who is asking: nobody, a team, or the organiser."""

    def __init__(self, team: str | None = None, admin: bool = False) -> None:
        self.team = team
        self.admin = admin

    def may_see(self, team: str) -> bool:
        return self.admin or self.team == team


def create_app(config: LadderConfig, state: Callable[[], LadderState]) -> FastAPI:
    """The site and API of the ladder in ``config.directory``; ``state`` gives the loop's latest standings."""
    directory = config.directory
    store = LadderStore(config.ladder_path)
    results = ResultsStore.open_read_only(config.results_path)
    app = FastAPI(
        title=f"Spades arena ladder: {config.name}",
        description="The ladder's JSON API (docs/ladder.md). Team calls take `Authorization: Bearer TEAM_TOKEN`.",
        docs_url=None,  # the interactive page loads scripts from elsewhere: the schema is /openapi.json
        redoc_url=None,
    )

    # Every handler is async: the stores' connections are used from the event loop's thread only
    # (their queries take milliseconds), so no two requests ever share one at the same time.
    async def viewer(request: Request) -> Viewer:
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            token = auth[7:].strip()
            if store.is_admin_token(token):
                return Viewer(admin=True)
            team = store.team_of_token(token)
            if team is None:
                raise HTTPException(401, "unknown, rotated or disabled token")
            return Viewer(team.name)
        session = request.cookies.get(COOKIE)
        if session:
            found = store.session(session)
            if found is not None:
                return Viewer(found[0], found[1])
        return Viewer()

    Who = Annotated[Viewer, Depends(viewer)]

    def team_only(who: Viewer) -> str:
        if who.team is None:
            raise HTTPException(401, "sign in with your team's token")
        return who.team

    def admin_only(who: Viewer) -> None:
        if not who.admin:
            raise HTTPException(403, "the organiser's token is needed")

    def page(name: str, who: Viewer, **values: Any) -> HTMLResponse:
        html = _templates().get_template(name).render(ladder=config.name, who=who, **values)
        return HTMLResponse(html, headers={"Content-Security-Policy": PAGE_CSP, "X-Content-Type-Options": "nosniff"})

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Content-Security-Policy", PAGE_CSP)
        return response

    # ------------------------------------------------------------ data

    def leaderboard() -> list[dict[str, Any]]:
        versions = {v.entry: v for v in store.active_versions()}
        rows = []
        for s in state().standings:
            v = versions.get(s.entry)
            if v is None:
                continue
            rows.append({**s.to_dict(), "team": v.team, "version": v.number, "note": v.note})
        return rows

    def version_public(v: Version) -> dict[str, Any]:
        current = {s.entry: s for s in state().standings}
        s = current.get(v.entry)
        return {
            "team": v.team, "version": v.number, "entry": v.entry, "note": v.note, "status": v.status,
            "created": v.created, "activated": v.activated, "retired": v.retired,
            "elo": s.elo if s else v.final_elo, "low": s.low if s else v.final_low,
            "high": s.high if s else v.final_high, "pairs": s.pairs if s else v.final_pairs,
        }  # fmt: skip

    def version_private(v: Version) -> dict[str, Any]:
        return {**version_public(v), "image_id": v.image_id, "build_log": v.build_log,
                "validation_log": v.validation_log, "attempts": v.attempts}  # fmt: skip

    def ranked(v: Version) -> bool:
        return v.status in (ACTIVE, RETIRED) or (v.status == DISABLED and v.activated is not None)

    def team_or_404(name: str) -> Team:
        team = store.team(name)
        if team is None:
            raise HTTPException(404, "no such team")
        return team

    def recent_games(limit: int, team: str | None = None) -> list[dict[str, Any]]:
        rows = results.games_in_write_order()[::-1]
        out = []
        for g in rows:
            if team is not None and not (g.side0.startswith(team + "@") or g.side1.startswith(team + "@")):
                continue
            out.append({
                "game_id": g.game_id, "side0": g.side0, "side1": g.side1, "ending": g.ending,
                "winner": g.winner, "score0": g.score0, "score1": g.score1, "hands": g.hands,
                "pair": g.cluster, "finished_at": g.finished_at,
            })  # fmt: skip
            if len(out) >= limit:
                break
        return out

    def me(team: str) -> dict[str, Any]:
        return {
            "team": team,
            "quota": {"per_day": config.submissions.daily_quota, "used_today": store.submissions_today(team)},
            "limits": {"max_bytes": config.submissions.max_bytes, "max_files": config.submissions.max_files},
            "versions": [version_private(v) for v in store.versions(team=team)],
        }

    def game_logs(game_id: str, who: Viewer) -> str:
        if not GAME_ID.fullmatch(game_id):
            raise HTTPException(404, "no such game")
        row = next((g for g in results.games() if g.game_id == game_id), None)
        if row is None:
            raise HTTPException(404, "no such game")
        n = config.rules.players
        sides = (row.side0, row.side1)
        owned = [s for s in range(n) if who.may_see(sides[s % 2 if n == 4 else s].rpartition("@")[0])]
        if not owned:
            raise HTTPException(404, "no such game")  # the same answer as for a game that does not exist
        parts = []
        for seat in owned:
            path = directory / "logs" / game_id / f"seat{seat}.log"
            text = path.read_text(errors="replace") if path.is_file() else "(no log)\n"
            parts.append(f"--- seat {seat} ({sides[seat % 2 if n == 4 else seat]})\n{text}")
        return "\n".join(parts)

    # ------------------------------------------------------------ JSON API

    @app.get("/api/leaderboard")
    async def api_leaderboard() -> JSONResponse:
        """Active versions, best first: rank, team, version, Elo and 95% interval, pairs, points per table-hand."""
        return JSONResponse({"ladder": config.name, "paused": store.paused, "standings": leaderboard(),
                             "in_play": [list(p) for p in state().in_play], "building": state().building})

    @app.get("/api/teams/{team}")
    async def api_team(team: str, who: Who) -> JSONResponse:
        """A team's ranked versions (all of its versions, logs included, for the team itself and the organiser)."""
        found = team_or_404(team)
        mine = who.may_see(team)
        versions = [version_private(v) if mine else version_public(v) for v in store.versions(team=team)
                    if mine or ranked(v)]  # fmt: skip
        history = [dict(zip(("entry", "at", "pairs", "elo", "low", "high"), h, strict=True)) for h in store.history(team)]
        return JSONResponse({"team": found.name, "disabled": found.disabled, "versions": versions, "history": history})

    @app.get("/api/games")
    async def api_games(limit: int = 50) -> JSONResponse:
        """The latest games, newest first."""
        return JSONResponse({"games": recent_games(max(1, min(limit, 500)))})

    @app.get("/api/games/{game_id}")
    async def api_game(game_id: str, who: Who) -> JSONResponse:
        """A game's record (docs/record-format.md); the bots' notes only those of the asking team's seats."""
        path = directory / "records" / f"{game_id}.json"
        row = next((g for g in results.games() if g.game_id == game_id), None)
        if not GAME_ID.fullmatch(game_id) or not path.is_file() or row is None:
            raise HTTPException(404, "no such game")
        record = json.loads(path.read_text())
        side_of = {"N": row.side0, "S": row.side0, "A": row.side0, "E": row.side1, "W": row.side1, "B": row.side1}
        for hand in record.get("hands", []):
            for action in hand.get("actions", []):
                team = str(side_of.get(action.get("seat"), "")).rpartition("@")[0]
                if "note" in action and not (team and who.may_see(team)):
                    del action["note"]  # a seat's notes are its team's own
        return JSONResponse(record)

    @app.get("/api/me")
    async def api_me(who: Who) -> JSONResponse:
        """The signed-in team's versions (with build and validation logs) and quota."""
        return JSONResponse(me(team_only(who)))

    @app.get("/api/me/games/{game_id}/logs", response_class=PlainTextResponse)
    async def api_my_logs(game_id: str, who: Who) -> PlainTextResponse:
        """The logs of the team's own seats in one game (the organiser: every seat)."""
        if who.team is None and not who.admin:
            raise HTTPException(401, "sign in with your team's token")
        return PlainTextResponse(game_logs(game_id, who))

    async def submit(request: Request, who: Viewer) -> Version:
        """A team's upload (arena.ladder.uploads): the team is known before a byte of the body is read."""
        if who.team is None:
            raise HTTPException(401, "sign in with your team's token", headers={"Connection": "close"})
        return await receive_upload(request, config, store, who.team, lambda version: source_dir(config, version))

    @app.post("/api/submissions", status_code=201, openapi_extra=OPENAPI_BODY)
    async def api_submit(request: Request, who: Who) -> JSONResponse:
        """Upload a bot directory as a tar archive (multipart `bot`, and a `note`): built, validated, then ranked."""
        version = await submit(request, who)
        return JSONResponse(version_private(version), status_code=201)

    @app.post("/api/admin/pause")
    async def api_pause(who: Who) -> JSONResponse:
        admin_only(who)
        store.set_meta("paused", "1")
        return JSONResponse({"paused": True})

    @app.post("/api/admin/resume")
    async def api_resume(who: Who) -> JSONResponse:
        admin_only(who)
        store.set_meta("paused", "0")
        return JSONResponse({"paused": False})

    def set_team_disabled(team: str, disabled: bool) -> None:
        """The organiser's switch for a team (the API's and the admin page's); 404 for no such team."""
        try:
            store.set_team_disabled(team, disabled)
        except LadderError as exc:
            raise HTTPException(404, str(exc)) from None

    def disable_version(entry: str) -> None:
        """The organiser takes one version out; 404 for no such version."""
        version = store.version_by_entry(entry)
        if version is None:
            raise HTTPException(404, "no such version")
        store.set_status(version.id, DISABLED)

    @app.post("/api/admin/teams/{team}/disable")
    async def api_disable_team(team: str, who: Who) -> JSONResponse:
        admin_only(who)
        set_team_disabled(team, True)
        return JSONResponse({"team": team, "disabled": True})

    @app.post("/api/admin/teams/{team}/enable")
    async def api_enable_team(team: str, who: Who) -> JSONResponse:
        admin_only(who)
        set_team_disabled(team, False)
        return JSONResponse({"team": team, "disabled": False})

    @app.post("/api/admin/versions/{entry}/disable")
    async def api_disable_version(entry: str, who: Who) -> JSONResponse:
        admin_only(who)
        disable_version(entry)
        return JSONResponse({"entry": entry, "status": DISABLED})

    # ------------------------------------------------------------ pages

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def home(who: Who) -> HTMLResponse:
        return page("leaderboard.html", who, rows=leaderboard(), games=recent_games(15), paused=store.paused,
                    building=state().building, in_play=state().in_play)  # fmt: skip

    @app.get("/teams/{team}", response_class=HTMLResponse, include_in_schema=False)
    async def team_page(team: str, who: Who) -> HTMLResponse:
        found = team_or_404(team)
        versions = [version_public(v) for v in store.versions(team=team) if ranked(v)]
        history = store.history(team)
        return page("team.html", who, team=found, versions=versions, plot=history_svg(history),
                    games=recent_games(20, team))  # fmt: skip

    @app.get("/games/{game_id}", response_class=HTMLResponse, include_in_schema=False)
    async def replay_page(game_id: str) -> HTMLResponse:
        from arena.publish.steps import game_steps
        from arena.publish.viewer import standalone_html

        path = directory / "records" / f"{game_id}.json"
        if not GAME_ID.fullmatch(game_id) or not path.is_file():
            raise HTTPException(404, "no such game")
        html = standalone_html(game_steps(json.loads(path.read_text())))
        # The page's policy (also a <meta> in it) admits its inline viewer by hash; as a header it can forbid framing.
        return HTMLResponse(html, headers={"Content-Security-Policy": replay_csp()})

    @app.get("/signin", response_class=HTMLResponse, include_in_schema=False)
    async def signin_page(who: Who) -> HTMLResponse:
        return page("signin.html", who, error=None)

    @app.post("/signin", include_in_schema=False)
    async def signin(request: Request, token: Annotated[str, Form()]) -> Response:
        token = token.strip()
        if store.is_admin_token(token):
            session, where = store.new_session(None, True), "/admin"
        else:
            team = store.team_of_token(token)
            if team is None:
                return page("signin.html", Viewer(), error="That token is not a team's (or it was rotated).")
            session, where = store.new_session(team.name, False), "/me"
        response = RedirectResponse(where, status_code=303)
        response.set_cookie(COOKIE, session, httponly=True, samesite="strict", secure=request.url.scheme == "https",
                            max_age=7 * 24 * 3600, path="/")  # fmt: skip
        return response

    @app.post("/signout", include_in_schema=False)
    async def signout(request: Request) -> Response:
        session = request.cookies.get(COOKIE)
        if session:
            store.end_session(session)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/me", response_class=HTMLResponse, include_in_schema=False)
    async def me_page(who: Who) -> Response:
        if who.team is None:
            return RedirectResponse("/signin", status_code=303)
        return page("me.html", who, me=me(who.team), games=recent_games(30, who.team), error=None)

    @app.post("/me/submit", include_in_schema=False)
    async def me_submit(request: Request, who: Who) -> Response:
        if who.team is None:
            return RedirectResponse("/signin", status_code=303, headers={"Connection": "close"})  # body unread
        try:
            await submit(request, who)
        except HTTPException as exc:
            shown = page("me.html", who, me=me(who.team), games=recent_games(30, who.team), error=exc.detail)
            shown.headers.update(exc.headers or {})  # Connection: close when the rest of the body was not read
            return shown
        return RedirectResponse("/me", status_code=303)

    @app.get("/me/games/{game_id}/logs", response_class=PlainTextResponse, include_in_schema=False)
    async def my_logs_page(game_id: str, who: Who) -> PlainTextResponse:
        if who.team is None and not who.admin:
            raise HTTPException(404, "no such game")
        return PlainTextResponse(game_logs(game_id, who))

    @app.get("/admin", response_class=HTMLResponse, include_in_schema=False)
    async def admin_page(who: Who) -> Response:
        if not who.admin:
            return RedirectResponse("/signin", status_code=303)
        return page("admin.html", who, teams=store.teams(), versions=[version_private(v) for v in store.versions()],
                    paused=store.paused)  # fmt: skip

    @app.post("/admin/{action}", include_in_schema=False)
    async def admin_action(action: str, who: Who, target: Annotated[str, Form()] = "") -> Response:
        admin_only(who)
        if action == "pause":
            store.set_meta("paused", "1")
        elif action == "resume":
            store.set_meta("paused", "0")
        elif action in ("disable-team", "enable-team"):
            set_team_disabled(target, action == "disable-team")
        elif action == "disable-version":
            disable_version(target)
        else:
            raise HTTPException(404, "no such action")
        return RedirectResponse("/admin", status_code=303)

    @app.get("/static/ladder.css", include_in_schema=False)
    async def stylesheet() -> Response:
        from importlib import resources

        css = resources.files("arena.ladder").joinpath("static", "ladder.css").read_text(encoding="utf-8")
        return Response(css, media_type="text/css")

    app.state.store = store
    app.state.results = results
    return app


def wrap(app: FastAPI, config: LadderConfig) -> ASGIApp:
    """The app behind its guards (arena.ladder.guard), outermost first.

    Security headers on every answer (the guards' refusals too); the Origin
    check of state-changing requests; the body limit (the upload cap plus
    room for the form's other fields on the upload routes, 64 KiB elsewhere).
    """
    limited = BodyLimit(app, SMALL_BODY, config.submissions.max_bytes + FORM_SLACK, UPLOAD_PATHS)
    return SecurityHeaders(OriginCheck(limited))


__all__ = ["COOKIE", "PAGE_CSP", "BodyLimit", "create_app", "wrap"]
