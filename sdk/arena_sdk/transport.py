"""gRPC transport settings shared by the referee and the SDK, applied before gRPC loads.

gRPC's C core (grpcio 1.85) moves each message through its EventEngine: the
socket is read and written on EventEngine threads, and the completion then
reaches grpc.aio's poller thread and the event loop.  For our traffic (one
small message each way per decision, one stream per seat) those hand-offs
cost more than the work itself.  With the EventEngine client and listener
experiments switched off, gRPC uses its older polling I/O manager and a
message crosses fewer threads.  Measured with raw grpc.aio ping-pong over a Unix
socket on 2 cores (``bench/referee.py``, raw-1): a round trip 204 -> 128 µs,
CPU per round trip 122 -> 88 µs on the server and 134 -> 92 µs on the client;
a four-entry tournament plays 1.2-1.3x the games per second
(``bench/tournament.py --transports polling,default``).

The C core reads ``GRPC_EXPERIMENTS`` once, when the ``grpc`` module is first
imported, so :func:`prefer_polling_transport` is called where a client or a
server starts, before it imports ``grpc`` (``arena_sdk/client.py``,
``arena/referee/__init__.py``), never on a plain ``import arena_sdk`` or
``import arena_sdk.engine`` (the rules change no environment variable).
Processes started from a process that set it (local bots, table processes)
inherit the setting.  A value already in the environment, even an empty one, is left
alone: set ``GRPC_EXPERIMENTS=`` to keep gRPC's own defaults.

The experiment names are those of grpcio 1.85 (the server pins it; the SDK
allows any 1.x, so a bot may need a newer one): with another installed
release nothing is set, since gRPC prints an error at every start for a name
it does not know.  ``tests/referee/test_transport.py`` checks that the
installed gRPC knows them and that a match runs on them.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import MutableMapping
from pathlib import Path

#: The environment variable gRPC's C core reads its experiment switches from.
EXPERIMENTS_ENV = "GRPC_EXPERIMENTS"
#: What we set it to: the EventEngine client and listener off (a minus turns one off).
TUNED_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
#: The grpcio releases (major, minor) whose experiments these are, measured.
TESTED_RELEASES = frozenset({(1, 85)})


def prefer_polling_transport(
    environ: MutableMapping[str, str] = os.environ, release: tuple[int, int] | None = None
) -> bool:
    """Ask gRPC for the polling I/O manager, unless ``GRPC_EXPERIMENTS`` is already set or the
    installed grpcio (``release``: found without importing it) is not one of ``TESTED_RELEASES``.

    Returns True when this call set it.  It takes effect only in a process
    that has not imported ``grpc`` yet, and in the processes it starts.
    """
    if EXPERIMENTS_ENV in environ:
        return False
    if (release or installed_grpc_release()) not in TESTED_RELEASES:
        return False
    environ[EXPERIMENTS_ENV] = TUNED_EXPERIMENTS
    return True


def installed_grpc_release() -> tuple[int, int] | None:
    """(major, minor) of the installed grpcio, read from its files without importing it
    (importing starts gRPC's core, which is what must not happen yet); None if unknown."""
    spec = importlib.util.find_spec("grpc")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        try:
            text = (Path(folder) / "_grpcio_metadata.py").read_text(encoding="utf-8")
        except OSError:
            continue
        found = re.search(r"""__version__\s*=\s*['"]+(\d+)\.(\d+)""", text)
        if found:
            return int(found[1]), int(found[2])
    return None
