"""Serve one table: uvicorn on 127.0.0.1 and the table's match, on one event loop.

The referee (grpc.aio), the seat adapter and the web app share the loop, so a
click reaches the referee without crossing a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import socket
from collections.abc import Callable

import uvicorn

from arena.play.table import PlayTable, new_match_id
from arena.play.web import MAX_MESSAGE_CHARS, create_app

#: The only address a table is served on: this machine.
HOST = "127.0.0.1"


def table_url(port: int, table: PlayTable) -> str:
    """The table page's address."""
    return f"http://{HOST}:{port}/t/{table.key}"


def next_table(done: PlayTable) -> PlayTable:
    """A new table like ``done`` (the same seats, rules and clock): a new match id and a fresh seed."""
    match_id = new_match_id()
    config = dataclasses.replace(
        done.config, match_id=match_id, seed=str(secrets.randbelow(2**63)), out_dir=done.config.out_dir.parent / match_id
    )
    return PlayTable(config, stats=done.stats)


class NewGames:
    """The tables a served table's "New game" button opens: each is served beside it, by key."""

    def __init__(self, first: PlayTable, on_match_end: Callable[[PlayTable], None]) -> None:
        self.tables = {first.key: first}
        self.on_match_end = on_match_end
        self._running: set[asyncio.Task[None]] = set()

    def open_next(self, done: PlayTable) -> str:
        """Start a table like ``done`` (its match begins at once); its key."""
        next_one = next_table(done)
        next_one.new_game = self.open_next
        self.tables[next_one.key] = next_one
        task = asyncio.get_running_loop().create_task(self._run(next_one))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return next_one.key

    async def _run(self, table: PlayTable) -> None:
        try:
            await table.run()
            self.on_match_end(table)
        except Exception:  # noqa: BLE001 - its page says why (PlayTable.error)
            pass
        finally:
            await table.close()

    def stop(self) -> list[asyncio.Task[None]]:
        """Cancel the tables still playing; the tasks to wait for."""
        tasks = list(self._running)
        for task in tasks:
            task.cancel()
        return tasks


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
    the page stays up (its replay links, and a "New game" button that opens
    another table like it: ``on_match_end`` is called for each) until the
    server is stopped (Ctrl-C), or ``exit_when_done``.  Stopping the server
    during the match stops the match.
    """
    host = NewGames(table, on_match_end)
    if not exit_when_done:
        table.new_game = host.open_next
    app = create_app(host.tables, hosts=(HOST, "localhost"))
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
        later = host.stop()
        for task in (match, served, *later):
            with contextlib.suppress(BaseException):
                await task
        await table.close()
        listener.close()
    if match.done() and not match.cancelled() and match.exception() is not None:
        raise match.exception()  # type: ignore[misc]
