"""Tables on a Dask distributed cluster: ``arena tournament run FILE --scheduler tcp://HOST:PORT``.

A table is one Dask task: :func:`cluster_table_task` calls the same table task
(:func:`arena.tables.task.play_table`) a local table process calls, on
the worker's own machine (its Docker engine, its local processes), and returns
plain data.  Each task takes one unit of the workers' ``TABLES`` resource
(``dask worker --resources TABLES=2``).  The coordinator stays the only
writer of the results: a table's games arrive when the task ends and are
stored once per game (a late copy is dropped).

Dask retries a task whose worker died on another worker.  A worker that lacks
an entry's image (or has another image under its tag) does not play the
table: it answers so, the coordinator prints one line saying so (once per
worker and entry), and the table is submitted again to the other workers; if
none is left the run stops with one line.  See docs/cluster.md.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
import threading
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import trio
from rich.console import Console

from arena.errors import ArenaError
from arena.tables.players import RunStopped
from arena.tables.spec import TableGame, TableResult, TableSpec
from arena.tables.task import ImageMismatch, play_table
from arena.text import safe_text

#: The Dask resource a table takes one of.
RESOURCE = "TABLES"
#: Seconds to reach the scheduler at start.
CONNECT_TIMEOUT_S = 10.0
#: How often the coordinator looks at a table's future and the stop flag.
POLL_S = 0.1


#: Where the coordinator's notices go: stderr (stdout may be ``--json``).  The file is looked up
#: at each print, so while the progress bar is live on a terminal the line lands above it.
_notices = Console(stderr=True, soft_wrap=True, highlight=False)


def print_notice(message: str) -> None:
    """One plain-text line on the coordinator's terminal (names and errors in it print literally)."""
    _notices.print(safe_text(message), style="yellow")


class ClusterError(ArenaError):
    """The cluster cannot be used (unreachable, no workers, not installed): one line, nothing stored."""


def check_address(address: str) -> str:
    """``tcp://HOST:PORT`` on a loopback or private address, or ``tls://HOST:PORT``; else :class:`ClusterError`.

    Dask's wire format is pickle: whoever reaches an unencrypted scheduler
    runs code on every worker.  Plain TCP is for loopback and private
    networks only; across the open internet use TLS (docs/cluster.md).
    """
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:
        port = None
        parts = urlsplit("")
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None:
        raise ClusterError(f"scheduler address {address!r}: use tcp://HOST:PORT (or tls://HOST:PORT)")
    if parts.scheme == "tcp":
        try:
            hosts = {info[4][0] for info in socket.getaddrinfo(parts.hostname, port, proto=socket.IPPROTO_TCP)}
        except OSError as exc:
            raise ClusterError(f"scheduler address {address!r}: cannot resolve {parts.hostname} ({exc})") from None
        public = sorted(h for h in hosts if not is_private(h))
        if public:
            raise ClusterError(
                f"scheduler address {address!r} is public ({', '.join(public)}): Dask's wire format is pickle, "
                f"so plain tcp:// is for loopback and private networks only; use tls:// (see docs/cluster.md)"
            )
    return address


def is_private(host: str) -> bool:
    """True for loopback and private addresses (where an unencrypted Dask cluster may listen)."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host == "localhost"
    return ip.is_loopback or ip.is_private or ip.is_link_local


def cluster_table_task(spec: TableSpec) -> TableResult | tuple[str, str, str, str]:
    """The Dask task of one table: play it here, or say this worker lacks an image.

    Returns the :class:`TableResult`, or ``("mismatch", entry, worker, why)``
    when it does not have an entry's image (the
    coordinator then sends the table to another worker).
    """
    from distributed import get_worker

    try:
        return play_table(spec)
    except ImageMismatch as exc:
        return ("mismatch", exc.entry, get_worker().address, exc.detail)


class ClusterTables:
    """Plays tables as tasks on a Dask cluster (a connected :class:`distributed.Client`)."""

    def __init__(self, client: Any, address: str, notice: Callable[[str], None] = print_notice) -> None:
        self.client = client
        self.address = address
        #: Tells the organiser something they can act on (a worker lacking an image) without stopping.
        self.notice = notice
        #: (worker, entry) pairs already reported as passing a table on: one line each, not one per table.
        self._reported: set[tuple[str, str]] = set()

    @classmethod
    def connect(cls, address: str, security: Any = None) -> ClusterTables:
        """Connect to the scheduler and check it has table slots; :class:`ClusterError` if not."""
        check_address(address)
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError(
                "running on a cluster needs Dask distributed: pip install -e '.[cluster]'"
            ) from None
        # The run's own lines say what went wrong; Dask's client logs would repeat it with tracebacks.
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False, security=security)
        except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, comm errors: one line
            raise ClusterError(f"no Dask scheduler answers at {address} ({type(exc).__name__}: {exc})") from None
        tables = cls(client, address)
        if not tables.slots():
            client.close()
            raise ClusterError(
                f"the Dask scheduler at {address} has no worker with a {RESOURCE} resource; "
                f"start workers with `dask worker {address} --resources {RESOURCE}=2`"
            )
        return tables

    def slots(self) -> dict[str, float]:
        """Each worker's address and how many tables it plays at once."""
        workers = self.client.scheduler_info(n_workers=-1).get("workers", {})
        return {
            addr: float((info.get("resources") or {}).get(RESOURCE, 0))
            for addr, info in workers.items()
            if (info.get("resources") or {}).get(RESOURCE, 0) > 0
        }

    #: Logs come back in each table's result (the tables run elsewhere).
    local = False

    def capacity(self, configured: int) -> int:
        """The cluster's table slots (``configured`` is for one machine); all of them are used."""
        try:
            return int(sum(self.slots().values()))
        except Exception:  # noqa: BLE001 - the scheduler is gone: the first table says so
            return 1

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)

    async def play(
        self, spec: TableSpec, on_game: Callable[[TableGame], None], stop: threading.Event
    ) -> TableResult:
        """Play one table on some worker that has its images; the games come back with the result."""
        lacking: dict[str, tuple[str, str]] = {}  # worker -> (entry, why) it cannot play this table
        passed: tuple[str, str, str] | None = None  # the last refusal, reported once it has somewhere to go
        while True:
            try:
                workers = sorted(set(self.slots()) - set(lacking))
            except Exception as exc:  # noqa: BLE001 - the scheduler is gone
                raise RunStopped(self._lost(exc)) from None
            if not workers:
                entries = sorted({entry for entry, _ in lacking.values()})
                raise RunStopped(
                    f"no worker can play entry {', '.join(repr(e) for e in entries)}: "
                    f"{'; '.join(why for _, why in lacking.values())}"
                )
            if passed is not None:
                # Only now, with another worker to take it: if none is left the run's
                # one stopping line says it all.
                self._report_passed_on(spec, *passed)
                passed = None
            answer = await self._run(spec, workers, stop)
            if isinstance(answer, tuple):
                _, entry, worker, why = answer
                lacking[worker] = (entry, f"{worker} {why}")
                passed = (worker, entry, why)
                continue
            return answer

    def _report_passed_on(self, spec: TableSpec, worker: str, entry: str, why: str) -> None:
        """Say (once per worker and entry) that ``worker`` lacks ``entry``'s image and gave ``spec``'s table back.

        The run goes on without that worker for this entry's tables, so nothing
        fails; but the organiser has a machine doing nothing for them and
        should know which one and why (``docker load`` the image there).
        """
        if (worker, entry) in self._reported:
            return
        self._reported.add((worker, entry))
        seat = next((s for s in spec.seats if s.entry == entry), None)
        image = ""
        if seat is not None and seat.image_id is not None:
            image = f" {seat.image_id[:19]} ({seat.target})"
        self.notice(
            f"worker {worker} lacks image{image} of entry {entry!r}: {why}; "
            f"table {spec.table_id} passed on to another worker"
        )

    async def _run(self, spec: TableSpec, workers: list[str], stop: threading.Event) -> Any:
        try:
            future = self.client.submit(
                cluster_table_task, spec,
                key=f"table-{spec.table_id}-{uuid.uuid4().hex[:8]}", resources={RESOURCE: 1},
                workers=workers, allow_other_workers=False, pure=False,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001
            raise RunStopped(self._lost(exc)) from None
        try:
            while not future.done():
                if stop.is_set():
                    # Dask cannot stop a running task: the table ends by its own deadline
                    # or when its bots are done; its late result is not stored.
                    return TableResult(spec.table_id, [], {}, stopped=True)
                if self.client.status not in ("running", "connecting"):
                    raise RunStopped(self._lost(None))
                await trio.sleep(POLL_S)
            if future.status == "finished":
                try:
                    return await trio.to_thread.run_sync(future.result)
                except Exception as exc:  # noqa: BLE001 - the task succeeded: fetching its result failed
                    raise RunStopped(self._lost(exc)) from None
            if future.status == "cancelled":
                raise RunStopped(self._lost(None))
            try:
                exc = future.exception()
            except Exception as lost:  # noqa: BLE001 - the scheduler went away while asking
                raise RunStopped(self._lost(lost)) from None
            return TableResult(spec.table_id, [], {}, error=f"on the cluster: {type(exc).__name__}: {exc}")
        finally:
            with contextlib.suppress(Exception):
                future.release()

    def _lost(self, exc: BaseException | None) -> str:
        why = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
        return (
            f"lost the Dask scheduler at {self.address}{why}; the games stored so far are kept: "
            f"run again to resume"
        )


__all__ = [
    "ClusterError", "ClusterTables", "RESOURCE", "check_address", "cluster_table_task", "is_private", "print_notice",
]  # fmt: skip
