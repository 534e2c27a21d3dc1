"""``[matchmaking]`` and ``[play]`` of ``ladder.toml``: how the next pair is picked, and the practice tables.

This package owns both sections: their parsers and the text ``arena ladder
init`` writes for them.  The configuration loader (:mod:`arena.ladder.config`)
composes them with the other packages' sections.  A bad value is one
:class:`~arena.toml_keys.ConfigError` line naming the key.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from arena.ladder.games.matchmaking import Settings as MatchmakingSettings
from arena.toml_keys import ConfigError, read_key

#: The keys of ``[matchmaking]`` (every field of the settings) and ``[play]``.
MATCHMAKING_KEYS = {field.name for field in dataclasses.fields(MatchmakingSettings)}
PLAY_KEYS = {"enabled", "tables", "per_team_per_day"}


def parse_matchmaking(table: dict[str, Any]) -> MatchmakingSettings:
    """``[matchmaking]``: every :class:`~arena.ladder.games.matchmaking.Settings` field, by its type.

    Unknown keys were refused before (the loader checks every section's keys); a value of
    the wrong type or out of range is one :class:`ConfigError` line naming the key.
    """
    values: dict[str, Any] = {}
    for field in dataclasses.fields(MatchmakingSettings):
        if field.name not in table:
            continue
        default = getattr(MatchmakingSettings, field.name)
        if isinstance(default, str):
            values[field.name] = read_key(table, field.name, str, default, "matchmaking")
        elif isinstance(default, int):
            values[field.name] = read_key(table, field.name, int, default, "matchmaking")
        else:
            value = table[field.name]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"[matchmaking] {field.name} must be a number, got {value!r}")
            values[field.name] = float(value)
    try:
        return MatchmakingSettings(**values)
    except ValueError as exc:
        raise ConfigError(f"[matchmaking] {str(exc).removeprefix('matchmaking settings: ')}") from None


MATCHMAKING_TEMPLATE = """[matchmaking]                  # docs/ladder-matchmaking.md
settle_pairs = 6               # a new version plays at least this many pairs first
target_half_width = 60.0       # Elo: a version is settled once its 95% interval is narrower than this each side
explore = 0.1                  # share of pairings chosen at random (keeps every version connected)
separation = "order"           # "order": neighbours' order established; "intervals": their intervals apart
resolution = 40.0              # Elo: neighbours whose difference is shown to be within ±this count as tied
window = 4                     # candidate pairings are at most this many places apart in the ranking
softness = 2.0                 # Elo: how sharply settled neighbours are told from unsettled ones
prior_information = 0.25       # each version's prior information (about one game against an equal)
"""


@dataclasses.dataclass(frozen=True)
class PlaySettings:
    """``[play]``: practice tables, where a signed-in team's member plays with and against active versions."""

    enabled: bool = True
    """Whether teams may open practice tables at all."""
    tables: int = 2
    """Practice tables at once, all teams together (each runs up to three bot containers)."""
    per_team_per_day: int = 10
    """Practice tables a team may open per UTC day."""


def parse_play(table: dict[str, Any]) -> PlaySettings:
    """``[play]``; :class:`ConfigError` (one line) for a bad value."""
    enabled = read_key(table, "enabled", bool, PlaySettings.enabled, "play")
    tables = read_key(table, "tables", int, PlaySettings.tables, "play")
    per_day = read_key(table, "per_team_per_day", int, PlaySettings.per_team_per_day, "play")
    if not 1 <= tables <= 64:
        raise ConfigError(f"[play] tables must be 1 to 64, got {tables}")
    if not 0 <= per_day <= 10_000:
        raise ConfigError(f"[play] per_team_per_day must be 0 to 10000, got {per_day}")
    return PlaySettings(enabled=enabled, tables=tables, per_team_per_day=per_day)


PLAY_TEMPLATE = """
[play]                         # practice tables on the site: a team plays with and against active versions (not rated)
enabled = true                 # false: no practice tables
tables = 2                     # practice tables at once, all teams together (each runs up to three bot containers)
per_team_per_day = 10          # practice tables a team may open per UTC day
"""


__all__ = [
    "MATCHMAKING_KEYS", "MATCHMAKING_TEMPLATE", "PLAY_KEYS", "PLAY_TEMPLATE", "MatchmakingSettings", "PlaySettings",
    "parse_matchmaking", "parse_play",
]  # fmt: skip
