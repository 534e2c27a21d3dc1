"""The suspension rule: a new version that loses each of its first games by its own fault is taken out.

``[ladder] suspend_after = k`` (0: never): a newly active version that lost
each of its first ``k`` stored games by its own crash or forfeit is
suspended (the reason on its team's page) and its team's previous good
version is active again, in one transaction
(:meth:`~arena.ladder.versions.store.VersionTables.suspend`).  The loop
counts every stored game here as it is stored (and every game already stored
when it starts), so a restart counts the same first games.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.ladder.versions.lifecycle import ACTIVE, IllegalTransition
from arena.ladder.versions.store import VersionTables
from arena.results.store import StoredGame


class Suspension:
    """Each version's first stored games, and the suspension once a version lost all ``after`` of them."""

    def __init__(self, store: VersionTables, after: int, tell: Callable[[str], None]) -> None:
        self.store = store
        self.after = after
        self.tell = tell
        #: Each version's first stored games, True where it lost them by its own crash or forfeit.
        self.first_games: dict[str, list[bool]] = {}

    def count(self, game: StoredGame) -> None:
        """Count a stored game for the suspension rule (each version's first games)."""
        if self.after:
            for side in (game.side0, game.side1):
                seen = self.first_games.setdefault(side, [])
                if len(seen) < self.after:
                    seen.append(side in game.forfeit_entries)

    def check(self, game: StoredGame) -> None:
        """A newly active version that lost each of its first games by its own crash or forfeit is suspended."""
        k = self.after
        for side in (game.side0, game.side1):
            seen = self.first_games.get(side, [])
            if k == 0 or len(seen) != k or not all(seen):
                continue
            version = self.store.version_by_entry(side)
            if version is None or version.status != ACTIVE:
                continue
            reason = (
                f"suspended: it lost each of its first {k} games by its own crash or forfeit "
                f"({game.forfeit_reason or 'forfeit'}: {(game.forfeit_detail or '')[:200]}); fix it and submit again"
            )
            try:
                restored = self.store.suspend(version, reason)
            except IllegalTransition:
                continue
            self.first_games[side] = []  # told once
            back = f"; {restored.entry} is active again" if restored is not None else ""
            self.tell(f"{side} {reason}{back}")


__all__ = ["Suspension"]
