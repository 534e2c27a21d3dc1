"""Seat and team names for the two table sizes.

Four players sit N, E, S, W clockwise; N/S and E/W are partners.  In the
two-player game the players are A and B, each a team of one.  Seats and teams
are plain ints everywhere in the engine; these tables give their names.
"""

from __future__ import annotations

from arena_sdk.engine.errors import MalformedInputError

SEAT_NAMES: dict[int, tuple[str, ...]] = {4: ("N", "E", "S", "W"), 2: ("A", "B")}
TEAM_NAMES: dict[int, tuple[str, ...]] = {4: ("NS", "EW"), 2: ("A", "B")}


def seat_name(players: int, seat: int) -> str:
    """``"N"``/``"E"``/``"S"``/``"W"``, or ``"A"``/``"B"``."""
    return SEAT_NAMES[players][seat]


def team_name(players: int, team: int) -> str:
    """``"NS"``/``"EW"``, or ``"A"``/``"B"``."""
    return TEAM_NAMES[players][team]


def team_of(players: int, seat: int) -> int:
    """The team index of a seat: partners sit opposite in the four-player game."""
    return seat % 2


def team_members(players: int, team: int) -> tuple[int, ...]:
    """The seats of a team."""
    return (team, team + 2) if players == 4 else (team,)


def parse_seat(players: int, text: object) -> int:
    """A seat index from its name; raises :class:`MalformedInputError`."""
    names = SEAT_NAMES[players]
    if isinstance(text, str) and text.strip().upper() in names:
        return names.index(text.strip().upper())
    raise MalformedInputError(f"unknown seat {text!r}; seats are {', '.join(names)}")


def parse_team(players: int, text: object) -> int:
    """A team index from its name; raises :class:`MalformedInputError`."""
    names = TEAM_NAMES[players]
    if isinstance(text, str) and text.strip().upper() in names:
        return names.index(text.strip().upper())
    raise MalformedInputError(f"unknown team {text!r}; teams are {', '.join(names)}")
