"""A Docker engine API on a Unix socket that answers what a test says: an engine that pings but fails.

The Docker client of the arena (docker-py) talks HTTP to it as to a real
engine (``DOCKER_HOST=unix://...``), so the arena's own code meets the
engine's errors exactly as it would meet a real engine's.
"""

from __future__ import annotations

import json
import re
import socketserver
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

#: An answer: (HTTP status, JSON body).
Answer = tuple[int, Any]
#: A route: (method, path pattern without the API version, answer or a function of the match giving one).
Route = tuple[str, str, "Answer | Callable[[re.Match[str]], Answer]"]

BASE: list[Route] = [
    ("GET", r"/_ping", (200, "OK")),
    ("HEAD", r"/_ping", (200, "OK")),
    ("GET", r"/version", (200, {"ApiVersion": "1.41", "Version": "20.10.24", "MinAPIVersion": "1.12"})),
]


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@contextmanager
def fake_engine(socket: Path, routes: list[Route]) -> Iterator[list[tuple[str, str]]]:
    """Serve ``routes`` (then the ping and version) on ``socket`` while the block runs; yields the requests seen.

    A request no route answers gets a 500 naming it (so a test sees what it did not expect).
    """
    seen: list[tuple[str, str]] = []
    table = [*routes, *BASE]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self) -> None:
            path = re.sub(r"^/v[0-9.]+", "", self.path.split("?", 1)[0])
            seen.append((self.command, path))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            status, body = 500, {"message": f"the fake engine has no answer for {self.command} {path}"}
            for method, pattern, answer in table:
                found = re.fullmatch(pattern, path)
                if method == self.command and found:
                    status, body = answer(found) if callable(answer) else answer
                    break
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_DELETE = do_HEAD = _answer

        def address_string(self) -> str:  # a Unix socket's peer has no address
            return "fake-engine-client"

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = _Server(str(socket), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
