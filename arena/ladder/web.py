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
session cookie is ``HttpOnly`` and ``SameSite=Strict`` (so no other site can
post a form with it).  A team asking for another team's private page or log
gets 404, the same answer as for something that does not exist.
"""


import json
import secrets
import shutil
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.ladder.paths import source_dir
from arena.ladder.site.admin import router as admin_router
from arena.ladder.site.api import router as api_router
from arena.ladder.site.context import COOKIE, PAGE_CSP, Site, Viewer, Who, team_only
from arena.ladder.site.public import router as public_router
from arena.ladder.site.team import router as team_router
from arena.ladder.state import LadderState
from arena.ladder.store import (
    QUEUED,
    LadderError,
    Version,
)
from arena.ladder.uploads import unpack
from arena.sandbox.bot_dir import BotDirError

if TYPE_CHECKING:  # the configuration's module loads the tournament's parsers (and with them the referee)
    from arena.ladder.config import LadderConfig

#: Bytes a request body may have beyond the upload cap (the form's other fields, multipart framing).
FORM_SLACK = 64 * 1024


class BodyLimit:
    """Refuse a request body over ``limit`` bytes (413) while it arrives, declared length or not."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _too_large(send, self.limit)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    body = json.dumps({"detail": f"the upload is over the ladder's limit of {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def create_app(config: Any, state: Callable[[], LadderState]) -> FastAPI:
    """The site and API of the ladder in ``config.directory``; ``state`` gives the loop's latest standings.

    ``config``: the ladder's :class:`~arena.ladder.config.LadderConfig`, or the
    site's part of it (:class:`~arena.ladder.site.settings.SiteSettings`).
    """
    site = Site(config, state)
    directory = site.directory
    store = site.store  # each thread's own connection (arena.ladder.queries.PerThread)
    app = FastAPI(
        title=f"Spades arena ladder: {site.settings.name}",
        description="The ladder's JSON API (docs/ladder.md). Team calls take `Authorization: Bearer TEAM_TOKEN`.",
        docs_url=None,  # the interactive page loads scripts from elsewhere: the schema is /openapi.json
        redoc_url=None,
    )
    app.state.site = site
    for router in (public_router, team_router, admin_router, api_router):
        app.include_router(router)
    # The ladder's stylesheet and the replay viewer's script and style (arena.publish's assets).
    app.mount("/static", StaticFiles(packages=[("arena.ladder", "static"), ("arena.publish", "assets")]), name="static")

    page = site.page
    version_private = site.version_private
    me = site.me
    recent_games = site.recent_games

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Content-Security-Policy", PAGE_CSP)
        return response

    # ------------------------------------------------------------ what reads a body or sets a cookie

    async def submit(who: Viewer, bot: UploadFile, note: str) -> Version:
        team = team_only(who)
        if len(note) > 500:
            raise HTTPException(400, "the note is over 500 characters")
        tmp = directory / "tmp"
        tmp.mkdir(exist_ok=True)
        stem = secrets.token_hex(8)
        archive, unpacked = tmp / f"upload-{stem}", tmp / f"unpack-{stem}"
        try:
            size = 0
            with archive.open("wb") as f:
                while chunk := await bot.read(1 << 20):
                    size += len(chunk)
                    if size > config.submissions.max_bytes:
                        raise HTTPException(413, f"the upload is over the ladder's limit of {config.submissions.max_bytes} bytes")
                    f.write(chunk)
            try:
                await run_in_threadpool(unpack, config, archive, unpacked)
            except BotDirError as exc:
                raise HTTPException(400, f"the upload was refused: {exc}") from None
            if not (unpacked / "bot.py").is_file() and not (unpacked / "Dockerfile").is_file():
                raise HTTPException(400, "the upload has neither bot.py nor a Dockerfile at its top (docs/packaging.md)")
            try:
                version = store.add_version(team, note, config.submissions.daily_quota)
            except LadderError as exc:
                raise HTTPException(429, str(exc)) from None
            target = source_dir(config, version)
            target.parent.mkdir(parents=True, exist_ok=True)
            unpacked.rename(target)
            store.set_status(version.id, QUEUED)  # only now can the builder take it
            found = store.version(version.id)
            assert found is not None
            return found
        finally:
            archive.unlink(missing_ok=True)
            shutil.rmtree(unpacked, ignore_errors=True)

    @app.post("/api/submissions", status_code=201)
    async def api_submit(who: Who, bot: Annotated[UploadFile, File()], note: Annotated[str, Form()] = "") -> JSONResponse:
        """Upload a bot directory as a tar archive (gzip, bzip2, xz or plain): built, validated, then ranked."""
        version = await submit(who, bot, note)
        return JSONResponse(version_private(version), status_code=201)

    @app.get("/signin", response_class=HTMLResponse, include_in_schema=False)
    async def signin_page(who: Who) -> HTMLResponse:
        return page("signin.html", who, error=None)

    @app.post("/signin", include_in_schema=False)
    def signin(request: Request, token: Annotated[str, Form()]) -> Response:  # a thread: its writes may wait
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
    def signout(request: Request) -> Response:  # a thread: its write may wait
        session = request.cookies.get(COOKIE)
        if session:
            store.end_session(session)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.post("/me/submit", include_in_schema=False)
    async def me_submit(who: Who, bot: Annotated[UploadFile, File()], note: Annotated[str, Form()] = "") -> Response:
        if who.team is None:
            return RedirectResponse("/signin", status_code=303)
        try:
            await submit(who, bot, note)
        except HTTPException as exc:
            return page("me.html", who, me=me(who.team), games=recent_games(30, who.team), error=exc.detail)
        return RedirectResponse("/me", status_code=303)

    return app


def wrap(app: FastAPI, config: "LadderConfig") -> ASGIApp:
    """The app behind its body limit (the upload cap plus room for the form's other fields)."""
    return BodyLimit(app, config.submissions.max_bytes + FORM_SLACK)


__all__ = ["COOKIE", "PAGE_CSP", "BodyLimit", "Viewer", "create_app", "wrap"]
