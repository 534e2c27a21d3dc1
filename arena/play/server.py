"""Serve one table: uvicorn on 127.0.0.1 and the table's match, on one event loop.

The referee (grpc.aio), the seat adapter and the web app share the loop, so a
click reaches the referee without crossing a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable

import uvicorn

from arena.play.table import PlayTable
from arena.play.web import MAX_MESSAGE_CHARS, create_app

#: The only address a table is served on: this machine.
HOST = "127.0.0.1"


def table_url(port: int, table: PlayTable) -> str:
    """The table page's address."""
    return f"http://{HOST}:{port}/t/{table.key}"


async def serve_table(
    table: PlayTable,
    *,
    port: int = 0,
    on_ready: Callable[[str], None] = lambda url: None,
    on_match_end: Callable[[PlayTable], None] = lambda table: None,
    exit_when_done: bool = False,
) -> None:
    """Serve ``table`` on ``HOST:port`` (0: any free port) and play its match.

    ``on_ready`` gets the page's URL once the server listens.  After the match
    the page stays up (its replay links) until the server is stopped (Ctrl-C),
    or ``exit_when_done``.  Stopping the server during the match stops the match.
    """
    app = create_app({table.key: table}, hosts=(HOST, "localhost"))
    config = uvicorn.Config(
        app, host=HOST, port=port, log_level="warning", lifespan="off", ws_max_size=4 * MAX_MESSAGE_CHARS,
        server_header=False, proxy_headers=False,
    )  # fmt: skip
    server = uvicorn.Server(config)
    # Bound here, not by uvicorn: a port in use is an OSError to report, not uvicorn's exit.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, port))
    except OSError as exc:
        listener.close()
        raise OSError(f"{HOST}:{port}: {exc.strerror or exc}") from None
    served = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started:
        if served.done():
            listener.close()
            await served
            raise OSError(f"could not serve on {HOST}:{port}")
        await asyncio.sleep(0.02)
    on_ready(table_url(listener.getsockname()[1], table))
    match = asyncio.create_task(table.run())
    try:
        done, _ = await asyncio.wait({served, match}, return_when=asyncio.FIRST_COMPLETED)
        if match in done and match.exception() is None:
            on_match_end(table)
            if not exit_when_done:
                await served
    finally:
        server.should_exit = True
        if not match.done():
            match.cancel()
        for task in (match, served):
            with contextlib.suppress(BaseException):
                await task
        await table.close()
        listener.close()
    if match.done() and not match.cancelled() and match.exception() is not None:
        raise match.exception()  # type: ignore[misc]
