"""The ladder's own state, ``DIR/ladder.sqlite``, as one object: every package's tables composed.

Each package owns its tables (:mod:`arena.ladder.common.ladder_db` has the
file's connections, its write transaction, its meta table and the columns
added since the first ladders): the teams, members and sessions
(:class:`~arena.ladder.teams.store.TeamTables`), the versions
(:class:`~arena.ladder.versions.store.VersionTables`), the rating history
(:class:`~arena.ladder.games.store.GameTables`).  :class:`LadderStore` is all
three on one set of connections, for whoever needs more than one package's
tables: the loop, the site, the commands, the course's exports.
"""

from __future__ import annotations

from arena.ladder.games.store import GameTables
from arena.ladder.teams.store import TeamTables
from arena.ladder.versions.store import VersionTables


class LadderStore(TeamTables, VersionTables, GameTables):
    """``ladder.sqlite``: teams, their versions, sign-in sessions, rating history (see the module docstring)."""


__all__ = ["LadderStore"]
