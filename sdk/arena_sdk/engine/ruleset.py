"""Rulesets: the options of docs/rules.md section 6, the presets of section 7.

A :class:`Ruleset` is a preset plus overrides, fully resolved and validated.
Its :attr:`~Ruleset.hash` is stable across runs and machines: it is taken over
the canonical JSON of the options only, so two spellings of the same rules
(a preset, or another preset with overrides) hash alike.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from arena_sdk.engine.errors import MalformedInputError

BLIND_NIL_MODES = ("off", "any", "first-bidder")
FAILED_NIL_MODES = ("bags", "contract")
SPADE_LEAD_MODES = ("broken", "trumped", "always")


@dataclasses.dataclass(frozen=True)
class Ruleset:
    """A resolved set of rules; build one with :func:`resolve_ruleset`."""

    preset: str = "pagat"
    players: int = 4
    target: int = 500
    lose_floor: int | None = None
    nil_value: int = 100
    blind_nil: str = "off"
    blind_nil_value: int = 200
    blind_nil_min_deficit: int = 0
    failed_nil_tricks: str = "bags"
    spade_lead: str = "broken"
    bag_threshold: int = 10
    bag_penalty: int = 100
    max_hands: int = 200

    def options(self) -> dict[str, Any]:
        """The options without the preset name, in declaration order."""
        data = dataclasses.asdict(self)
        del data["preset"]
        return data

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the preset name and every option."""
        return dataclasses.asdict(self)

    @property
    def hash(self) -> str:
        """A stable 16-hex-digit hash of the options (not of the preset name)."""
        canonical = json.dumps(self.options(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @property
    def num_teams(self) -> int:
        """Two partnerships, or two single players."""
        return 2

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ruleset:
        """Rebuild a ruleset from :meth:`to_dict` output, validating every value."""
        if not isinstance(data, Mapping):
            raise MalformedInputError(f"a ruleset must be an object, got {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise MalformedInputError(f"unknown ruleset option(s): {', '.join(unknown)}")
        missing = sorted(known - set(data))
        if missing:
            raise MalformedInputError(f"ruleset is missing option(s): {', '.join(missing)}")
        preset = data["preset"]
        if preset not in PRESETS:
            raise MalformedInputError(_unknown_preset_message(preset))
        rules = cls(**dict(data))
        _validate(rules)
        if rules.players != PRESETS[preset].players:
            raise MalformedInputError(
                f"players={rules.players} does not match preset {preset!r} "
                f"({PRESETS[preset].players} players)"
            )
        return rules


PRESETS: dict[str, Ruleset] = {
    "pagat": Ruleset(preset="pagat"),
    "wikipedia": Ruleset(
        preset="wikipedia", lose_floor=-200, blind_nil="any", spade_lead="trumped"
    ),
    "cards4": Ruleset(preset="cards4", blind_nil="first-bidder", spade_lead="trumped"),
    "two-player": Ruleset(preset="two-player", players=2, blind_nil="any"),
}
DEFAULT_PRESET = "pagat"

#: Options that ``--set`` may not change, with the reason.
_FIXED = {"preset": "name the preset instead", "players": "it is set by the preset"}
#: Options the two-player game refuses outright (docs/rules.md section 7).
_NOT_IN_TWO_PLAYER = {
    "failed_nil_tricks": "a failed nil's tricks are always bags in the two-player game",
}

_OPTION_HELP: dict[str, str] = {
    "target": "points that end the game (int > 0)",
    "lose_floor": "score at or below which the game ends ('none' or int < 0)",
    "nil_value": "points won or lost by a nil bid (int >= 0)",
    "blind_nil": "who may bid blind nil: " + ", ".join(BLIND_NIL_MODES),
    "blind_nil_value": "points won or lost by a blind nil (int >= 0)",
    "blind_nil_min_deficit": "blind nil only when trailing by at least this (int >= 0; 0 = always)",
    "failed_nil_tricks": "where a failed nil's tricks go: " + ", ".join(FAILED_NIL_MODES),
    "spade_lead": "what lets spades be led: " + ", ".join(SPADE_LEAD_MODES),
    "bag_threshold": "bags that trigger a penalty (int >= 1)",
    "bag_penalty": "points lost per threshold of bags (int >= 0; 0 = off)",
    "max_hands": "safety cap on hands per game (int >= 1)",
}


def option_help() -> dict[str, str]:
    """One line of help per option that ``--set`` accepts."""
    return dict(_OPTION_HELP)


def _unknown_preset_message(name: object) -> str:
    return f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}"


def _parse_int(key: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise MalformedInputError(f"option {key} needs a whole number, got {text!r}") from None


def _parse_value(key: str, text: str) -> Any:
    """Turn the text of ``key=text`` into the option's value."""
    if key == "lose_floor":
        return None if text.strip().lower() in ("none", "off", "") else _parse_int(key, text)
    if key in ("blind_nil", "failed_nil_tricks", "spade_lead"):
        return text.strip()
    return _parse_int(key, text)


def _check_choice(key: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise MalformedInputError(
            f"option {key}={value!r} is not allowed; choose one of: {', '.join(choices)}"
        )


def _check_int(key: str, value: object, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedInputError(f"option {key} must be a whole number, got {value!r}")
    if value < minimum:
        raise MalformedInputError(f"option {key}={value} is out of range: it must be >= {minimum}")


def _validate(rules: Ruleset) -> None:
    """Raise :class:`MalformedInputError` for any out-of-range option."""
    if rules.players not in (2, 4):
        raise MalformedInputError(f"players must be 2 or 4, got {rules.players!r}")
    _check_int("target", rules.target, 1)
    if rules.lose_floor is not None:
        _check_int("lose_floor", rules.lose_floor, -(10**9))
        if rules.lose_floor >= 0:
            raise MalformedInputError(
                f"option lose_floor={rules.lose_floor} is out of range: it must be below 0 (or none)"
            )
    _check_int("nil_value", rules.nil_value, 0)
    _check_choice("blind_nil", rules.blind_nil, BLIND_NIL_MODES)
    _check_int("blind_nil_value", rules.blind_nil_value, 0)
    _check_int("blind_nil_min_deficit", rules.blind_nil_min_deficit, 0)
    _check_choice("failed_nil_tricks", rules.failed_nil_tricks, FAILED_NIL_MODES)
    _check_choice("spade_lead", rules.spade_lead, SPADE_LEAD_MODES)
    _check_int("bag_threshold", rules.bag_threshold, 1)
    _check_int("bag_penalty", rules.bag_penalty, 0)
    _check_int("max_hands", rules.max_hands, 1)
    if rules.players == 2:
        if rules.blind_nil == "first-bidder":
            raise MalformedInputError(
                "blind_nil=first-bidder does not apply to the two-player game; use any or off"
            )
        if rules.failed_nil_tricks != "bags":
            raise MalformedInputError(_NOT_IN_TWO_PLAYER["failed_nil_tricks"])


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    """Split ``["key=value", ...]`` into a dict; a bad item raises a clear error."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise MalformedInputError(f"override {item!r} must look like key=value")
        out[key] = value
    return out


def resolve_ruleset(
    preset: str | None = None, overrides: Mapping[str, object] | None = None
) -> Ruleset:
    """A preset plus overrides, validated.

    ``overrides`` values may be text (as from ``--set key=value``) or already
    typed values.  Unknown presets, unknown options, options fixed by the
    preset and out-of-range values raise :class:`MalformedInputError`.
    """
    name = DEFAULT_PRESET if preset is None else preset
    base = PRESETS.get(name)
    if base is None:
        raise MalformedInputError(_unknown_preset_message(name))
    changes: dict[str, Any] = {}
    for key, raw in (overrides or {}).items():
        if key in _FIXED:
            raise MalformedInputError(f"option {key} cannot be overridden: {_FIXED[key]}")
        if key not in _OPTION_HELP:
            raise MalformedInputError(
                f"unknown option {key!r}; known options: {', '.join(_OPTION_HELP)}"
            )
        if base.players == 2 and key in _NOT_IN_TWO_PLAYER:
            raise MalformedInputError(f"option {key} is refused: {_NOT_IN_TWO_PLAYER[key]}")
        changes[key] = _parse_value(key, raw) if isinstance(raw, str) else raw
    rules = dataclasses.replace(base, **changes)
    _validate(rules)
    return rules
