"""Tables in their own processes on this machine: ``concurrency = N`` uses up to N cores.

Each running table is one child process calling :func:`~arena.tables.task.play_table`
(its referee, its match loop and its gRPC server on the child's own asyncio
loop: the per-decision path crosses no thread and no process).  The
coordinator (the trio runner) meets the child once per game: the child sends
each finished game over a pipe as it ends, so progress and resume keep their
per-game granularity, and the coordinator stays the only writer of the store.

Children come from a ``forkserver`` that has the arena already imported, so a
table starts in milliseconds, not in the time an interpreter takes to import
gRPC.  A child that dies (killed, out of memory) is a platform fault: the
coordinator kills the bots it had started, removes its containers, and the
table's unfinished games are void (and replayed).  When the coordinator goes
away (even ``kill -9``) the children see their pipe close and stop their
tables, removing their bots.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import trio

from arena.sandbox import procfs
from arena.tables.containers import prune_table
from arena.tables.spec import TableGame, TableResult, TableSpec
from arena.tables.task import ImageMismatch, play_table

#: How long a stopped table gets to stop its bots and end before it is killed.
STOP_GRACE_S = 20.0
#: How often the coordinator looks at a table's process and the stop flag.
POLL_S = 0.1
#: How often a table process reports the processes it started.
CHILDREN_EVERY_S = 0.25

_context_lock = threading.Lock()
_context: Any = None


def _mp_context() -> Any:
    """The forkserver context, with the table code imported once in the server."""
    global _context
    with _context_lock:
        if _context is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["arena.tables.task"])
            _context = ctx
        return _context


def _children() -> list[int]:
    """This process's child processes (Linux; empty elsewhere)."""
    pids: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            with contextlib.suppress(OSError):
                pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


def table_process_main(spec: TableSpec, conn: Connection) -> None:
    """The body of a table process: play the table, streaming each game to the coordinator."""
    # Ctrl-C reaches the whole foreground process group: only the coordinator decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    state = {"stopped": False, "reported": (), "at": 0.0}

    def stop() -> bool:
        if not state["stopped"]:
            try:
                if conn.poll():
                    conn.recv()  # any message means stop
                    state["stopped"] = True
            except (EOFError, OSError):  # the coordinator is gone
                state["stopped"] = True
        now = time.monotonic()
        if now - state["at"] >= CHILDREN_EVERY_S:
            state["at"] = now
            # Each bot with its start time: the coordinator kills a pid only while it is still this process.
            pids = tuple((pid, procfs.start_time(pid)) for pid in _children())
            if pids != state["reported"]:
                state["reported"] = pids
                _send(conn, ("pids", pids))
        return bool(state["stopped"])

    try:
        result = play_table(
            spec, on_game=lambda game: _send(conn, ("game", game)), stop=stop,
            on_live=lambda *event: _send(conn, ("live", *event)),
        )  # fmt: skip
        result.games = []  # already sent one by one
        _send(conn, ("done", result))
    except ImageMismatch as exc:
        _send(conn, ("mismatch", exc.entry, str(exc)))
    except BaseException as exc:  # noqa: BLE001 - reported to the coordinator, which voids the table
        _send(conn, ("error", f"{type(exc).__name__}: {exc}"))


def _send(conn: Connection, message: tuple[Any, ...]) -> None:
    with contextlib.suppress(OSError):  # the coordinator is gone: nobody to tell
        conn.send(message)


async def play_table_in_process(
    spec: TableSpec,
    on_game: Callable[[TableGame], None],
    stop: threading.Event,
    cleanup: Callable[[TableSpec], None] | None = None,
    on_live: Callable[[str, int, bytes], None] | None = None,
) -> TableResult:
    """Play ``spec`` in a new table process; ``on_game`` runs on the calling (trio) thread per game.

    Returns the table's result (its ``games`` are those passed to
    ``on_game``).  If the process dies, ``error`` says how, the bots it
    started are killed and ``cleanup`` runs (default: remove the table's
    containers, when it has any).
    """
    if cleanup is None and spec.uses_docker:
        cleanup = prune_table
    ctx = _mp_context()
    parent, child = ctx.Pipe()
    process = ctx.Process(target=table_process_main, args=(spec, child), name=f"arena-table-{spec.table_id}")
    await trio.to_thread.run_sync(process.start)
    child.close()
    games: list[TableGame] = []
    bots: tuple[tuple[int, int], ...] = ()
    result: TableResult | None = None
    stop_sent_at: float | None = None
    try:
        while True:
            if stop.is_set() and stop_sent_at is None:
                with contextlib.suppress(OSError):
                    parent.send("stop")
                stop_sent_at = time.monotonic()
            if stop_sent_at is not None and time.monotonic() - stop_sent_at > STOP_GRACE_S:
                process.kill()
            with trio.move_on_after(POLL_S):
                await trio.lowlevel.wait_readable(parent.fileno())
            if not parent.poll():
                if process.exitcode is not None and not parent.poll():
                    break
                continue
            try:
                message = parent.recv()
            except (EOFError, OSError):
                break  # the process ended
            kind = message[0]
            if kind == "game":
                games.append(message[1])
                on_game(message[1])
            elif kind == "live":  # a spec.live table's public view after a decision
                if on_live is not None:
                    on_live(*message[1:])
            elif kind == "pids":
                bots = message[1]
            elif kind == "done":
                result = message[1]
            elif kind == "mismatch":
                raise ImageMismatch(message[1], message[2].split(": ", 1)[-1])
            elif kind == "error":
                result = TableResult(spec.table_id, [], {}, error=message[1])
    finally:
        with trio.CancelScope(shield=True):
            await _reap(process, stop_sent_at is not None or result is not None)
            parent.close()
            if result is None:
                # Died without a word (killed, out of memory): its bots are orphans now.
                _kill_groups(bots)
                if cleanup is not None:
                    await trio.to_thread.run_sync(cleanup, spec)
    if result is None:
        code = process.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        result = TableResult(spec.table_id, [], {}, error=f"the table process died ({how})")
    result.games = games
    return result


async def _reap(process: Any, ending: bool) -> None:
    """Wait for the process to end (it has said its last, or was told to stop), killing it if it does not."""
    deadline = time.monotonic() + (STOP_GRACE_S if ending else 0.0)
    while process.exitcode is None and time.monotonic() < deadline:
        await trio.sleep(POLL_S)
    if process.exitcode is None:
        process.kill()
        await trio.to_thread.run_sync(process.join, 5.0)


def _kill_groups(bots: tuple[tuple[int, int], ...]) -> None:
    """Kill what a dead table process had started (each bot leads its own process group).

    ``bots`` are (pid, start time) as the table process reported them. A pid
    is signalled only while it is still that process (its start time the
    same): by the time a table is found dead its bots may be gone and their
    pids given to someone else's processes. A leader already gone leaves its
    group killed (while any member lives, the kernel gives no one its pid);
    a pid that now names another process is left alone.
    """
    for pid, started in bots:
        now = procfs.stat(pid)
        if now is not None and now.start != started:
            continue  # reused: not ours
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        if now is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


__all__ = ["play_table_in_process", "table_process_main"]
