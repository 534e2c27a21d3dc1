"""The keys of a settings file's TOML tables, read by type: one line naming the key for anything wrong.

Every settings file the arena reads (a tournament file, a ladder's
``ladder.toml``) refuses an unknown key, a value of the wrong type or a
missing required one with a :class:`ConfigError` that names the section and
the key, never a traceback.  The tournament's parsers and each package of the
ladder read their own sections with these two helpers; they import nothing
but the standard library and :mod:`arena.errors`, so every layer may use them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.errors import ArenaError


class ConfigError(ArenaError, ValueError):
    """A settings file (a tournament file, ``ladder.toml``) that cannot be used; the message names the key."""


#: The ``default`` of :func:`read_key` for a key that must be present.
REQUIRED: Any = object()


def check_keys(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    """Refuse any key of ``table`` (the section ``[where]``) not in ``allowed``, naming them and the allowed ones."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"[{where}]: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")


def read_key(table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], default: Any, where: str) -> Any:
    """``table[key]`` if it is a ``kind`` (``default`` when absent; :data:`REQUIRED`: it must be there).

    A boolean is not a number here (TOML's ``true`` is refused where a whole
    number is wanted), unless ``kind`` names ``bool``.
    """
    if key not in table:
        if default is REQUIRED:
            raise ConfigError(f"[{where}] {key} is required")
        return default
    value = table[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ConfigError(f"[{where}] {key} must be {kind_name(kind)}, got {value!r}")
    if not isinstance(value, kind):
        raise ConfigError(f"[{where}] {key} must be {kind_name(kind)}, got {value!r}")
    return value


def kind_name(kind: type | tuple[type, ...]) -> str:
    """How an error line names a type: ``a whole number``, ``text``, ``a table`` ..."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "a whole number", float: "a number", str: "text", dict: "a table", list: "a list"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def toml_value(value: Any) -> str:
    """``value`` as TOML text, for the files the arena writes: ``true``, ``40``, ``"text"`` (quotes escaped)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


__all__ = ["REQUIRED", "ConfigError", "check_keys", "kind_name", "read_key", "toml_value"]
