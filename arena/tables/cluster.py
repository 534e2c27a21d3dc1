"""Tables on a Dask distributed cluster: ``arena tournament run FILE --scheduler tcp://HOST:PORT``.

A table is one Dask task: :func:`cluster_table_task` calls the same table task
(:func:`arena.tables.task.play_table`) a local table process calls, on
the worker's own machine (its Docker engine, its local processes), and returns
plain data.  Each task takes one unit of the workers' ``TABLES`` resource
(``dask worker --resources TABLES=2``).  The coordinator stays the only
writer of the results: a table's games arrive when the task ends and are
stored once per game (a late copy is dropped).

Dask retries a task whose worker died on another worker (or on the same
worker restarted by its nanny, which comes back on a new address): a table
is never pinned to the addresses known when it was submitted.  A worker that
lacks an entry's image (or has another image under its tag) does not play the
table: it answers so, the coordinator prints one line saying so (once per
worker and entry), and the table is submitted again with the other workers
preferred; if none is left the run stops with one line.

A watchdog bounds every table: one that has not come back within its
deadline (the longest its games can take, plus slack) is given up and its
games are void (played again later), and a cluster left with no worker
that has table slots for :data:`NO_WORKERS_S` stops the run with one line.
No table waits forever, whatever happens to the workers.  See docs/cluster.md.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
import threading
import time
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
#: How long the cluster may have no worker with table slots (a nanny restarting
#: one takes seconds) before the run stops.
NO_WORKERS_S = 60.0
#: How often the watchdog asks the scheduler for the workers.
WATCH_EVERY_S = 2.0


#: Where the coordinator's notices go: stderr (stdout may be ``--json``).  The file is looked up
#: at each print, so while the progress bar is live on a terminal the line lands above it.
_notices = Console(stderr=True, soft_wrap=True, highlight=False)


def print_notice(message: str) -> None:
    """One plain-text line on the coordinator's terminal (names and errors in it print literally)."""
    _notices.print(safe_text(message), style="yellow")


class ClusterError(ArenaError):
    """The cluster cannot be used (unreachable, no workers, not installed): one line, nothing stored."""


def check_address(address: str, *, insecure: bool = False) -> str:
    """A scheduler address the coordinator may use; else :class:`ClusterError` (one line).

    Dask's wire format is pickle: whoever reaches a scheduler runs code on
    every worker, as a user who can drive Docker (root, in effect).  So:

    - ``tls://HOST:PORT`` with mutual TLS (the coordinator's own client
      certificate and the CA in Dask's configuration): always;
    - ``tcp://`` on loopback: yes (only users of this machine can reach it;
      on a machine shared with people you do not trust, use TLS);
    - ``tcp://`` on a private network: only with ``insecure`` (``--insecure``),
      the organiser's word that nobody else is on that network;
    - ``tcp://`` on a public address: never.
    """
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:
        port = None
        parts = urlsplit("")
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None:
        raise ClusterError(f"scheduler address {address!r}: use tls://HOST:PORT (or tcp://127.0.0.1:PORT)")
    if parts.scheme == "tls":
        _check_mutual_tls(address)
        return address
    try:
        hosts = {info[4][0] for info in socket.getaddrinfo(parts.hostname, port, proto=socket.IPPROTO_TCP)}
    except OSError as exc:
        raise ClusterError(f"scheduler address {address!r}: cannot resolve {parts.hostname} ({exc})") from None
    public = sorted(h for h in hosts if not is_private(h))
    if public:
        raise ClusterError(
            f"scheduler address {address!r} is public ({', '.join(public)}): Dask's wire format is pickle, "
            f"so whoever reaches it runs code on your workers; use tls:// with certificates (see docs/cluster.md)"
        )
    lan = sorted(h for h in hosts if not is_loopback(h))
    if lan and not insecure:
        raise ClusterError(
            f"scheduler address {address!r} is plain tcp:// on a network ({', '.join(lan)}): any host there "
            f"could run code on your workers (Dask's wire format is pickle); use tls:// with certificates "
            f"(see docs/cluster.md), or pass --insecure if you alone are on that network"
        )
    return address


def _check_mutual_tls(address: str) -> None:
    """A tls:// scheduler needs the coordinator's certificate, key and CA in Dask's configuration."""
    try:
        from distributed.security import Security
    except ImportError:
        return  # connect() says Dask is missing
    security = Security()
    missing = [
        name for name, value in (
            ("distributed.comm.tls.ca-file", security.tls_ca_file),
            ("distributed.comm.tls.client.cert", security.tls_client_cert),
        ) if not value
    ]  # fmt: skip
    if missing:
        raise ClusterError(
            f"scheduler address {address!r} is tls:// but Dask's configuration has no {' and no '.join(missing)}: "
            f"the coordinator must present its own certificate (mutual TLS; see docs/cluster.md)"
        )


def is_loopback(host: str) -> bool:
    """True for a loopback address (or the name localhost)."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return host == "localhost"


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
    def connect(cls, address: str, security: Any = None, *, insecure: bool = False) -> ClusterTables:
        """Connect to the scheduler and check it has table slots; :class:`ClusterError` if not.

        ``insecure``: plain tcp:// on a private network is accepted (:func:`check_address`).
        """
        check_address(address, insecure=insecure)
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
            if not workers and self.client.status not in ("running", "connecting"):
                raise RunStopped(self._lost(None))
            if not workers and lacking:  # every worker left refused this table: none has the image
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
            # No worker at all (a scheduler just killed answers from its cache with none): the
            # table is submitted, and the watchdog tells a lost scheduler from a cluster with no slots.
            answer = await self._run(spec, workers, bool(lacking), stop)
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

    async def _run(self, spec: TableSpec, workers: list[str], avoid: bool, stop: threading.Event) -> Any:
        """Submit the table and wait for it, under the watchdog.

        ``workers`` are preferred only when ``avoid`` (some worker lacked an
        image): a preference, never a pin, so a worker that comes back on a new
        address can still play it.
        """
        restrict: dict[str, Any] = {"workers": workers, "allow_other_workers": True} if avoid else {}
        try:
            future = self.client.submit(
                cluster_table_task, spec,
                key=f"table-{spec.table_id}-{uuid.uuid4().hex[:8]}", resources={RESOURCE: 1}, pure=False, **restrict,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001
            raise RunStopped(self._lost(exc)) from None
        started = time.monotonic()
        deadline = started + spec.deadline_s + NO_WORKERS_S
        workers_seen = started
        watched = started
        try:
            while not future.done():
                if stop.is_set():
                    # Dask cannot stop a running task: the table ends by its own deadline
                    # or when its bots are done; its late result is not stored.
                    return TableResult(spec.table_id, [], {}, stopped=True)
                if self.client.status not in ("running", "connecting"):
                    raise RunStopped(self._lost(None))
                now = time.monotonic()
                if now > deadline:
                    future.cancel()
                    return TableResult(
                        spec.table_id, [], {},
                        error=f"the table did not come back from the cluster within its deadline ({spec.deadline_s:.0f} s)",
                    )  # fmt: skip
                if now - watched >= WATCH_EVERY_S:
                    watched = now
                    if await self._has_slots():
                        workers_seen = now
                    elif now - workers_seen > NO_WORKERS_S:
                        future.cancel()
                        raise RunStopped(
                            f"the Dask cluster at {self.address} has had no worker with {RESOURCE} slots for "
                            f"{NO_WORKERS_S:.0f} s; the games stored so far are kept: start workers and run again to resume"
                        )
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

    async def _has_slots(self) -> bool:
        """Whether some worker has table slots now (asked in a thread: the scheduler may be slow)."""
        try:
            return bool(await trio.to_thread.run_sync(self.slots))
        except Exception:  # noqa: BLE001 - the scheduler is gone: the client's status says so next
            return True

    def _lost(self, exc: BaseException | None) -> str:
        why = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
        return (
            f"lost the Dask scheduler at {self.address}{why}; the games stored so far are kept: "
            f"run again to resume"
        )


__all__ = [
    "ClusterError", "ClusterTables", "RESOURCE", "check_address", "cluster_table_task", "is_loopback", "is_private",
    "print_notice",
]  # fmt: skip
