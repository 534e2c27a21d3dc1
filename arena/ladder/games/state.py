"""What the ladder loop tells the web site, and the ladder's game ids: light, so the site imports no runner.

:class:`LadderState` is the loop's latest standings, pairs in play and build;
the loop replaces it whole and the site reads it from another thread.  The
game ids are the ladder's own (``L<pair, 7 digits>-t1`` and ``-t2``, one per
table of a duplicate pair): the site answers 404 for anything else before it
touches a store.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the standings module loads the ratings' numbers; the site only reads the values
    from arena.ladder.games.live import LiveGames
    from arena.ladder.games.standings import Standing

#: The ids of the ladder's games (:func:`game_ids`): anything else is a 404.
GAME_ID = re.compile(r"L\d{7}-t[12]")


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


#: The cluster of the ladder's pair ``seq`` (its two games share it), as a format the ledger fills in.
CLUSTER_FORMAT = "L{seq:07d}"


def pair_cluster(seq: int) -> str:
    """The cluster of the ladder's pair ``seq``: ``L`` and the pair's number in 7 digits."""
    return CLUSTER_FORMAT.format(seq=seq)


def game_ids(seq: int) -> tuple[str, str]:
    """The two games (tables 1 and 2) of the ladder's pair ``seq``."""
    return f"{pair_cluster(seq)}-t1", f"{pair_cluster(seq)}-t2"


__all__ = ["CLUSTER_FORMAT", "GAME_ID", "LadderState", "game_ids", "pair_cluster"]
