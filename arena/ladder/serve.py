"""``arena ladder serve``: one ladder's loop and its web site in one process, composed.

The loop (:class:`~arena.ladder.service.LadderService`) runs under trio in
the main thread; the site (:func:`~arena.ladder.site.app.create_app` behind
its guards, :mod:`arena.ladder.site.http_server`'s uvicorn) in a thread of
its own.  They share the two stores' files (each thread on its own
connections) and one thing in memory: the loop's latest
:class:`~arena.ladder.games.state.LadderState`, replaced whole, which the
site reads.  Ctrl-C and SIGTERM stop the loop (its tables and builds end,
what is stored is kept), then the site (requests in flight get
``[server] shutdown_timeout``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import trio
import uvicorn

from arena.errors import ArenaError
from arena.ladder.common.paths import source_dir
from arena.ladder.config import LadderConfig
from arena.ladder.service import LadderEvent, LadderService, open_results
from arena.ladder.site import http_server
from arena.ladder.site.app import create_app, wrap
from arena.ladder.store import LadderStore
from arena.ladder.versions.lifecycle import UPLOADING
from arena.sandbox.tree import remove_tree
from arena.tables.players import TablePlayer

#: How often the loop looks whether the site has started listening (seconds).
START_POLL_S = 0.05
#: Seconds beyond ``shutdown_timeout`` the site's thread gets to end.
JOIN_SLACK_S = 10.0


def recover_uploads(config: LadderConfig, store: LadderStore) -> None:
    """What a killed server left of uploads: half-received files, and versions whose files never arrived."""
    remove_tree(config.directory / "tmp", ignore_errors=True)  # hostile trees: never recursive
    for version in store.versions(status=UPLOADING):
        remove_tree(source_dir(config, version), ignore_errors=True)
        store.delete_version(version.id)


class LadderServer:
    """One ladder served (see the module docstring): :meth:`start`, ``trio.run(server.run, ...)``, :meth:`close`.

    ``host`` and ``port`` override ``[server]``'s (port 0: a free one); ``on_event``: each console line.
    """

    def __init__(
        self, config: LadderConfig, store: LadderStore, player: TablePlayer, *,
        host: str | None, port: int | None, on_event: Callable[[LadderEvent], None],
    ) -> None:  # fmt: skip
        self.config, self.store = config, store
        self.host = host or config.host
        self.port = config.port if port is None else port
        self.results = open_results(config, store.meta()["ladder_id"])
        self.service = LadderService(config, store, self.results, player, on_event=on_event,
                                     builders=config.submissions.builders)  # fmt: skip
        app = create_app(config, lambda: self.service.state)
        self.server = uvicorn.Server(http_server.server_config(wrap(app, config), self.host, self.port, config.server))
        self.web = threading.Thread(target=http_server.run, args=(self.server,), name="arena-ladder-web", daemon=True)

    @property
    def started(self) -> bool:
        """Whether the site listened (False: it could not start, e.g. its port was taken)."""
        return bool(self.server.started)

    def start(self) -> None:
        """Start the site's thread (it listens soon after; :meth:`run` waits for it)."""
        self.web.start()

    async def run(self, announce: Callable[[str], None]) -> ArenaError | None:
        """Once the site listens (its address to ``announce``), the loop until Ctrl-C, SIGTERM or a store error.

        Returns what stopped the ladder when it could not go on (a full disk: one line), else None.
        """
        stopped_by: ArenaError | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_signals)
            while not self.server.started and self.web.is_alive():
                await trio.sleep(START_POLL_S)
            if not self.web.is_alive():
                self.service.stop.set()
            else:
                bound = self.server.servers[0].sockets[0].getsockname() if self.server.servers else (self.host, self.port)
                announce(f"http://{bound[0]}:{bound[1]}/")
                try:
                    await self.service.run()
                except ArenaError as exc:
                    stopped_by = exc
            nursery.cancel_scope.cancel()
        return stopped_by

    async def _watch_signals(self) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                self.service.stop.set()
                return

    def close(self) -> bool:
        """Stop the site (requests in flight are cut after ``shutdown_timeout``) and close the stores.

        False when the site's thread did not end in time (the process exits without it).
        """
        self.server.should_exit = True
        self.web.join(timeout=self.config.server.shutdown_timeout + JOIN_SLACK_S)
        ended = not self.web.is_alive()
        self.results.close()
        self.store.close()
        return ended


__all__ = ["LadderServer", "recover_uploads"]
