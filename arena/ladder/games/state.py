"""What the ladder loop tells the web site: light, so the site imports no runner.

:class:`LadderState` is the loop's latest standings, pairs in play and build;
the loop replaces it whole and the site reads it from another thread.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the standings module loads the ratings' numbers; the site only reads the values
    from arena.ladder.games.live import LiveGames
    from arena.ladder.games.standings import Standing


@dataclasses.dataclass
class LadderState:
    """What the web site shows while the loop runs (read from another thread: replaced whole, never mutated)."""

    standings: tuple[Standing, ...] = ()
    in_play: tuple[tuple[str, str], ...] = ()
    building: str | None = None
    live: LiveGames | None = None
    """The games in play as spectators see them (one hub for the loop's life, shared, not copied)."""
    engine_down: str | None = None
    """Why the Docker engine cannot start containers now (None while it can): games and builds wait for it."""


__all__ = ["LadderState"]
