"""The table's web page and its WebSocket: FastAPI, served by uvicorn on 127.0.0.1.

Routes (``KEY`` is the table's secret, :attr:`arena.play.table.PlayTable.key`):

- ``GET /t/KEY``: the table page (HTML, our own CSS and one script; no inline
  script, nothing from another origin: :data:`PAGE_CSP`);
- ``WS /t/KEY/ws``: the page's connection.  The server pushes the table's
  snapshot on every change (``{"type": "state", "state": ...}``); the page sends
  ``{"type": "answer", "request_id": N, "action": "SA"}`` and
  ``{"type": "compare", "game": G, "hand": H, "bot": "hard"}``, ``{"type": "hint",
  "request_id": N}`` (Hard's choice for the open decision), ``{"type": "undo",
  "request_id": N}`` (back to the previous decision) and ``{"type": "new_game"}``
  (answered ``{"type": "moved", "key": KEY}``: the next table's key).  A refused
  message gets ``{"type": "refused", "message": ...}`` and the decision stays open.
  One page per table: a second one takes over and the first gets
  ``{"type": "taken_over"}`` and is closed (code 4001);
- ``GET /t/KEY/replay/GAME_ID``: the replay viewer of a finished game;
- ``/static/...``: the CSS and the script.

The table's routes are :func:`add_table_routes`: ``arena play`` puts them
under ``/t`` here; the ladder's site puts the same routes under ``/practice``
for its practice tables (:mod:`arena.ladder.site.practice`), with a lookup
that binds each table to the team that opened it.

Requests from other sites are refused: a WebSocket whose ``Origin`` is not
this server's own is closed before it is accepted (code 1008: the browser
sees the handshake fail), any request other than GET/HEAD from another origin
gets 403, and a ``Host`` that is not the loopback name the server was started
on gets 400 (no DNS rebinding).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import HTTPConnection

from arena.play.seat import AnswerRefused
from arena.play.table import PlayTable, dumps

#: Every page's policy: our own script and stylesheet, the WebSocket back to us, nothing else.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: The WebSocket close code a page gets when another page took its seat over.
TAKEN_OVER = 4001
#: The largest message a page may send (an answer is a few dozen bytes).
MAX_MESSAGE_CHARS = 4096
#: Host names the server answers to (with its port): loopback only.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


@cache
def _templates() -> Environment:
    return Environment(
        loader=PackageLoader("arena.play", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
    )


def _replay_csp() -> str:
    """The replay viewer's policy: its inline script admitted by hash, as its own <meta> says."""
    from arena.publish.viewer import asset

    digest = base64.b64encode(hashlib.sha256(asset("replay.js").encode()).digest()).decode()
    return f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; frame-ancestors 'none'"


def same_origin(origin: str | None, host: str | None) -> bool:
    """True when ``origin`` (the request's Origin header) is this server's own ``http://HOST``."""
    return bool(origin) and bool(host) and origin == f"http://{host}"


class Seats:
    """Which page holds each table's seat: one at a time, the newest wins."""

    def __init__(self) -> None:
        self._holder: dict[str, Connection] = {}

    def take(self, key: str, connection: Connection) -> Connection | None:
        """``connection`` now holds table ``key``'s seat; returns the one it took it from."""
        previous = self._holder.get(key)
        self._holder[key] = connection
        return previous

    def release(self, key: str, connection: Connection) -> None:
        if self._holder.get(key) is connection:
            del self._holder[key]


class Connection:
    """One page's WebSocket: sends are serialised (state pushes and replies share it)."""

    def __init__(self, socket: WebSocket) -> None:
        self.socket = socket
        self.lock = asyncio.Lock()
        self.dirty = asyncio.Event()
        self.closed = False

    async def send(self, message: Mapping[str, Any]) -> None:
        if self.closed:
            return
        async with self.lock:
            with contextlib.suppress(Exception):  # the page went away: its receive loop ends it
                await self.socket.send_text(dumps(message))


def create_app(tables: Mapping[str, PlayTable], *, hosts: tuple[str, ...] = LOOPBACK_HOSTS) -> FastAPI:
    """The web app for ``tables`` (by key); ``hosts``: the Host names it answers to."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    static = files("arena.play") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        origin = request.headers.get("origin")
        if request.method not in ("GET", "HEAD") and not same_origin(origin, request.headers.get("host")):
            return Response("cross-origin requests are refused", status_code=403, media_type="text/plain")
        response = await call_next(request)
        response.headers.setdefault("Content-Security-Policy", PAGE_CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        response.headers.setdefault("Cross-Origin-Resource-Policy", "same-origin")
        return response

    # Outermost: a request for another host name (DNS rebinding) never reaches a route.
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))

    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        html = _templates().get_template("index.html").render()
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    async def lookup(key: str, connection: HTTPConnection) -> PlayTable | None:
        return tables.get(key)

    def origin_ok(connection: HTTPConnection) -> bool:
        return same_origin(connection.headers.get("origin"), connection.headers.get("host"))

    add_table_routes(app, lookup, prefix="/t", origin_ok=origin_ok)
    return app


def add_table_routes(
    app: FastAPI | APIRouter,
    lookup: Callable[[str, HTTPConnection], Awaitable[PlayTable | None]],
    *,
    prefix: str,
    origin_ok: Callable[[HTTPConnection], bool],
) -> None:
    """The table page, its replays and its WebSocket under ``PREFIX/KEY`` (``arena play``: ``/t``; the ladder's
    practice tables: ``/practice``).

    ``lookup`` finds the table of a key for the asking connection (None: 404,
    and a WebSocket refused): the ladder's binds it to the team's session.
    ``origin_ok`` says whether a WebSocket comes from the server's own pages.
    The page loads ``/static/play.css`` and ``/static/play.js``: the app serves them.
    """
    seats = Seats()

    async def table_or_404(key: str, connection: HTTPConnection) -> PlayTable:
        table = await lookup(key, connection)
        if table is None:
            raise HTTPException(404, "no such table")
        return table

    @app.get(prefix + "/{key}", include_in_schema=False)
    async def table_page(key: str, request: Request) -> HTMLResponse:
        table = await table_or_404(key, request)
        html = _templates().get_template("table.html").render(base=f"{prefix}/{key}", players=table.players)
        return HTMLResponse(html, headers={"Cache-Control": "no-store", "Content-Security-Policy": PAGE_CSP})

    @app.get(prefix + "/{key}/replay/{game_id}", include_in_schema=False)
    async def replay_page(key: str, game_id: str, request: Request) -> HTMLResponse:
        from arena.publish.steps import game_steps
        from arena.publish.viewer import standalone_html

        path = (await table_or_404(key, request)).replay_record(game_id)
        if path is None:
            raise HTTPException(404, "no such game")
        html = standalone_html(game_steps(json.loads(path.read_text(encoding="utf-8")), with_notes=True))
        return HTMLResponse(html, headers={"Content-Security-Policy": _replay_csp(), "Cache-Control": "no-store"})

    @app.websocket(prefix + "/{key}/ws")
    async def table_socket(socket: WebSocket, key: str) -> None:
        table = await lookup(key, socket) if origin_ok(socket) else None
        if table is None:
            await socket.close(code=1008)  # before accept: the handshake is refused (HTTP 403)
            return
        await socket.accept()
        connection = Connection(socket)
        previous = seats.take(key, connection)
        if previous is not None:
            await previous.send({"type": "taken_over"})
            previous.closed = True
            with contextlib.suppress(Exception):
                await previous.socket.close(code=TAKEN_OVER)
        table.listeners.append(connection.dirty.set)
        table.seat.page_connected()
        connection.dirty.set()
        pusher = asyncio.create_task(_push(table, connection))
        try:
            await _receive(table, connection)
        finally:
            pusher.cancel()
            connection.closed = True
            table.listeners.remove(connection.dirty.set)
            seats.release(key, connection)
            table.seat.page_disconnected()


async def _push(table: PlayTable, connection: Connection) -> None:
    """Send the table's snapshot whenever it changed (changes in between are folded into one)."""
    while not connection.closed:
        await connection.dirty.wait()
        connection.dirty.clear()
        await connection.send({"type": "state", "state": table.snapshot()})


async def _receive(table: PlayTable, connection: Connection) -> None:
    """Read the page's messages until it goes; each is checked, a bad one answered with a message."""
    socket = connection.socket
    while not connection.closed:
        try:
            text = await socket.receive_text()
        except (WebSocketDisconnect, RuntimeError, KeyError):
            return
        reply = _handle(table, text)
        if reply is not None:
            await connection.send(reply)
            connection.dirty.set()  # the page shows the same decision again


def _int(message: dict[str, Any], key: str) -> int | None:
    value = message.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _handle(table: PlayTable, text: str) -> dict[str, Any] | None:
    """Carry out one message from the page; returns the reply it needs (a refusal with a message for
    the person, or where the next table is), or None."""
    problem = _carry_out(table, text)
    if isinstance(problem, dict):
        return problem
    if problem is not None:
        return {"type": "refused", "message": problem}
    return None


def _carry_out(table: PlayTable, text: str) -> str | dict[str, Any] | None:
    if len(text) > MAX_MESSAGE_CHARS:
        return "that message is too long"
    try:
        message = json.loads(text)
    except ValueError:
        return "that message cannot be read"
    if not isinstance(message, dict):
        return "that message cannot be read"
    kind = message.get("type")
    if kind == "answer":
        request_id, action = _int(message, "request_id"), message.get("action")
        if request_id is None or not isinstance(action, str):
            return "an answer needs a request_id and an action"
        try:
            table.seat.answer(request_id, action)
        except AnswerRefused as exc:
            return str(exc)
        return None
    if kind in ("hint", "undo"):
        request_id = _int(message, "request_id")
        if request_id is None:
            return f"a {kind} needs the request_id of the open decision"
        return table.hint(request_id) if kind == "hint" else table.undo(request_id)
    if kind == "compare":
        game, hand, bot = _int(message, "game"), _int(message, "hand"), message.get("bot")
        if game is None or hand is None or not isinstance(bot, str):
            return "a comparison needs a game, a hand and a bot"
        return table.compare(game, hand, bot)
    if kind == "new_game":
        if table.new_game is None or not table.finished:
            return "a new game can be opened here once this one is over"
        return {"type": "moved", "key": table.new_game(table)}
    return "unknown request"
