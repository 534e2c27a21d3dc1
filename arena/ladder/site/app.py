"""The ladder's web site and JSON API, served by ``arena ladder serve`` (FastAPI under uvicorn).

Public: the leaderboard, each team's page (its ranked versions, notes, a
rating history plot), recent games with their replays.  Private to a team
(signed in with its token; the API takes it as ``Authorization: Bearer``):
its versions with build and validation logs and validation records, its bots'
logs and notes per game, its quota, and the upload form.  The organiser (the
admin token from ``arena ladder init``): pause and resume, disable a version
or a team, every log.

The pages and the API are routers, one per audience (:mod:`arena.ladder.site`);
this module assembles them with what reads a request body or sets a cookie
(the upload, sign-in and sign-out) and the body limit in front (:func:`wrap`).

Everything a team controls (names, notes, logs) is escaped by the templates
(autoescape) or served as ``text/plain``; pages carry a strict
Content-Security-Policy (no inline script, nothing from elsewhere); the
session cookie is ``HttpOnly`` and ``SameSite=Strict``, and every
state-changing request with a cookie, and every sign-in, must come from the
site's own origin (:mod:`arena.ladder.site.guard`, applied by :func:`wrap`).  A
team asking for another team's private page or log gets 404, the same answer
as for something that does not exist.
"""


from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp

from arena.ladder.site.guard import BodyLimit, OriginCheck, SecurityHeaders
from arena.ladder.common.paths import source_dir
from arena.ladder.site.admin import router as admin_router
from arena.ladder.site.api import router as api_router
from arena.ladder.site.final import router as final_router
from arena.ladder.site.context import COOKIE, PAGE_CSP, Site, Viewer, Who
from arena.ladder.site.join import SIGN_UP_PATHS, SIGN_UP_WINDOW_S, JoinGuard
from arena.ladder.site.join import router as join_router
from arena.ladder.site.live import router as live_router
from arena.ladder.site.practice import install as install_practice
from arena.ladder.site.practice import panel as practice_panel
from arena.ladder.site.public import router as public_router
from arena.ladder.site.team import router as team_router
from arena.ladder.games.state import LadderState
from arena.ladder.versions.store import Version
from arena.ladder.site.uploads import FORM_SLACK, OPENAPI_BODY, UploadSettings, receive_upload
from arena.storage.sqlite import DiskFull, out_of_space

#: Bytes the body of any other request may have (a sign-in or an admin form).
SMALL_BODY = 64 * 1024
#: The routes that take an upload (their body may be as large as the upload cap).
UPLOAD_PATHS = frozenset({"/api/submissions", "/me/submit"})


def create_app(config: Any, state: Callable[[], LadderState]) -> FastAPI:
    """The site and API of the ladder in ``config.directory``; ``state`` gives the loop's latest standings.

    ``config``: the ladder's :class:`~arena.ladder.config.LadderConfig`, or the
    site's part of it (:class:`~arena.ladder.site.settings.SiteSettings`).
    """
    site = Site(config, state)
    app = FastAPI(
        title=f"Spades arena ladder: {site.settings.name}",
        description="The ladder's JSON API (docs/ladder.md). Team calls take `Authorization: Bearer TEAM_TOKEN`.",
        docs_url=None,  # the interactive page loads scripts from elsewhere: the schema is /openapi.json
        redoc_url=None,
    )
    app.state.site = site
    app.state.join_guard = JoinGuard()  # bounds wrong join and invite codes per address (arena.ladder.site.join)
    app.state.sign_up_guard = JoinGuard(window_s=SIGN_UP_WINDOW_S)  # bounds new teams per address ([roster] teams_per_hour)
    for router in (public_router, team_router, admin_router, api_router, join_router, final_router, live_router):
        app.include_router(router)
    install_practice(app, site, config)  # practice tables (arena.ladder.site.practice)
    site.practice_panel = lambda team: practice_panel(site, team)  # /me's practice section
    app.add_exception_handler(DiskFull, disk_full)
    app.add_exception_handler(OSError, disk_full)
    # The ladder's stylesheet and the replay viewer's script and style (arena.publish's assets), the table page's (arena.play).
    app.mount("/static", StaticFiles(packages=[("arena.ladder.site", "static"), ("arena.publish", "assets"), ("arena.play", "static")]), name="static")
    _add_uploads(app, site, config)
    _add_sign_in(app, site)
    return app


def _add_uploads(app: FastAPI, site: Site, config: UploadSettings) -> None:
    """The two upload routes (the API's and the team page's form): they read a body of their own."""
    store = site.store  # each thread's own connection (arena.ladder.site.queries.PerThread)

    async def submit(request: Request, who: Viewer) -> Version:
        """A team's upload (arena.ladder.site.uploads): the team is known before a byte of the body is read."""
        if who.team is None:
            raise HTTPException(401, "sign in with your team's token", headers={"Connection": "close"})
        team = await run_in_threadpool(store.team, who.team)
        if team is not None and team.pending:
            raise HTTPException(403, "your team waits for the organiser's approval: uploads open once it is approved",
                                headers={"Connection": "close"})  # fmt: skip
        return await receive_upload(request, config, store, who.team, lambda version: source_dir(config, version),
                                    member=who.member or "")  # fmt: skip

    @app.post("/api/submissions", status_code=201, openapi_extra=OPENAPI_BODY)
    async def api_submit(request: Request, who: Who) -> JSONResponse:
        """Upload a bot directory as a tar archive (multipart `bot`, and a `note`): built, validated, then ranked."""
        version = await submit(request, who)
        return JSONResponse(site.version_private(version), status_code=201)

    @app.post("/me/submit", include_in_schema=False)
    async def me_submit(request: Request, who: Who) -> Response:
        if who.team is None:
            return RedirectResponse("/signin", status_code=303, headers={"Connection": "close"})  # body unread
        try:
            await submit(request, who)
        except HTTPException as exc:
            return await run_in_threadpool(submit_refused, site, who, exc)  # it reads the stores: never on the loop
        return RedirectResponse("/me", status_code=303)


def _add_sign_in(app: FastAPI, site: Site) -> None:
    """Sign-in and sign-out: the routes that set or clear the session cookie."""
    store = site.store

    @app.get("/signin", response_class=HTMLResponse, include_in_schema=False)
    async def signin_page(who: Who) -> HTMLResponse:
        return site.page("signin.html", who, error=None)

    @app.post("/signin", include_in_schema=False)
    def signin(request: Request, token: Annotated[str, Form()]) -> Response:  # a thread: its writes may wait
        token = token.strip()
        if store.is_admin_token(token):
            session, where = store.new_session(None, True), "/admin"
        else:
            identity = store.identify(token)  # the team's shared token, or one member's own
            if identity is None:
                return site.page("signin.html", Viewer(), error="That token is not a team's or a member's (or it was rotated or revoked).")
            member_id = identity.member.id if identity.member else None
            session, where = store.new_session(identity.team.name, False, member_id), "/me"
        response = RedirectResponse(where, status_code=303)
        response.set_cookie(COOKIE, session, httponly=True, samesite="strict", secure=request.url.scheme == "https",
                            max_age=7 * 24 * 3600, path="/")  # fmt: skip
        return response

    @app.post("/signout", include_in_schema=False)
    def signout(request: Request) -> Response:  # a thread: its write may wait
        session = request.cookies.get(COOKIE)
        if session:
            store.end_session(session)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response


def submit_refused(site: Site, who: Viewer, exc: HTTPException) -> Response:
    """The team's page saying why its upload was refused (blocking: the stores are read, so in a worker thread)."""
    assert who.team is not None
    shown = site.page("me.html", who, me=site.me(who.team, who.member), games=site.recent_games(30, who.team),
                      error=exc.detail)  # fmt: skip
    shown.headers.update(exc.headers or {})  # Connection: close when the rest of the body was not read
    return shown


#: What a request that needed the full disk is told (it kept nothing: try again later).
DISK_FULL = "the ladder's disk is full: nothing of this request was kept; try again in a few minutes"


async def disk_full(request: Request, exc: Exception) -> Response:
    """A write the full disk refused (an upload, a sign-in): 503 with ``Retry-After``, not a bare 500.

    Anything else that reaches here (another ``OSError``) stays the server error it is.
    """
    if not out_of_space(exc):
        raise exc
    return JSONResponse({"detail": DISK_FULL}, status_code=503, headers={"Retry-After": "60", "Connection": "close"})


def wrap(app: FastAPI, config: UploadSettings) -> ASGIApp:
    """The app behind its guards (arena.ladder.site.guard), outermost first.

    Security headers on every answer (the guards' refusals too); the Origin
    check of state-changing requests; the body limit (the upload cap plus
    room for the form's other fields on the upload routes, 64 KiB elsewhere).
    """
    limited = BodyLimit(app, SMALL_BODY, config.submissions.max_bytes + FORM_SLACK, UPLOAD_PATHS)
    return SecurityHeaders(OriginCheck(limited, frozenset({"/signin"}) | SIGN_UP_PATHS))


__all__ = ["COOKIE", "PAGE_CSP", "BodyLimit", "Viewer", "create_app", "wrap"]
