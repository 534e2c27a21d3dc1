"""The suspension rule, by rate: a version whose own faults lose a share of its recent games is taken out.

``ladder.toml``'s ``[ladder]`` sets it (:class:`SuspensionRule`):

- ``suspend_window = 10``: the games judged are a version's last this many stored games;
- ``suspend_share = 0.5``: it is suspended once its own crash or forfeit (a crash, a
  timeout, illegal answers past the strikes: whatever charges it the game's forfeit) lost
  at least this share of them;
- ``suspend_after = 4``: the fewest stored games before it is judged (0: never suspend).

However its first game went: a version that won its first game (its opponent forfeited
first) and then forfeited 9 in a row was never suspended by the former rule ("lost each
of its first k games"); by rate it is, after its fourth game (3 of 4 lost by its own fault).
An honest version that crashes now and then (fewer than the share of its recent games) plays on.

A suspended version stops playing, the reason is on its team's page, and its team's previous
good version is active again, in one transaction
(:meth:`~arena.ladder.versions.store.VersionTables.suspend`).  The loop counts every stored
game here as it is stored (and every game already stored when it starts), so a restart
judges the same recent games.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from typing import Any

from arena.ladder.versions.lifecycle import ACTIVE, IllegalTransition
from arena.ladder.versions.store import VersionTables
from arena.results.store import StoredGame
from arena.toml_keys import ConfigError, read_key


@dataclasses.dataclass(frozen=True)
class SuspensionRule:
    """``[ladder] suspend_after``, ``suspend_window`` and ``suspend_share`` (the module docstring)."""

    after: int = 4
    """The fewest stored games before a version is judged (0: the rule is off)."""
    window: int = 10
    """A version's last this many stored games are judged."""
    share: float = 0.5
    """Suspended when its own faults lost at least this share of them."""

    def __post_init__(self) -> None:
        if isinstance(self.after, bool) or not isinstance(self.after, int) or not 0 <= self.after <= 1000:
            raise ValueError(f"suspend_after must be 0 to 1000, got {self.after!r}")
        if isinstance(self.window, bool) or not isinstance(self.window, int) or not 1 <= self.window <= 1000:
            raise ValueError(f"suspend_window must be 1 to 1000, got {self.window!r}")
        if self.after > self.window:
            raise ValueError(f"suspend_after ({self.after}) must be at most suspend_window ({self.window})")
        if isinstance(self.share, bool) or not isinstance(self.share, (int, float)) or not 0 < self.share <= 1:
            raise ValueError(f"suspend_share must be a number above 0 and at most 1, got {self.share!r}")

    def judged(self, lost: collections.deque[bool] | list[bool]) -> bool:
        """Whether recent games ``lost`` (True: lost by its own fault) suspend the version."""
        return self.after > 0 and len(lost) >= self.after and sum(lost) >= self.share * len(lost)


def parse_suspension(lad: dict[str, Any]) -> SuspensionRule:
    """``[ladder]``'s three suspension keys; :class:`ConfigError` (one line) for a bad one."""
    try:
        return SuspensionRule(
            after=read_key(lad, "suspend_after", int, SuspensionRule.after, "ladder"),
            window=read_key(lad, "suspend_window", int, SuspensionRule.window, "ladder"),
            share=float(read_key(lad, "suspend_share", (int, float), SuspensionRule.share, "ladder")),
        )
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"[ladder] {exc}") from None


class Suspension:
    """Each version's recent stored games, and the suspension once its own faults lost the rule's share."""

    def __init__(self, store: VersionTables, rule: SuspensionRule | int, tell: Callable[[str], None]) -> None:
        self.store = store
        self.rule = rule if isinstance(rule, SuspensionRule) else SuspensionRule(after=rule, window=max(rule, 10))
        self.tell = tell
        #: Each version's last ``window`` stored games, True where it lost the game by its own fault.
        self.recent: dict[str, collections.deque[bool]] = {}

    def count(self, game: StoredGame) -> None:
        """Count a stored game for the rule (each version's recent games)."""
        if self.rule.after:
            for side in (game.side0, game.side1):
                seen = self.recent.setdefault(side, collections.deque(maxlen=self.rule.window))
                seen.append(side in game.forfeit_entries)

    def check(self, game: StoredGame) -> None:
        """An active version whose own faults lost the rule's share of its recent games is suspended."""
        for side in (game.side0, game.side1):
            seen = self.recent.get(side)
            if seen is None or not self.rule.judged(seen):
                continue
            version = self.store.version_by_entry(side)
            if version is None or version.status != ACTIVE:
                continue
            reason = (
                f"suspended: its own crash or forfeit lost {sum(seen)} of its last {len(seen)} games "
                f"(the ladder suspends at {self.rule.share:.0%} of the last {self.rule.window}; latest "
                f"{game.forfeit_reason or 'forfeit'}: {(game.forfeit_detail or '')[:200]}); fix it and submit again"
            )
            try:
                restored = self.store.suspend(version, reason)
            except IllegalTransition:
                continue
            seen.clear()  # told once
            back = f"; {restored.entry} is active again" if restored is not None else ""
            self.tell(f"{side} {reason}{back}")


__all__ = ["Suspension", "SuspensionRule", "parse_suspension"]
