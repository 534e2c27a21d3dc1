"""What the site needs to know of a ladder's settings, and ``[server]``, the section the site owns.

:class:`SiteSettings` is read from a :class:`~arena.ladder.config.LadderConfig`
(``serve``) or made directly (tests, a site run apart from the loop): the site
never needs the rest of the configuration, nor the modules that parse it.
:class:`ServerSettings` is ``[server]`` (how the web server treats connections),
parsed here (:func:`parse_server`) and composed by :mod:`arena.ladder.config`.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from pathlib import Path
from typing import Any

from arena.ladder.common.paths import StorePaths
from arena.ladder.course.calendar import Calendar
from arena.toml_keys import ConfigError, read_key

#: The keys of ``[server]``.
SERVER_KEYS = {
    "host", "port", "trusted_proxies", "header_timeout", "body_timeout", "idle_timeout", "send_timeout", "keep_alive",
    "max_connections", "shutdown_timeout",
}  # fmt: skip
#: Where the site listens when ``[server]`` does not say.
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765


@dataclasses.dataclass(frozen=True)
class UploadLimits:
    """The ``[submissions]`` limits a team's page shows and an upload is held to."""

    max_bytes: int = 32 * 1024 * 1024
    max_files: int = 2000
    daily_quota: int = 20


@dataclasses.dataclass(frozen=True)
class SiteSettings(StorePaths):
    """The ladder as its site sees it."""

    directory: Path
    name: str
    players: int = 4
    submissions: UploadLimits = UploadLimits()
    calendar: Calendar = Calendar()
    """``[schedule]`` and ``[final]``: the phase the site shows and uploads are held to."""

    @classmethod
    def of(cls, config: Any) -> SiteSettings:
        """The site's part of a ladder's configuration (a ``LadderConfig``, or already settings)."""
        if isinstance(config, SiteSettings):
            return config
        sub = config.submissions
        return cls(
            directory=config.directory, name=config.name, players=config.rules.players,
            submissions=UploadLimits(sub.max_bytes, sub.max_files, sub.daily_quota),
            calendar=getattr(config, "calendar", Calendar()),
        )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class ServerSettings:
    """How the web server treats connections: who may speak for the client, and how long anyone may wait.

    Every timeout closes the connection (a half-received upload is dropped and
    its spool file removed); see docs/ladder.md, "Security".
    """

    trusted_proxies: tuple[str, ...] = ()
    """Addresses (or networks) whose X-Forwarded-Proto/-For are believed: the TLS proxy's. None by default."""
    header_timeout: float = 10.0
    """Seconds a request's line and headers may take to arrive, from its first byte (slowloris)."""
    body_timeout: float = 300.0
    """Seconds a request body (an upload) may take to arrive in all."""
    idle_timeout: float = 30.0
    """Seconds a request body may pause between two pieces."""
    send_timeout: float = 30.0
    """Seconds a client may take none of an answer (then it is cut and its buffered answer dropped)."""
    keep_alive: float = 5.0
    """Seconds an idle connection is kept open for the client's next request."""
    max_connections: int = 512
    """Open connections at most (also kept below the process's file descriptor limit)."""
    shutdown_timeout: float = 5.0
    """Seconds requests in flight get to finish when the server stops (then they are cut)."""


def parse_address(srv: dict[str, Any]) -> tuple[str, int]:
    """``[server]`` host and port; :class:`ConfigError` (one line) for a bad one."""
    port = read_key(srv, "port", int, DEFAULT_PORT, "server")
    if not 0 <= port <= 65535:
        raise ConfigError(f"[server] port must be 0 to 65535, got {port}")
    return read_key(srv, "host", str, DEFAULT_HOST, "server"), port


def parse_server(srv: dict[str, Any]) -> ServerSettings:
    """The ``[server]`` keys beyond host and port; :class:`ConfigError` (one line) for a bad one."""
    proxies = read_key(srv, "trusted_proxies", list, [], "server")
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy if isinstance(proxy, str) else "?", strict=False)
        except ValueError:
            raise ConfigError(f"[server] trusted_proxies: {proxy!r} is not an IP address or network") from None
    seconds = {}
    for key in ("header_timeout", "body_timeout", "idle_timeout", "send_timeout", "keep_alive", "shutdown_timeout"):
        value = float(read_key(srv, key, (int, float), getattr(ServerSettings, key), "server"))
        if not 0 < value <= 86400:
            raise ConfigError(f"[server] {key} must be more than 0 and at most 86400 seconds, got {value}")
        seconds[key] = value
    max_connections = read_key(srv, "max_connections", int, ServerSettings.max_connections, "server")
    if not 8 <= max_connections <= 100_000:
        raise ConfigError(f"[server] max_connections must be 8 to 100000, got {max_connections}")
    return ServerSettings(trusted_proxies=tuple(proxies), max_connections=max_connections, **seconds)


SERVER_TEMPLATE = """[server]
host = "127.0.0.1"             # put it behind a TLS reverse proxy to serve other machines (docs/ladder.md)
port = 8765
trusted_proxies = []           # the TLS proxy's address, e.g. ["127.0.0.1"]: only it may set X-Forwarded-Proto
header_timeout = 10.0          # seconds a request's headers may take (then the connection is closed)
body_timeout = 300.0           # seconds an upload may take in all
idle_timeout = 30.0            # seconds an upload may pause
send_timeout = 30.0            # seconds a client may take none of an answer (then it is cut)
keep_alive = 5.0               # seconds an idle connection is kept for the next request
max_connections = 512          # open connections at most (kept below the file descriptor limit too)
shutdown_timeout = 5.0         # seconds requests in flight get when the server stops
"""


__all__ = [
    "DEFAULT_HOST", "DEFAULT_PORT", "SERVER_KEYS", "SERVER_TEMPLATE", "ServerSettings", "SiteSettings", "UploadLimits",
    "parse_address", "parse_server",
]  # fmt: skip
