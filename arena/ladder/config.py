"""A ladder directory's settings: ``DIR/ladder.toml``, every key documented in the file itself.

``arena ladder init DIR`` writes the file with every key and its default; the
server reads it at start.  Each package of the wing owns its sections (parsed
there, with the text ``init`` writes for them):

- ``[submissions]``: :mod:`arena.ladder.versions.settings`;
- ``[matchmaking]``, ``[play]``: :mod:`arena.ladder.games.settings`;
- ``[schedule]``, ``[final]``, ``[grades]``: :mod:`arena.ladder.course.settings`;
- ``[roster]``: :mod:`arena.ladder.teams.roster` (the site reads it again at each sign-up);
- ``[server]``: :mod:`arena.ladder.site.settings`.

This module reads what is the whole ladder's (``[ladder]``, and how every
table is played: ``[rules]``, ``[time]``, ``[limits]``) and composes the rest
into one :class:`LadderConfig`.  Every section's keys are checked before any
value is read; a bad value is one line (:class:`~arena.toml_keys.ConfigError`),
never a traceback.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from arena_sdk.engine import RulesError, Ruleset, resolve_ruleset

from arena.ladder.common.paths import StorePaths
from arena.ladder.course.calendar import Calendar
from arena.ladder.course.grades import GradeBands
from arena.ladder.course.settings import COURSE_TEMPLATE, parse_calendar, parse_grades
from arena.ladder.course.settings import KEYS as COURSE_KEYS
from arena.ladder.games.settings import (
    MATCHMAKING_KEYS,
    MATCHMAKING_TEMPLATE,
    PLAY_KEYS,
    PLAY_TEMPLATE,
    MatchmakingSettings,
    PlaySettings,
    parse_matchmaking,
    parse_play,
)
from arena.ladder.site.settings import SERVER_KEYS, SERVER_TEMPLATE, ServerSettings, parse_address, parse_server
from arena.ladder.teams.roster import ROSTER_TEMPLATE, RosterError, RosterSettings, parse_roster_settings
from arena.ladder.versions.settings import KEYS as SUBMISSIONS_KEYS
from arena.ladder.versions.settings import SubmissionLimits, parse_submissions, submissions_template
from arena.match import TimeControl
from arena.match.spec import check_seconds, default_hard_cap
from arena.sandbox.build import DEFAULT_BASE_IMAGE
from arena.sandbox.docker import ContainerLimits
from arena.toml_keys import ConfigError, check_keys, read_key, toml_value
from arena.tables.settings import parse_limits

CONFIG_NAME = "ladder.toml"
#: The ladder's move clock when ``[time]`` says none: CPU time (docs/time-control.md,
#: "Why the ladder charges CPU time").  ``arena match run``, tournaments and sprt keep the wall clock.
LADDER_CLOCK = "cpu"

#: Every section and its keys: the whole ladder's here, each package's from that package.
SECTIONS: dict[str, set[str]] = {
    "ladder": {"name", "concurrency", "pairs_per_batch", "start_timeout", "suspend_after"},
    "rules": {"preset", "set"},
    "time": {"move", "bank", "hard_cap", "strikes", "clock"},
    "limits": {"memory", "cpus", "pids", "tmpfs", "log_bytes"},
    "matchmaking": MATCHMAKING_KEYS,
    "submissions": SUBMISSIONS_KEYS,
    "server": SERVER_KEYS,
    "roster": {field.name for field in dataclasses.fields(RosterSettings)},
    **COURSE_KEYS,
    "play": PLAY_KEYS,
}


@dataclasses.dataclass(frozen=True)
class LadderConfig(StorePaths):
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


def template(name: str, preset: str, overrides: dict[str, str], base_image: str = DEFAULT_BASE_IMAGE) -> str:
    """The text of a new ``ladder.toml``: every key, its default and what it means (each package's sections from it)."""
    return "\n".join((
        _ladder_template(name, preset, overrides), MATCHMAKING_TEMPLATE, submissions_template(base_image),
        SERVER_TEMPLATE, COURSE_TEMPLATE, ROSTER_TEMPLATE,
    )) + PLAY_TEMPLATE  # fmt: skip


def _ladder_template(name: str, preset: str, overrides: dict[str, str]) -> str:
    """The whole ladder's sections: ``[ladder]``, ``[rules]``, ``[time]``, ``[limits]``."""
    rules_set = ", ".join(f"{k} = {toml_value(v)}" for k, v in sorted(overrides.items()))
    return f'''# A Spades arena ladder (docs/ladder.md). Edit, then restart `arena ladder serve`.

[ladder]
name = {toml_value(name)}
concurrency = 1                # duplicate pairs played at once; each is two tables (two processes)
start_timeout = 30.0           # seconds the bots of a table get to connect
suspend_after = 4              # a new version that loses its first N games by crash or forfeit is suspended (0: never)

[rules]
preset = {toml_value(preset)}            # see `arena rules presets`
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
'''


def load_ladder_config(directory: Path) -> LadderConfig:
    """Read ``DIR/ladder.toml``; :class:`ConfigError` (one line) for anything wrong."""
    data = _read(directory)
    check_keys(data, set(SECTIONS), "top level")
    for section, keys in SECTIONS.items():
        check_keys(read_key(data, section, dict, {}, "top level"), keys, section)
    lad, srv = data.get("ladder", {}), data.get("server", {})
    # Read in the file's order, so that of two bad values the first is the one told.
    name = read_key(lad, "name", str, directory.name, "ladder")
    concurrency = _concurrency(lad)
    start_timeout = float(read_key(lad, "start_timeout", (int, float), 30.0, "ladder"))
    suspend_after = _suspend_after(lad)
    rules = _rules(data.get("rules", {}))
    time_control = _time_control(data.get("time", {}), start_timeout)
    limits = parse_limits(data.get("limits", {}))
    matchmaking = parse_matchmaking(data.get("matchmaking", {}))
    submissions = parse_submissions(data.get("submissions", {}))
    host, port = parse_address(srv)
    return LadderConfig(
        directory=directory, name=name, rules=rules, time_control=time_control, limits=limits,
        concurrency=concurrency, start_timeout=start_timeout, matchmaking=matchmaking, submissions=submissions,
        host=host, port=port, suspend_after=suspend_after, server=parse_server(srv),
        roster=_roster_settings(data.get("roster", {})),
        calendar=parse_calendar(data.get("schedule", {}), data.get("final", {})),
        grades=parse_grades(data.get("grades", {})),
        play=parse_play(read_key(data, "play", dict, {}, "top level")),
    )  # fmt: skip


def _read(directory: Path) -> dict[str, Any]:
    """``DIR/ladder.toml`` as TOML; :class:`ConfigError` (one line) if it is missing, unreadable or not TOML."""
    path = directory / CONFIG_NAME
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{directory} is not a ladder directory (no {CONFIG_NAME}); create one with arena ladder init") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _concurrency(lad: dict[str, Any]) -> int:
    """``[ladder] concurrency`` (and the refusal of ``pairs_per_batch``, which never was a setting)."""
    concurrency = read_key(lad, "concurrency", int, 1, "ladder")
    if not 1 <= concurrency <= 64:
        raise ConfigError(f"[ladder] concurrency must be 1 to 64, got {concurrency}")
    # pairs_per_batch never changed anything (every pair's bots start fresh): older ladder.toml
    # files wrote 1, which is what happens, and are read; any other value would be a promise.
    if lad.get("pairs_per_batch", 1) != 1:
        raise ConfigError(
            f"[ladder] pairs_per_batch is not a setting (every pair's bots start fresh); remove it, "
            f"got {lad['pairs_per_batch']!r}"
        )
    return concurrency


def _suspend_after(lad: dict[str, Any]) -> int:
    suspend_after = read_key(lad, "suspend_after", int, 4, "ladder")
    if not 0 <= suspend_after <= 1000:
        raise ConfigError(f"[ladder] suspend_after must be 0 to 1000, got {suspend_after}")
    return suspend_after


def _rules(r: dict[str, Any]) -> Ruleset:
    """``[rules]``: a preset and its overrides (TOML's booleans and numbers as the rules' text)."""
    try:
        return resolve_ruleset(
            read_key(r, "preset", str, "pagat", "rules"),
            {k: (v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v))
             for k, v in read_key(r, "set", dict, {}, "rules").items()},
        )  # fmt: skip
    except RulesError as exc:
        raise ConfigError(f"[rules] {exc}") from None


def _time_control(tm: dict[str, Any], start_timeout: float) -> TimeControl:
    """``[time]`` (and ``[ladder] start_timeout``, checked as seconds with it)."""
    move = float(read_key(tm, "move", (int, float), 1.0, "time"))
    try:
        check_seconds(start_timeout, "start_timeout", inclusive=False)
        return TimeControl(
            move_s=move,
            bank_s=float(read_key(tm, "bank", (int, float), 30.0, "time")),
            hard_cap_s=float(read_key(tm, "hard_cap", (int, float), default_hard_cap(move), "time")),
            strikes_to_forfeit=read_key(tm, "strikes", int, 3, "time"),
            # The CPU clock by default: a ladder runs strangers' bots side by side, and on the
            # wall clock one table's load is charged to the other's bots (docs/time-control.md).
            clock=read_key(tm, "clock", str, LADDER_CLOCK, "time"),
        )
    except ValueError as exc:
        raise ConfigError(f"[time] {exc}") from None


def _roster_settings(table: dict[str, Any]) -> RosterSettings:
    """``[roster]`` (arena.ladder.teams.roster); :class:`ConfigError` (one line) for a bad value."""
    try:
        return parse_roster_settings(table)
    except RosterError as exc:
        raise ConfigError(str(exc)) from None


__all__ = [
    "CONFIG_NAME", "LADDER_CLOCK", "SECTIONS", "LadderConfig", "PlaySettings", "ServerSettings", "SubmissionLimits",
    "load_ladder_config", "parse_matchmaking", "template",
]  # fmt: skip
