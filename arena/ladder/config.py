"""A ladder directory's settings: ``DIR/ladder.toml``, every key documented in the file itself.

``arena ladder init DIR`` writes the file with every key and its default
(rules, time control, container limits, tables at a time, matchmaking knobs,
submission limits); the server reads it at start.  A bad value is one line
(:class:`~arena.tournament.config.ConfigError`), never a traceback.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from arena_sdk.engine import RulesError, Ruleset, resolve_ruleset

from arena.ladder.matchmaking import Settings as MatchmakingSettings
from arena.match import TimeControl
from arena.match.spec import check_seconds, default_hard_cap
from arena.sandbox.build import DEFAULT_BASE_IMAGE
from arena.sandbox.docker import ContainerLimits
from arena.tournament.config import ConfigError, _check_keys, _get, parse_limits

CONFIG_NAME = "ladder.toml"

_SECTIONS: dict[str, set[str]] = {
    "ladder": {"name", "concurrency", "pairs_per_batch", "start_timeout"},
    "rules": {"preset", "set"},
    "time": {"move", "bank", "hard_cap", "strikes", "clock"},
    "limits": {"memory", "cpus", "pids", "tmpfs", "log_bytes"},
    "matchmaking": {"settle_pairs", "target_half_width", "explore"},
    "submissions": {"max_bytes", "max_files", "build_timeout", "daily_quota", "validation_hands", "base_image"},
    "server": {
        "host", "port", "trusted_proxies", "header_timeout", "body_timeout", "idle_timeout", "keep_alive",
        "max_connections", "shutdown_timeout",
    },
}


@dataclasses.dataclass(frozen=True)
class SubmissionLimits:
    """What one upload may be, and how often a team may send one."""

    max_bytes: int = 32 * 1024 * 1024
    """The uploaded archive, compressed, and the unpacked directory: at most this many bytes each."""
    max_files: int = 2000
    build_timeout: float = 600.0
    """Seconds a build may take (the offline image build; validation has its own bounded game)."""
    daily_quota: int = 20
    """Submissions per team per UTC day (failed ones count: a build costs the organiser's machine)."""
    validation_hands: int = 2
    """Hands of the validation game a new version plays against itself before it is ranked."""
    base_image: str = DEFAULT_BASE_IMAGE
    """The Python image the bot base is built on (on a machine with no registry: arena-base:bookworm)."""


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
    keep_alive: float = 5.0
    """Seconds an idle connection is kept open for the client's next request."""
    max_connections: int = 512
    """Open connections at most (also kept below the process's file descriptor limit)."""
    shutdown_timeout: float = 5.0
    """Seconds requests in flight get to finish when the server stops (then they are cut)."""


@dataclasses.dataclass(frozen=True)
class LadderConfig:
    """Everything ``ladder.toml`` says (with the defaults for keys it leaves out)."""

    directory: Path
    name: str
    rules: Ruleset
    time_control: TimeControl
    limits: ContainerLimits
    concurrency: int
    """Duplicate pairs played at once (each is two tables, each table its own process)."""
    pairs_per_batch: int
    """Deals the two tables of a pairing play before their bots are restarted."""
    start_timeout: float
    matchmaking: MatchmakingSettings
    submissions: SubmissionLimits
    host: str
    port: int
    server: ServerSettings = ServerSettings()

    @property
    def results_path(self) -> Path:
        return self.directory / "results.sqlite"

    @property
    def ladder_path(self) -> Path:
        return self.directory / "ladder.sqlite"


def template(name: str, preset: str, overrides: dict[str, str], base_image: str = DEFAULT_BASE_IMAGE) -> str:
    """The text of a new ``ladder.toml``: every key, its default and what it means."""
    rules_set = ", ".join(f"{k} = {_toml_value(v)}" for k, v in sorted(overrides.items()))
    return f'''# A Spades arena ladder (docs/ladder.md). Edit, then restart `arena ladder serve`.

[ladder]
name = {_toml_value(name)}
concurrency = 1                # duplicate pairs played at once; each is two tables (two processes)
pairs_per_batch = 1            # deals two tables play before their bots restart (1 is fairest to new versions)
start_timeout = 30.0           # seconds the bots of a table get to connect

[rules]
preset = {_toml_value(preset)}            # see `arena rules presets`
set = {{ {rules_set} }}                    # option overrides, e.g. {{ max_hands = 40 }}

[time]
move = 1.0                     # seconds per decision before the bank is used
bank = 30.0                    # seconds of bank per seat per game
# hard_cap = 60.0              # most seconds any one decision may take (default: max(60, move))
strikes = 3                    # late, illegal or malformed answers that forfeit a game
# clock = "cpu"                # charge decisions CPU time, not wall time (docs/time-control.md)

[limits]                       # each seat's container
memory = "512m"                # memory (= memory + swap): a whole number and k, m or g
cpus = 1.0                     # CPU cores a seat may use
pids = 64                      # processes and threads
tmpfs = "16m"                  # writable /tmp
log_bytes = 1048576            # bytes of each seat's log kept per table

[matchmaking]                  # docs/ladder-matchmaking.md
settle_pairs = 6               # a new version plays at least this many pairs first
target_half_width = 60.0       # Elo: a version is settled once its 95% interval is narrower than this each side
explore = 0.1                  # share of pairings chosen at random (keeps every version connected)

[submissions]
max_bytes = 33554432           # the upload (compressed) and the unpacked bot directory, each: 32 MiB
max_files = 2000               # files in the bot directory
build_timeout = 600.0          # seconds an image build may take
daily_quota = 20               # submissions per team per UTC day (failed ones count too)
validation_hands = 2           # hands of the game a new version plays against itself before it is ranked
base_image = {_toml_value(base_image)}  # the Python image bots are built on (arena bot build --base-image)

[server]
host = "127.0.0.1"             # put it behind a TLS reverse proxy to serve other machines (docs/ladder.md)
port = 8765
trusted_proxies = []           # the TLS proxy's address, e.g. ["127.0.0.1"]: only it may set X-Forwarded-Proto
header_timeout = 10.0          # seconds a request's headers may take (then the connection is closed)
body_timeout = 300.0           # seconds an upload may take in all
idle_timeout = 30.0            # seconds an upload may pause
keep_alive = 5.0               # seconds an idle connection is kept for the next request
max_connections = 512          # open connections at most (kept below the file descriptor limit too)
shutdown_timeout = 5.0         # seconds requests in flight get when the server stops
'''


def _server_settings(srv: dict[str, Any]) -> ServerSettings:
    """The ``[server]`` keys beyond host and port; :class:`ConfigError` (one line) for a bad one."""
    import ipaddress

    proxies = _get(srv, "trusted_proxies", list, [], "server")
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy if isinstance(proxy, str) else "?", strict=False)
        except ValueError:
            raise ConfigError(f"[server] trusted_proxies: {proxy!r} is not an IP address or network") from None
    seconds = {}
    for key in ("header_timeout", "body_timeout", "idle_timeout", "keep_alive", "shutdown_timeout"):
        value = float(_get(srv, key, (int, float), getattr(ServerSettings, key), "server"))
        if not 0 < value <= 86400:
            raise ConfigError(f"[server] {key} must be more than 0 and at most 86400 seconds, got {value}")
        seconds[key] = value
    max_connections = _get(srv, "max_connections", int, ServerSettings.max_connections, "server")
    if not 8 <= max_connections <= 100_000:
        raise ConfigError(f"[server] max_connections must be 8 to 100000, got {max_connections}")
    return ServerSettings(trusted_proxies=tuple(proxies), max_connections=max_connections, **seconds)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def load_ladder_config(directory: Path) -> LadderConfig:
    """Read ``DIR/ladder.toml``; :class:`ConfigError` (one line) for anything wrong."""
    path = directory / CONFIG_NAME
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{directory} is not a ladder directory (no {CONFIG_NAME}); create one with arena ladder init") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    _check_keys(data, set(_SECTIONS), "top level")
    for section, keys in _SECTIONS.items():
        _check_keys(_get(data, section, dict, {}, "top level"), keys, section)
    lad = data.get("ladder", {})
    name = _get(lad, "name", str, directory.name, "ladder")
    concurrency = _get(lad, "concurrency", int, 1, "ladder")
    if not 1 <= concurrency <= 64:
        raise ConfigError(f"[ladder] concurrency must be 1 to 64, got {concurrency}")
    pairs_per_batch = _get(lad, "pairs_per_batch", int, 1, "ladder")
    if not 1 <= pairs_per_batch <= 100:
        raise ConfigError(f"[ladder] pairs_per_batch must be 1 to 100, got {pairs_per_batch}")
    start_timeout = float(_get(lad, "start_timeout", (int, float), 30.0, "ladder"))
    r = data.get("rules", {})
    try:
        rules = resolve_ruleset(
            _get(r, "preset", str, "pagat", "rules"),
            {k: (v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v))
             for k, v in _get(r, "set", dict, {}, "rules").items()},
        )  # fmt: skip
    except RulesError as exc:
        raise ConfigError(f"[rules] {exc}") from None
    tm = data.get("time", {})
    move = float(_get(tm, "move", (int, float), 1.0, "time"))
    try:
        check_seconds(start_timeout, "start_timeout", inclusive=False)
        time_control = TimeControl(
            move_s=move,
            bank_s=float(_get(tm, "bank", (int, float), 30.0, "time")),
            hard_cap_s=float(_get(tm, "hard_cap", (int, float), default_hard_cap(move), "time")),
            strikes_to_forfeit=_get(tm, "strikes", int, 3, "time"),
            clock=_get(tm, "clock", str, "wall", "time"),
        )
    except ValueError as exc:
        raise ConfigError(f"[time] {exc}") from None
    limits = parse_limits(data.get("limits", {}))
    mm = data.get("matchmaking", {})
    matchmaking = MatchmakingSettings(
        settle_pairs=_get(mm, "settle_pairs", int, MatchmakingSettings.settle_pairs, "matchmaking"),
        target_half_width=float(
            _get(mm, "target_half_width", (int, float), MatchmakingSettings.target_half_width, "matchmaking")
        ),
        explore=float(_get(mm, "explore", (int, float), MatchmakingSettings.explore, "matchmaking")),
    )
    if not 0 <= matchmaking.explore <= 1:
        raise ConfigError(f"[matchmaking] explore must be between 0 and 1, got {matchmaking.explore}")
    sb = data.get("submissions", {})
    submissions = SubmissionLimits(
        max_bytes=_get(sb, "max_bytes", int, SubmissionLimits.max_bytes, "submissions"),
        max_files=_get(sb, "max_files", int, SubmissionLimits.max_files, "submissions"),
        build_timeout=float(_get(sb, "build_timeout", (int, float), SubmissionLimits.build_timeout, "submissions")),
        daily_quota=_get(sb, "daily_quota", int, SubmissionLimits.daily_quota, "submissions"),
        validation_hands=_get(sb, "validation_hands", int, SubmissionLimits.validation_hands, "submissions"),
        base_image=_get(sb, "base_image", str, SubmissionLimits.base_image, "submissions"),
    )
    for key in ("max_bytes", "max_files", "daily_quota", "validation_hands"):
        if getattr(submissions, key) < 1:
            raise ConfigError(f"[submissions] {key} must be at least 1, got {getattr(submissions, key)}")
    srv = data.get("server", {})
    port = _get(srv, "port", int, 8765, "server")
    if not 0 <= port <= 65535:
        raise ConfigError(f"[server] port must be 0 to 65535, got {port}")
    return LadderConfig(
        directory=directory,
        name=name,
        rules=rules,
        time_control=time_control,
        limits=limits,
        concurrency=concurrency,
        pairs_per_batch=pairs_per_batch,
        start_timeout=start_timeout,
        matchmaking=matchmaking,
        submissions=submissions,
        host=_get(srv, "host", str, "127.0.0.1", "server"),
        port=port,
        server=_server_settings(srv),
    )


__all__ = ["CONFIG_NAME", "LadderConfig", "ServerSettings", "SubmissionLimits", "load_ladder_config", "template"]
