"""What every table the ladder plays reads of its configuration: one definition for the pairs and the validations.

``[rules]``, ``[time]``, ``[limits]`` and ``[ladder] start_timeout`` are the
whole ladder's (parsed by :mod:`arena.ladder.config`); the pairs' schedule
(:mod:`arena.ladder.games.schedule`) and a new version's validation game
(:mod:`arena.ladder.versions.builds`) both seat bots with them, and say so by
this protocol (a ``LadderConfig`` is one) rather than by importing the loader
on the floor above them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from arena_sdk.engine import Ruleset

from arena.match import TimeControl
from arena.sandbox.docker import ContainerLimits


class TableSettings(Protocol):
    """How the ladder's tables are played, and where their logs and records go."""

    @property
    def directory(self) -> Path: ...
    @property
    def rules(self) -> Ruleset: ...
    @property
    def time_control(self) -> TimeControl: ...
    @property
    def limits(self) -> ContainerLimits: ...
    @property
    def start_timeout(self) -> float: ...


__all__ = ["TableSettings"]
