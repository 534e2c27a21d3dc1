"""The tournament file (TOML): parse and validate it before anything starts.

Every key is documented in ``tournaments/example.toml``.  Unknown keys,
duplicate entry names, bad values and missing images are refused with a
:class:`ConfigError` that names the key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena_sdk.engine import Ruleset

from arena.match import TimeControl
from arena.match.spec import check_seconds
from arena.referee.botspec import BotSpec, BotSpecError, parse_bot_spec
from arena.sandbox.docker import ContainerLimits
# The parts of the file every runner's tables share are the kernel's (arena.tables.settings);
# the typed key readers are arena.toml_keys'.
from arena.tables.settings import parse_concurrency, parse_limits, parse_rules, parse_time, positive
from arena.toml_keys import REQUIRED as _REQUIRED
from arena.toml_keys import ConfigError  # (also imported from here: the tournament's callers)
from arena.toml_keys import check_keys as _check_keys
from arena.toml_keys import read_key as _get


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
    t = _section(data, "tournament")
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
    rules = parse_rules(_section(data, "rules"))
    time_control = parse_time(_section(data, "time"))
    limits = parse_limits(_section(data, "limits"))
    faults = _faults(_section(data, "faults"))
    time_control = dataclasses.replace(time_control, strikes_to_forfeit=faults.strikes_per_game)
    entries = _entries(_get(data, "entry", list, _REQUIRED, "top level"), source)
    c = _section(data, "cluster")
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


def _section(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The table ``[name]`` (empty if absent), its keys checked."""
    table = _get(data, name, dict, {}, "top level")
    _check_keys(table, _SECTIONS[name], name)
    return table


def _faults(f: Mapping[str, Any]) -> FaultPolicy:
    """The ``[faults]`` table."""
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
    positive(faults.void_retries, "void_retries", "faults", zero_ok=True)
    return faults


def _entries(raw_entries: list[Any], source: Path) -> list[Entry]:
    """The ``[[entry]]`` tables: at least two, names unique and safe, opponents among them."""
    seen: set[str] = set()
    entries = [_entry(item, i + 1, source, seen) for i, item in enumerate(raw_entries)]
    if len(entries) < 2:
        raise ConfigError(f"a tournament needs at least 2 entries, got {len(entries)}")
    for entry in entries:
        for other in entry.opponents or ():
            if other not in seen or other == entry.name:
                raise ConfigError(f"entry {entry.name!r}: opponents: {other!r} is not another entry")
    return entries


def _entry(item: object, number: int, source: Path, seen: set[str]) -> Entry:
    """One ``[[entry]]`` table (``number`` from 1, as errors name it); its name joins ``seen``."""
    where = f"entry {number}"
    if not isinstance(item, dict):
        raise ConfigError(f"[[entry]] number {number} must be a table")
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
    return Entry(entry_name, spec, opponents)


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
