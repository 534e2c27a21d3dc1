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

from arena.ladder.common import paths
from arena.ladder.course.calendar import Calendar, parse_instant
from arena.ladder.course.grades import GradeBands, parse_bands
from arena.ladder.games.matchmaking import Settings as MatchmakingSettings
from arena.ladder.teams.roster import ROSTER_TEMPLATE, RosterError, RosterSettings, parse_roster_settings
from arena.match import TimeControl
from arena.match.spec import check_seconds, default_hard_cap
from arena.sandbox.bot_dir import parse_size
from arena.sandbox.build import DEFAULT_BASE_IMAGE
from arena.sandbox.build_run import BuildLimits
from arena.sandbox.docker import ContainerLimits
from arena.tournament.config import ConfigError, _check_keys, _get, parse_limits

CONFIG_NAME = "ladder.toml"
#: The ladder's move clock when ``[time]`` says none: CPU time (docs/time-control.md,
#: "Why the ladder charges CPU time").  ``arena match run``, tournaments and sprt keep the wall clock.
LADDER_CLOCK = "cpu"

_SECTIONS: dict[str, set[str]] = {
    "ladder": {"name", "concurrency", "pairs_per_batch", "start_timeout", "suspend_after"},
    "rules": {"preset", "set"},
    "time": {"move", "bank", "hard_cap", "strikes", "clock"},
    "limits": {"memory", "cpus", "pids", "tmpfs", "log_bytes"},
    "matchmaking": {field.name for field in dataclasses.fields(MatchmakingSettings)},
    "submissions": {"max_bytes", "max_files", "build_timeout", "build_memory", "build_cpus", "max_image_size",
                    "builders", "daily_quota", "validation_hands", "base_image"},
    "server": {
        "host", "port", "trusted_proxies", "header_timeout", "body_timeout", "idle_timeout", "send_timeout", "keep_alive",
        "max_connections", "shutdown_timeout",
    },
    "roster": {field.name for field in dataclasses.fields(RosterSettings)},
    # A course's calendar and grades (arena.ladder.course.calendar, arena.ladder.course.grades): see _calendar below.
    "schedule": {"opens", "deadline", "final_until", "after_deadline"},
    "final": {"choose_from", "los", "resolution"},
    "grades": {"bands", "missing"},
}


@dataclasses.dataclass(frozen=True)
class SubmissionLimits:
    """What one upload may be, and how often a team may send one."""

    max_bytes: int = 32 * 1024 * 1024
    """The uploaded archive, compressed, and the unpacked directory: at most this many bytes each."""
    max_files: int = 2000
    build_timeout: float = 600.0
    """Seconds a build may take (the offline image build; validation has its own bounded game)."""
    build_memory: int = 1024**3
    """Bytes of memory (swap included) of each build step's container."""
    build_cpus: float = 1.0
    """CPU cores each build step's container may use."""
    max_image_size: int = 2 * 1024**3
    """Bytes a built image may take (base included); a build step's writable layer is stopped past it too."""
    builders: int = 2
    """Builds run at once (so other teams' uploads do not wait behind one slow build)."""
    daily_quota: int = 20
    """Submissions per team per UTC day: every upload whose files arrived counts, even if its build fails
    (a build costs the organiser's machine); one refused or failed before its files were in place does not."""
    validation_hands: int = 2
    """Hands of the validation game a new version plays against itself before it is ranked."""
    base_image: str = DEFAULT_BASE_IMAGE
    """The Python image the bot base is built on (on a machine with no registry: arena-base:bookworm)."""

    @property
    def build_limits(self) -> BuildLimits:
        """What every build of an upload may use (:mod:`arena.sandbox.build_run`)."""
        return BuildLimits(
            timeout_s=self.build_timeout, memory=self.build_memory, cpus=self.build_cpus, image_bytes=self.max_image_size
        )


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


# ------------------------------------------------------------ [play]: practice tables on the site (arena.ladder.games.practice)

_SECTIONS["play"] = {"enabled", "tables", "per_team_per_day"}


@dataclasses.dataclass(frozen=True)
class PlaySettings:
    """``[play]``: practice tables, where a signed-in team's member plays with and against active versions."""

    enabled: bool = True
    """Whether teams may open practice tables at all."""
    tables: int = 2
    """Practice tables at once, all teams together (each runs up to three bot containers)."""
    per_team_per_day: int = 10
    """Practice tables a team may open per UTC day."""


PLAY_TEMPLATE = """
[play]                         # practice tables on the site: a team plays with and against active versions (not rated)
enabled = true                 # false: no practice tables
tables = 2                     # practice tables at once, all teams together (each runs up to three bot containers)
per_team_per_day = 10          # practice tables a team may open per UTC day
"""


def parse_play(table: dict[str, Any]) -> PlaySettings:
    """``[play]``; :class:`ConfigError` (one line) for a bad value."""
    enabled = _get(table, "enabled", bool, PlaySettings.enabled, "play")
    tables = _get(table, "tables", int, PlaySettings.tables, "play")
    per_day = _get(table, "per_team_per_day", int, PlaySettings.per_team_per_day, "play")
    if not 1 <= tables <= 64:
        raise ConfigError(f"[play] tables must be 1 to 64, got {tables}")
    if not 0 <= per_day <= 10_000:
        raise ConfigError(f"[play] per_team_per_day must be 0 to 10000, got {per_day}")
    return PlaySettings(enabled=enabled, tables=tables, per_team_per_day=per_day)


# ------------------------------------------------------------ end of [play]


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
    start_timeout: float
    matchmaking: MatchmakingSettings
    submissions: SubmissionLimits
    host: str
    port: int
    suspend_after: int = 4
    """A newly active version that loses its first this many games by crash or forfeit is suspended (0: never)."""
    server: ServerSettings = ServerSettings()
    roster: RosterSettings = RosterSettings()
    """``[roster]``: self-registration and team size (the site reads it again at each sign-up)."""
    calendar: Calendar = Calendar()
    """``[schedule]`` and ``[final]``: when uploads open and close, and the final evaluation."""
    grades: GradeBands = GradeBands()
    """``[grades]``: the grade column of ``arena ladder export --final``."""
    play: PlaySettings = PlaySettings()

    @property
    def results_path(self) -> Path:
        return paths.results_store(self.directory)

    @property
    def ladder_path(self) -> Path:
        return paths.ladder_store(self.directory)


def template(name: str, preset: str, overrides: dict[str, str], base_image: str = DEFAULT_BASE_IMAGE) -> str:
    """The text of a new ``ladder.toml``: every key, its default and what it means."""
    rules_set = ", ".join(f"{k} = {_toml_value(v)}" for k, v in sorted(overrides.items()))
    return f'''# A Spades arena ladder (docs/ladder.md). Edit, then restart `arena ladder serve`.

[ladder]
name = {_toml_value(name)}
concurrency = 1                # duplicate pairs played at once; each is two tables (two processes)
start_timeout = 30.0           # seconds the bots of a table get to connect
suspend_after = 4              # a new version that loses its first N games by crash or forfeit is suspended (0: never)

[rules]
preset = {_toml_value(preset)}            # see `arena rules presets`
set = {{ {rules_set} }}                    # option overrides, e.g. {{ max_hands = 40 }}

[time]
move = 1.0                     # seconds per decision before the bank is used
bank = 30.0                    # seconds of bank per seat per game
# hard_cap = 60.0              # most seconds any one decision may take (default: max(60, move))
strikes = 3                    # late, illegal or malformed answers that forfeit a game
clock = "cpu"                  # charge decisions their CPU time ("wall": elapsed time); docs/time-control.md

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
separation = "order"           # "order": neighbours' order established; "intervals": their intervals apart
resolution = 40.0              # Elo: neighbours whose difference is shown to be within ±this count as tied
window = 4                     # candidate pairings are at most this many places apart in the ranking
softness = 2.0                 # Elo: how sharply settled neighbours are told from unsettled ones
prior_information = 0.25       # each version's prior information (about one game against an equal)

[submissions]
max_bytes = 33554432           # the upload (compressed) and the unpacked bot directory, each: 32 MiB
max_files = 2000               # files in the bot directory
build_timeout = 600.0          # seconds an image build may take; then it is stopped and the version fails
build_memory = "1g"            # memory (swap included) of each build step: a whole number and k, m or g
build_cpus = 1.0               # CPU cores each build step may use
max_image_size = "2g"          # a built image (base included) and a build step's disk writes: at most this
builders = 2                   # builds at once (other teams' uploads do not wait behind one slow build)
daily_quota = 20               # uploads per team per UTC day (a failed build counts; a refused upload does not)
validation_hands = 2           # hands of the game a new version plays against itself before it is ranked
base_image = {_toml_value(base_image)}  # the Python image bots are built on (arena bot build --base-image)

[server]
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

[schedule]                     # a course's calendar, UTC, ISO 8601 (docs/ladder.md, "Running a course"); "" = none
opens = ""                     # uploads are refused before this, e.g. "2026-02-02T08:00:00Z"
deadline = ""                  # uploads end, each team's final version is fixed, the final evaluation starts
final_until = ""               # the final evaluation ends by this at the latest and the standings freeze
after_deadline = "refuse"      # uploads after the deadline: "refuse", or "practice" (built, for practice tables only, never rated)

[final]                        # the final evaluation, after the deadline: only final versions play
choose_from = 0                # a team may select its final version among its last N ranked ones (0: its active one)
los = 0.95                     # neighbours are separated once the upper one's likelihood of superiority reaches this
resolution = 40.0              # Elo: neighbours whose difference is shown to be within ±this are declared tied

[grades]                       # the grade column of `arena ladder export DIR --final`
bands = []                     # e.g. [[10, "A"], [35, "B"], [70, "C"], [100, "D"]]: grade of the first band with
                               # fewer than that percent of ranked teams above the team (ties share a place)
missing = ""                   # the grade of a team with no rated final version

{ROSTER_TEMPLATE}''' + PLAY_TEMPLATE


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
    for key in ("header_timeout", "body_timeout", "idle_timeout", "send_timeout", "keep_alive", "shutdown_timeout"):
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


#: The least a build step may be given (the engine refuses less than 6 MiB; pip needs far more).
MIN_BUILD_MEMORY = 32 * 1024**2
#: The least an image may be capped at (the bot base alone is over 100 MiB).
MIN_IMAGE_SIZE = 64 * 1024**2


def _size(table: dict[str, Any], key: str, default: int, least: int) -> int:
    """A size key of [submissions]: ``"512m"`` (k, m, g: powers of 1024) or a whole number of bytes."""
    value = _get(table, key, (str, int), default, "submissions")
    try:
        size = value if isinstance(value, int) else parse_size(value)
    except ValueError as exc:
        raise ConfigError(f"[submissions] {key}: {exc}") from None
    if size < least:
        raise ConfigError(f"[submissions] {key} must be at least {least // 1024**2} MiB, got {value!r}")
    return size


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
    # pairs_per_batch never changed anything (every pair's bots start fresh): older ladder.toml
    # files wrote 1, which is what happens, and are read; any other value would be a promise.
    if lad.get("pairs_per_batch", 1) != 1:
        raise ConfigError(
            f"[ladder] pairs_per_batch is not a setting (every pair's bots start fresh); remove it, "
            f"got {lad['pairs_per_batch']!r}"
        )
    start_timeout = float(_get(lad, "start_timeout", (int, float), 30.0, "ladder"))
    suspend_after = _get(lad, "suspend_after", int, 4, "ladder")
    if not 0 <= suspend_after <= 1000:
        raise ConfigError(f"[ladder] suspend_after must be 0 to 1000, got {suspend_after}")
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
            # The CPU clock by default: a ladder runs strangers' bots side by side, and on the
            # wall clock one table's load is charged to the other's bots (docs/time-control.md).
            clock=_get(tm, "clock", str, LADDER_CLOCK, "time"),
        )
    except ValueError as exc:
        raise ConfigError(f"[time] {exc}") from None
    limits = parse_limits(data.get("limits", {}))
    matchmaking = parse_matchmaking(data.get("matchmaking", {}))
    sb = data.get("submissions", {})
    submissions = SubmissionLimits(
        max_bytes=_get(sb, "max_bytes", int, SubmissionLimits.max_bytes, "submissions"),
        max_files=_get(sb, "max_files", int, SubmissionLimits.max_files, "submissions"),
        build_timeout=float(_get(sb, "build_timeout", (int, float), SubmissionLimits.build_timeout, "submissions")),
        build_memory=_size(sb, "build_memory", SubmissionLimits.build_memory, MIN_BUILD_MEMORY),
        build_cpus=float(_get(sb, "build_cpus", (int, float), SubmissionLimits.build_cpus, "submissions")),
        max_image_size=_size(sb, "max_image_size", SubmissionLimits.max_image_size, MIN_IMAGE_SIZE),
        builders=_get(sb, "builders", int, SubmissionLimits.builders, "submissions"),
        daily_quota=_get(sb, "daily_quota", int, SubmissionLimits.daily_quota, "submissions"),
        validation_hands=_get(sb, "validation_hands", int, SubmissionLimits.validation_hands, "submissions"),
        base_image=_get(sb, "base_image", str, SubmissionLimits.base_image, "submissions"),
    )
    for key in ("max_bytes", "max_files", "daily_quota", "validation_hands"):
        if getattr(submissions, key) < 1:
            raise ConfigError(f"[submissions] {key} must be at least 1, got {getattr(submissions, key)}")
    if not 1 <= submissions.build_timeout <= 86400:  # TOML allows inf and nan: neither is a bound
        raise ConfigError(f"[submissions] build_timeout must be 1 to 86400 seconds, got {submissions.build_timeout}")
    if not 0.01 <= submissions.build_cpus <= 256:
        raise ConfigError(f"[submissions] build_cpus must be 0.01 to 256 cores, got {submissions.build_cpus}")
    if not 1 <= submissions.builders <= 16:
        raise ConfigError(f"[submissions] builders must be 1 to 16, got {submissions.builders}")
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
        start_timeout=start_timeout,
        matchmaking=matchmaking,
        submissions=submissions,
        host=_get(srv, "host", str, "127.0.0.1", "server"),
        port=port,
        suspend_after=suspend_after,
        server=_server_settings(srv),
        roster=_roster_settings(data.get("roster", {})),
        calendar=_calendar(data),
        grades=_grades(data),
        play=parse_play(_get(data, "play", dict, {}, "top level")),
    )


def _roster_settings(table: dict[str, Any]) -> RosterSettings:
    """``[roster]`` (arena.ladder.teams.roster); :class:`ConfigError` (one line) for a bad value."""
    try:
        return parse_roster_settings(table)
    except RosterError as exc:
        raise ConfigError(str(exc)) from None


# ------------------------------------------------------------ a course's calendar and grades (arena.ladder.course.calendar)


def _calendar(data: dict[str, Any]) -> Calendar:
    """``[schedule]`` and ``[final]`` as a :class:`Calendar`; :class:`ConfigError` (one line) for a bad key."""
    sched, final = data.get("schedule", {}), data.get("final", {})
    try:
        dates = {key: parse_instant(sched.get(key), key) for key in ("opens", "deadline", "final_until")}
        return Calendar(
            **dates,
            after_deadline=_get(sched, "after_deadline", str, Calendar.after_deadline, "schedule"),
            choose_from=_get(final, "choose_from", int, Calendar.choose_from, "final"),
            los=float(_get(final, "los", (int, float), Calendar.los, "final")),
            resolution=float(_get(final, "resolution", (int, float), Calendar.resolution, "final")),
        )
    except ConfigError:
        raise
    except ValueError as exc:
        where = "final" if str(exc).split(" ", 1)[0] in ("choose_from", "los", "resolution") else "schedule"
        raise ConfigError(f"[{where}] {exc}") from None


def _grades(data: dict[str, Any]) -> GradeBands:
    """``[grades]`` as :class:`GradeBands`; :class:`ConfigError` (one line) for a bad band."""
    table = data.get("grades", {})
    try:
        return GradeBands(parse_bands(table.get("bands", [])), _get(table, "missing", str, "", "grades"))
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(f"[grades] {exc}") from None


def parse_matchmaking(table: dict[str, Any]) -> MatchmakingSettings:
    """``[matchmaking]``: every :class:`~arena.ladder.games.matchmaking.Settings` field, by its type.

    Unknown keys were refused before (``_check_keys``); a value of the wrong type or out
    of range is one :class:`ConfigError` line naming the key.
    """
    values: dict[str, Any] = {}
    for field in dataclasses.fields(MatchmakingSettings):
        if field.name not in table:
            continue
        default = getattr(MatchmakingSettings, field.name)
        if isinstance(default, str):
            values[field.name] = _get(table, field.name, str, default, "matchmaking")
        elif isinstance(default, int):
            values[field.name] = _get(table, field.name, int, default, "matchmaking")
        else:
            value = table[field.name]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"[matchmaking] {field.name} must be a number, got {value!r}")
            values[field.name] = float(value)
    try:
        return MatchmakingSettings(**values)
    except ValueError as exc:
        raise ConfigError(f"[matchmaking] {str(exc).removeprefix('matchmaking settings: ')}") from None


__all__ = [
    "CONFIG_NAME", "LadderConfig", "PlaySettings", "ServerSettings", "SubmissionLimits", "load_ladder_config", "parse_matchmaking",
    "template",
]  # fmt: skip
