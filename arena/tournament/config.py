"""The tournament file (TOML): parse and validate it before anything starts.

Every key is documented in ``tournaments/example.toml``.  Unknown keys,
duplicate entry names, bad values and missing images are refused with a
:class:`ConfigError` that names the key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import tomllib
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from arena_sdk.engine import RulesError, Ruleset, resolve_ruleset

from arena.match import TimeControl
from arena.match.spec import check_seconds, default_hard_cap
from arena.referee.botspec import BotSpec, BotSpecError, parse_bot_spec
from arena.sandbox.docker import ContainerLimits
from arena.toml_keys import REQUIRED as _REQUIRED
from arena.toml_keys import ConfigError  # (also imported from here: the tournament's and sprt's callers)
from arena.toml_keys import check_keys as _check_keys
from arena.toml_keys import read_key as _get
from arena.tournament.cores import usable_cores  # (also imported from here: sprt, bench)


@dataclasses.dataclass(frozen=True)
class Entry:
    """A competitor: a name and where its bot comes from."""

    name: str
    bot: BotSpec
    opponents: tuple[str, ...] | None = None
    """If set, the only entries this one plays (a gauntlet); None: everyone."""


@dataclasses.dataclass(frozen=True)
class FaultPolicy:
    """What happens to misbehaving entries and failed games."""

    strikes_per_game: int = 3
    disqualify_share: float = 0.5
    """An entry whose forfeits exceed this share of its games (after ``disqualify_min_games``) is removed."""
    disqualify_min_games: int = 4
    void_retries: int = 2


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    """A validated tournament file."""

    name: str
    entries: tuple[Entry, ...]
    rules: Ruleset
    deals_per_pairing: int
    time_control: TimeControl
    limits: ContainerLimits
    faults: FaultPolicy
    seed: str
    concurrency: int
    output: Path
    start_timeout: float
    file_hash: str
    source: Path
    scheduler: str | None = None
    """A Dask scheduler to play the tables on (``[cluster] scheduler``); None: this machine."""
    insecure: bool = False
    """``[cluster] insecure``: plain tcp:// to a scheduler on a private network is accepted (docs/cluster.md)."""
    legacy_hashes: tuple[str, ...] = ()
    """Hashes older versions gave this file (the raw bytes; with ``concurrency``): a store claimed
    under one still resumes."""
    content: str = ""
    """:func:`tournament_content` of the file (what its ``file_hash`` hashes)."""

    @property
    def games_per_pairing(self) -> int:
        """Each deal is played twice, once with each entry in each partnership."""
        return 2 * self.deals_per_pairing


_SECTIONS: dict[str, set[str]] = {
    "tournament": {"name", "seed", "deals_per_pairing", "concurrency", "output", "start_timeout"},
    "rules": {"preset", "set"},
    "time": {"move", "bank", "hard_cap", "clock"},
    "limits": {"memory", "cpus", "pids", "tmpfs", "log_bytes"},
    "faults": {"strikes_per_game", "disqualify_share", "disqualify_min_games", "void_retries"},
    "entry": {"name", "bot", "env", "opponents"},
    "cluster": {"scheduler", "insecure"},
}

#: Entry names: a letter or digit, then letters, digits, ``.``, ``_`` or ``-``; at most 64 in all.
#: They are file names (logs), SQL values and labels: nothing that needs quoting anywhere.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SAFE_NAME_TEXT = "1-64 characters: letters, digits, '.', '_' or '-', starting with a letter or digit"


#: Keys of ``[tournament]`` that say how the tournament is run, not what it is: a store
#: resumes under another value (the results do not depend on them).
RUN_KEYS = frozenset({"concurrency"})
#: The most tables a tournament plays at the same time.
MAX_CONCURRENCY = 4096


def tournament_content(data: Mapping[str, Any], run_keys: frozenset[str] = RUN_KEYS) -> str:
    """What a store is bound to, as canonical JSON: the file's content less ``[cluster]`` and
    ``run_keys`` (where and how many at a time it runs is not what it is).  The store keeps it,
    so a grown file can be told from a changed one (:mod:`arena.tournament.growth`)."""
    content: dict[str, Any] = {k: v for k, v in data.items() if k != "cluster"}
    table = content.get("tournament")
    if isinstance(table, dict) and run_keys:
        content["tournament"] = {k: v for k, v in table.items() if k not in run_keys}
    return json.dumps(content, sort_keys=True, default=str)


def tournament_hash(data: Mapping[str, Any], run_keys: frozenset[str] = RUN_KEYS) -> str:
    """The hash of :func:`tournament_content`.  ``run_keys=frozenset()`` gives the hash of the
    versions before ``RUN_KEYS`` were left out."""
    return hashlib.sha256(tournament_content(data, run_keys).encode()).hexdigest()


def parse_concurrency(value: object, where: str = "[tournament] concurrency") -> int:
    """A whole number of tables at a time (1..MAX_CONCURRENCY), or ``"auto"``: one per usable core.

    Raises :class:`ConfigError` for anything else.
    """
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "auto":
            return usable_cores()
        if text.isascii() and text.isdigit() and len(text) <= 6:
            value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENCY:
        raise ConfigError(f'{where} must be a whole number from 1 to {MAX_CONCURRENCY} or "auto", got {value!r}')
    return value


def _positive(value: float, key: str, where: str, *, zero_ok: bool = False) -> None:
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):  # TOML allows inf and nan
        raise ConfigError(f"[{where}] {key} must be {'>= 0' if zero_ok else '> 0'}, got {value}")



#: The ranges of ``[limits]`` (documented in tournaments/example.toml).  Outside
#: them Docker refuses the container (memory under 6 MiB, a CPU quota under
#: 0.01, pids 0 = unlimited, a tmpfs of size 0 = unlimited) or the value makes
#: no sense for one seat; either way every game would void, so the file is refused.
MEMORY_RANGE = (16 << 20, 1 << 40)  # bytes: 16m .. 1024g
CPUS_RANGE = (0.01, 1024.0)
PIDS_RANGE = (8, 4_194_304)  # the kernel's largest pid_max
TMPFS_RANGE = (1 << 20, 1 << 40)  # bytes: 1m .. 1024g
LOG_BYTES_RANGE = (0, 64 << 20)
#: A size as Docker reads it (docker-py's parse_bytes): a number and one unit letter.
_SIZE = re.compile(r"(\d+(?:\.\d+)?)([bkmg]?)", re.IGNORECASE)
#: A size as the kernel's tmpfs ``size=`` reads it: a whole number, no fraction and no ``b``.
_TMPFS_SIZE = re.compile(r"(\d+)([kmg]?)", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str, key: str, bounds: tuple[int, int], *, tmpfs: bool = False) -> int:
    """``"256m"`` -> bytes, refused with one line naming ``[limits] key`` unless within ``bounds``.

    ``tmpfs``: the stricter form the kernel's tmpfs takes (a whole number, unit k, m or g).
    """
    match = (_TMPFS_SIZE if tmpfs else _SIZE).fullmatch(text.strip())
    if match is None:
        form = "a whole number and a unit k, m or g" if tmpfs else "a number and a unit b, k, m or g"
        raise ConfigError(f"[limits] {key} must be a size: {form} (like 256m), got {_shown(text)}")
    size = int(Fraction(match.group(1)) * _UNITS[match.group(2).lower()])  # exact: 400 digits are no float
    low, high = bounds
    if not low <= size <= high:
        raise ConfigError(f"[limits] {key} must be between {_size_text(low)} and {_size_text(high)}, got {_shown(text)}")
    return size


def _shown(value: object) -> str:
    """A refused value for an error line: its repr, cut short (a 400-digit number stays one readable line)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _size_text(size: int) -> str:
    for unit, factor in (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def _in_range(value: float, key: str, bounds: tuple[float, float] | tuple[int, int]) -> None:
    low, high = bounds
    # TOML allows inf and nan (not in range: every comparison with nan is false); a
    # huge whole number is compared as it is, never made a float (which would overflow).
    if not low <= value <= high:
        raise ConfigError(f"[limits] {key} must be between {low} and {high}, got {_shown(value)}")


def parse_limits(table: Mapping[str, Any]) -> ContainerLimits:
    """The ``[limits]`` table: every value parseable, finite and in its range (see the ``*_RANGE`` constants)."""
    memory = _get(table, "memory", str, "256m", "limits")
    parse_size(memory, "memory", MEMORY_RANGE)
    cpus = _get(table, "cpus", (int, float), 1.0, "limits")
    _in_range(cpus, "cpus", CPUS_RANGE)
    pids = _get(table, "pids", int, 64, "limits")
    _in_range(pids, "pids", PIDS_RANGE)
    tmpfs = _get(table, "tmpfs", str, "16m", "limits")
    parse_size(tmpfs, "tmpfs", TMPFS_RANGE, tmpfs=True)
    log_bytes = _get(table, "log_bytes", int, 1 << 20, "limits")
    _in_range(log_bytes, "log_bytes", LOG_BYTES_RANGE)
    # The texts are kept as written (stripped): Docker and tmpfs read exactly these forms.
    return ContainerLimits(
        memory=memory.strip(), cpus=float(cpus), pids=pids, tmpfs_size=tmpfs.strip(), log_cap_bytes=log_bytes
    )


def load_config(
    path: Path, *, check_images: bool = True, scheduler: str | None = None
) -> TournamentConfig:
    """Read and validate a tournament file.

    ``scheduler``: the cluster given on the command line, which wins over the
    file's ``[cluster]``; it tells where the tables play, so whether the CPU
    quota must fit this machine's Docker engine.
    """
    try:
        raw_bytes = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw_bytes.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    config = parse_config(
        data, source=path, file_hash=tournament_hash(data), check_images=check_images,
        scheduler=scheduler,
    )  # fmt: skip
    return dataclasses.replace(
        config, legacy_hashes=(hashlib.sha256(raw_bytes).hexdigest(), tournament_hash(data, frozenset())),
        content=tournament_content(data),
    )


def parse_config(
    data: Mapping[str, Any], *, source: Path, file_hash: str, check_images: bool = True,
    scheduler: str | None = None,
) -> TournamentConfig:
    """Validate parsed TOML; see :func:`load_config`."""
    _check_keys(data, set(_SECTIONS), "top level")
    t = _get(data, "tournament", dict, {}, "top level")
    _check_keys(t, _SECTIONS["tournament"], "tournament")
    name = _get(t, "name", str, source.stem, "tournament")
    seed = str(_get(t, "seed", (str, int), _REQUIRED, "tournament"))
    deals = _get(t, "deals_per_pairing", int, 2, "tournament")
    if deals < 1:
        raise ConfigError(f"[tournament] deals_per_pairing must be >= 1, got {deals}")
    concurrency = parse_concurrency(t.get("concurrency", 1))
    output = Path(_get(t, "output", str, f"tournaments/{name}", "tournament"))  # relative to the cwd
    start_timeout = float(_get(t, "start_timeout", (int, float), 30.0, "tournament"))
    try:
        check_seconds(start_timeout, "start_timeout", inclusive=False)
    except ValueError as exc:
        raise ConfigError(f"[tournament] {exc}") from None

    r = _get(data, "rules", dict, {}, "top level")
    _check_keys(r, _SECTIONS["rules"], "rules")
    preset = _get(r, "preset", str, "pagat", "rules")
    overrides = _get(r, "set", dict, {}, "rules")
    try:
        rules = resolve_ruleset(preset, {k: (str(v) if not isinstance(v, str) else v) for k, v in overrides.items()})
    except RulesError as exc:
        raise ConfigError(f"[rules] {exc}") from None

    tm = _get(data, "time", dict, {}, "top level")
    _check_keys(tm, _SECTIONS["time"], "time")
    move = float(_get(tm, "move", (int, float), 1.0, "time"))
    bank = float(_get(tm, "bank", (int, float), 30.0, "time"))
    try:
        time_control = TimeControl(
            move_s=move,
            bank_s=bank,
            hard_cap_s=float(_get(tm, "hard_cap", (int, float), default_hard_cap(move), "time")),
            strikes_to_forfeit=3,
            clock=_get(tm, "clock", str, "wall", "time"),
        )
    except ValueError as exc:
        raise ConfigError(f"[time] {exc}") from None

    lm = _get(data, "limits", dict, {}, "top level")
    _check_keys(lm, _SECTIONS["limits"], "limits")
    limits = parse_limits(lm)

    f = _get(data, "faults", dict, {}, "top level")
    _check_keys(f, _SECTIONS["faults"], "faults")
    faults = FaultPolicy(
        strikes_per_game=_get(f, "strikes_per_game", int, 3, "faults"),
        disqualify_share=float(_get(f, "disqualify_share", (int, float), 0.5, "faults")),
        disqualify_min_games=_get(f, "disqualify_min_games", int, 4, "faults"),
        void_retries=_get(f, "void_retries", int, 2, "faults"),
    )
    if faults.strikes_per_game < 1:
        raise ConfigError(f"[faults] strikes_per_game must be >= 1, got {faults.strikes_per_game}")
    if not 0 < faults.disqualify_share <= 1:
        raise ConfigError(f"[faults] disqualify_share must be in (0, 1], got {faults.disqualify_share}")
    _positive(faults.void_retries, "void_retries", "faults", zero_ok=True)
    time_control = dataclasses.replace(time_control, strikes_to_forfeit=faults.strikes_per_game)

    raw_entries = _get(data, "entry", list, _REQUIRED, "top level")
    entries = []
    seen: set[str] = set()
    for i, item in enumerate(raw_entries):
        where = f"entry {i + 1}"
        if not isinstance(item, dict):
            raise ConfigError(f"[[entry]] number {i + 1} must be a table")
        _check_keys(item, _SECTIONS["entry"], where)
        entry_name = _get(item, "name", str, _REQUIRED, where).strip()
        if not SAFE_NAME.fullmatch(entry_name):
            raise ConfigError(f"[{where}] name {entry_name!r} is not allowed: use {SAFE_NAME_TEXT}")
        if entry_name in seen:
            raise ConfigError(f"[{where}] duplicate entry name {entry_name!r}")
        seen.add(entry_name)
        try:
            spec = parse_bot_spec(_get(item, "bot", str, _REQUIRED, where))
        except BotSpecError as exc:
            raise ConfigError(f"[{where}] {exc}") from None
        if spec.kind == "cmd":
            spec = dataclasses.replace(spec, target=_resolve_script(spec.target, source.parent))
        env = _entry_env(_get(item, "env", dict, {}, where), where)
        if env:
            spec = dataclasses.replace(spec, env=env)
        opponents = _get(item, "opponents", list, None, where)
        if opponents is not None:
            if not opponents or not all(isinstance(o, str) for o in opponents):
                raise ConfigError(f"[{where}] opponents must be a non-empty list of entry names")
            opponents = tuple(o.strip() for o in opponents)
        entries.append(Entry(entry_name, spec, opponents))
    if len(entries) < 2:
        raise ConfigError(f"a tournament needs at least 2 entries, got {len(entries)}")
    names = {e.name for e in entries}
    for entry in entries:
        for other in entry.opponents or ():
            if other not in names or other == entry.name:
                raise ConfigError(f"entry {entry.name!r}: opponents: {other!r} is not another entry")
    c = _get(data, "cluster", dict, {}, "top level")
    _check_keys(c, _SECTIONS["cluster"], "cluster")
    file_scheduler = _get(c, "scheduler", str, None, "cluster")
    if file_scheduler is not None and not re.fullmatch(r"(tcp|tls)://[^/\s]+:\d+", file_scheduler):
        raise ConfigError(
            f"[cluster] scheduler must be tcp://HOST:PORT (or tls://HOST:PORT), got {file_scheduler!r}"
        )
    if check_images:
        # The CPU quota is checked against this machine's engine only when the
        # tables play here: a cluster's workers may have more cores.
        plays_here = (scheduler or file_scheduler) is None
        _check_images(entries, cpus=limits.cpus if plays_here else None)
    return TournamentConfig(
        name=name,
        entries=tuple(entries),
        rules=rules,
        deals_per_pairing=deals,
        time_control=time_control,
        limits=limits,
        faults=faults,
        seed=seed,
        concurrency=concurrency,
        output=output,
        start_timeout=start_timeout,
        file_hash=file_hash,
        source=source,
        scheduler=file_scheduler,
        insecure=_get(c, "insecure", bool, False, "cluster"),
    )


#: Set by the platform for every bot; an entry cannot override them.
_RESERVED_ENV = {"ARENA_ADDRESS", "ARENA_TOKEN"}


def _entry_env(table: Mapping[str, Any], where: str) -> tuple[tuple[str, str], ...]:
    """An entry's extra environment: text keys and text values."""
    out = []
    for key, value in table.items():
        if not key or "=" in key or key in _RESERVED_ENV:
            raise ConfigError(f"[{where}] env: {key!r} cannot be set (reserved or not a variable name)")
        if not isinstance(value, str):
            raise ConfigError(f"[{where}] env.{key} must be text, got {value!r}")
        out.append((key, value))
    return tuple(out)


def _resolve_script(command: str, base: Path) -> str:
    """Make relative ``.py`` paths in a command relative to the tournament file."""
    import shlex

    words = shlex.split(command)
    out = []
    for word in words:
        candidate = base / word
        if word.endswith(".py") and not Path(word).is_absolute() and candidate.exists():
            word = str(candidate.resolve())
        out.append(word)
    return shlex.join(out)


def _check_images(entries: list[Entry], *, cpus: float | None = None) -> None:
    """Every docker: entry's image exists; ``cpus`` (if given) is no more than the engine's CPUs."""
    images = [e for e in entries if e.bot.kind == "docker"]
    if not images:
        return
    from arena.sandbox.docker import DockerUnavailable, ImageNotFound, docker_client, image_id

    try:
        client = docker_client()
        for entry in images:
            try:
                image_id(client, entry.bot.target)
            except ImageNotFound as exc:
                raise ConfigError(f"entry {entry.name!r}: {exc}") from None
        if cpus is not None:
            _check_engine_cpus(client, cpus)
    except DockerUnavailable as exc:
        raise ConfigError(f"entries use docker images but {exc}") from None


def _check_engine_cpus(client: Any, cpus: float) -> None:
    """Docker refuses a CPU quota above its machine's cores at every container start: refuse it now."""
    try:
        available = int(client.info().get("NCPU") or 0)
    except Exception:  # an engine that cannot say: the seats' start will tell
        return
    if available and cpus > available:
        raise ConfigError(
            f"[limits] cpus = {cpus:g} is more than the {available} CPUs of this machine's Docker engine"
        )
