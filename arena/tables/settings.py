"""A run's file, the parts every runner's tables share: ``[rules]``, ``[time]``, ``[limits]``, concurrency.

A tournament file and a ladder's ``ladder.toml`` (and ``arena sprt``'s
``--concurrency``) give their tables the same settings: the ruleset, the
clock, the containers' limits and how many tables play at once.  They are
read here, once, with the same checks and the same one-line refusals
(:class:`ConfigError`, naming the section and the key); each runner's own
sections stay with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from arena_sdk.engine import RulesError, Ruleset, resolve_ruleset

from arena.match import TimeControl
from arena.match.spec import default_hard_cap
from arena.sandbox.docker import ContainerLimits
from arena.tables.cores import usable_cores
from arena.toml_keys import REQUIRED, ConfigError, check_keys, read_key


#: The most tables a run plays at the same time.
MAX_CONCURRENCY = 4096


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


def parse_rules(table: Mapping[str, Any]) -> Ruleset:
    """The ``[rules]`` table: a preset and its ``set`` overrides (TOML values given as the text ``--set`` takes)."""
    overrides = read_key(table, "set", dict, {}, "rules")
    try:
        return resolve_ruleset(
            read_key(table, "preset", str, "pagat", "rules"),
            {k: (v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v))
             for k, v in overrides.items()},
        )  # fmt: skip
    except RulesError as exc:
        raise ConfigError(f"[rules] {exc}") from None


def parse_time(table: Mapping[str, Any], *, clock: str = "wall", strikes: int = 3) -> TimeControl:
    """The ``[time]`` table (``move``, ``bank``, ``hard_cap``, ``clock``); ``clock`` and ``strikes`` are the runner's defaults."""
    move = float(read_key(table, "move", (int, float), 1.0, "time"))
    bank = float(read_key(table, "bank", (int, float), 30.0, "time"))
    hard_cap = float(read_key(table, "hard_cap", (int, float), default_hard_cap(move), "time"))
    chosen = read_key(table, "clock", str, clock, "time")
    try:  # (the getters above say what is wrong themselves: a ConfigError is a ValueError too)
        return TimeControl(move_s=move, bank_s=bank, hard_cap_s=hard_cap, strikes_to_forfeit=strikes, clock=chosen)
    except ValueError as exc:
        raise ConfigError(f"[time] {exc}") from None


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
    memory = read_key(table, "memory", str, "256m", "limits")
    parse_size(memory, "memory", MEMORY_RANGE)
    cpus = read_key(table, "cpus", (int, float), 1.0, "limits")
    _in_range(cpus, "cpus", CPUS_RANGE)
    pids = read_key(table, "pids", int, 64, "limits")
    _in_range(pids, "pids", PIDS_RANGE)
    tmpfs = read_key(table, "tmpfs", str, "16m", "limits")
    parse_size(tmpfs, "tmpfs", TMPFS_RANGE, tmpfs=True)
    log_bytes = read_key(table, "log_bytes", int, 1 << 20, "limits")
    _in_range(log_bytes, "log_bytes", LOG_BYTES_RANGE)
    # The texts are kept as written (stripped): Docker and tmpfs read exactly these forms.
    return ContainerLimits(
        memory=memory.strip(), cpus=float(cpus), pids=pids, tmpfs_size=tmpfs.strip(), log_cap_bytes=log_bytes
    )


def positive(value: float, key: str, where: str, *, zero_ok: bool = False) -> None:
    """Refuse a negative, infinite or NaN ``[where] key`` (and 0 unless ``zero_ok``): TOML allows inf and nan."""
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        raise ConfigError(f"[{where}] {key} must be {'>= 0' if zero_ok else '> 0'}, got {value}")


__all__ = [
    "CPUS_RANGE", "LOG_BYTES_RANGE", "MAX_CONCURRENCY", "MEMORY_RANGE", "PIDS_RANGE", "REQUIRED", "TMPFS_RANGE",
    "ConfigError", "check_keys", "parse_concurrency", "parse_limits", "parse_rules", "parse_size", "parse_time",
    "positive", "read_key",
]  # fmt: skip
