"""The site's guards at the ASGI edge: which requests reach the app at all, and the headers every answer carries.

- :class:`OriginCheck`: a state-changing request (any method but GET, HEAD,
  OPTIONS) that carries a cookie must come from the site's own origin (its
  ``Origin`` header, else its ``Referer``; neither, or another origin, is 403).
  ``SameSite=Strict`` does not cover this: a page on another port of the same
  host, or on a sibling subdomain, is *same-site* and its forms carry the
  cookie.  The sign-in form is checked too (login CSRF: another site signing a
  visitor into the attacker's team).  A request with an ``Authorization``
  header is not checked: a browser never adds one to a cross-site request
  (and no CORS grant lets a script add it), so a Bearer call is the caller's own.
- :class:`BodyLimit`: a body over its limit is refused with 413 as it
  arrives, declared length or not (chunked); any answer sent before the
  request's body was read in full closes the connection (the rest is never read).
- :class:`SecurityHeaders`: every answer, the guards' own refusals and the
  replay pages included, carries a Content-Security-Policy with
  ``frame-ancestors 'none'``, ``X-Frame-Options: DENY``, ``nosniff`` and a
  ``same-origin`` Referrer-Policy.

The site's own origin is the request's scheme and ``Host``: behind the TLS
proxy the scheme is the one the proxy forwards (``X-Forwarded-Proto``,
believed only from ``[server] trusted_proxies``; see :mod:`arena.ladder.site.http_server`).
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Every page's policy: our own stylesheet and nothing else (no script at all), never framed.
PAGE_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
#: Methods that change nothing (no origin check).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Headers every answer carries (the CSP is handled on its own: a page may bring a stricter one).
FIXED_HEADERS = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # Not no-referrer: under it a browser sends "Origin: null" with the site's own form posts.
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin_of(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a URL or origin; None for ``null`` or anything unparsable."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


def own_origin(scope: Scope) -> tuple[str, str, int] | None:
    """The origin this request was made to: its scheme (as the trusted proxy forwards it) and its Host."""
    host = _header(scope, b"host")
    if host is None:
        return None
    return _origin_of(f"{scope.get('scheme', 'http')}://{host.decode('latin-1')}")


def request_origin(scope: Scope) -> tuple[str, str, int] | None:
    """The origin a browser says the request came from (Origin, else Referer); None if it says neither or null."""
    origin = _header(scope, b"origin")
    if origin is not None:
        return _origin_of(origin.decode("latin-1"))
    referer = _header(scope, b"referer")
    return None if referer is None else _origin_of(referer.decode("latin-1"))


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value)
    return None


async def refuse(send: Send, status: int, detail: str) -> None:
    """Answer ``status`` with a JSON ``detail`` and close the connection (the body, if any, is never read)."""
    body = json.dumps({"detail": detail}).encode()
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close")],
    })  # fmt: skip
    await send({"type": "http.response.body", "body": body})


class OriginCheck:
    """Refuse (403) a browser's state-changing request that does not come from the site's own origin.

    Checked: every request but GET, HEAD and OPTIONS that carries a cookie
    (the session: ambient authority a cross-origin form would borrow), and
    every one to ``sign_in_paths`` (which make that authority: login CSRF).
    Not checked: a request with an ``Authorization`` header (a Bearer call:
    no browser adds one across origins), and one with neither cookie nor
    token (it has nothing to borrow; the app answers 401 or 403).
    """

    def __init__(self, app: ASGIApp, sign_in_paths: frozenset[str] = frozenset({"/signin"})) -> None:
        self.app = app
        self.sign_in_paths = sign_in_paths

    def checked(self, scope: Scope) -> bool:
        """Whether the request must come from the site's own origin."""
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS or _header(scope, b"authorization") is not None:
            return False
        return _header(scope, b"cookie") is not None or scope["path"] in self.sign_in_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.checked(scope):
            ours, theirs = own_origin(scope), request_origin(scope)
            if ours is None or theirs != ours:
                await refuse(send, 403, "refused: this request did not come from the ladder's own pages (Origin check)")
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuse a request body over its limit (413) while it arrives, declared length or not.

    ``limit`` for every path; ``upload_limit`` for the paths in ``upload_paths``
    (the upload cap plus room for the form's other fields).
    """

    def __init__(
        self, app: ASGIApp, limit: int, upload_limit: int | None = None, upload_paths: frozenset[str] = frozenset()
    ) -> None:
        self.app = app
        self.limit = limit
        self.upload_limit = limit if upload_limit is None else upload_limit
        self.upload_paths = upload_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload_limit if scope["path"] in self.upload_paths else self.limit
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        seen = 0
        over = False
        started = False
        # Whether the whole body has been read: an answer sent before that closes the connection,
        # so the rest of the body is never read (a refused upload is not received in full).
        body_done = declared in (None, b"0") and _header(scope, b"transfer-encoding") is None

        async def counted() -> Message:
            nonlocal seen, over, body_done
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    # The app sees the client gone (whatever it does with that, its answer is
                    # replaced below): no framework can turn this into a 400.
                    over = True
                    return {"type": "http.disconnect"}
                body_done = body_done or not message.get("more_body", False)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over:
                return  # the app's own answer to a body it could not finish: the 413 below replaces it
            if message["type"] == "http.response.start" and not body_done:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            started = True
            await send(message)

        try:
            await self.app(scope, counted, guarded_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            await _too_large(send, limit)


async def _too_large(send: Send, limit: int) -> None:
    await refuse(send, 413, f"the request is over the ladder's limit of {limit / 1048576:.1f} MiB")


class SecurityHeaders:
    """Every answer's security headers; a page's own Content-Security-Policy is kept, but never without frame-ancestors."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in FIXED_HEADERS} | {b"content-security-policy"}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                policy = _header({"headers": message.get("headers", [])}, b"content-security-policy") or b""
                if not policy.strip():
                    policy = PAGE_CSP.encode()
                elif b"frame-ancestors" not in policy:
                    policy = policy.rstrip(b"; ") + b"; frame-ancestors 'none'"
                message = {**message, "headers": [*kept, *FIXED_HEADERS, (b"content-security-policy", policy)]}
            await send(message)

        await self.app(scope, receive, with_headers)


__all__ = [
    "PAGE_CSP", "BodyLimit", "OriginCheck", "SecurityHeaders", "own_origin", "refuse", "request_origin",
]  # fmt: skip
