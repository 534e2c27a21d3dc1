"""What a match is: the ruleset, the games and their seeds, the time control.

A match is a self-contained call: a :class:`MatchSpec` in, an outcome and
records out, no shared state (so a scheduler can later hand matches to remote
workers).
"""

from __future__ import annotations

import dataclasses
import hashlib

from arena_sdk.engine import Ruleset
from arena_sdk.engine.policy import bot_seed

__all__ = ["MatchSpec", "TimeControl", "bot_seed", "game_seeds"]


@dataclasses.dataclass(frozen=True)
class TimeControl:
    """Per-decision limit, per-game bank, hard cap, and strikes that forfeit a game."""

    move_s: float = 1.0
    bank_s: float = 30.0
    hard_cap_s: float = 60.0
    strikes_to_forfeit: int = 3

    def __post_init__(self) -> None:
        if self.move_s <= 0:
            raise ValueError(f"move time must be > 0 s, got {self.move_s}")
        if self.bank_s < 0:
            raise ValueError(f"time bank must be >= 0 s, got {self.bank_s}")
        if self.hard_cap_s < self.move_s:
            raise ValueError(
                f"hard cap ({self.hard_cap_s} s) must be at least the move time ({self.move_s} s)"
            )
        if self.strikes_to_forfeit < 1:
            raise ValueError(f"strikes to forfeit must be >= 1, got {self.strikes_to_forfeit}")


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def game_seeds(match_seed: int | str, games: int) -> list[str]:
    """Deal seeds for the games of a match: one-way hashes of the match seed.

    Hex text, so a bot shown its per-game seed (see :func:`bot_seed`) cannot
    search a small space of deal seeds.
    """
    return [_digest(f"{match_seed}/game/{i}").hex()[:32] for i in range(games)]


@dataclasses.dataclass(frozen=True)
class MatchSpec:
    """One match: the same seats play ``len(deal_seeds)`` games."""

    match_id: str
    rules: Ruleset
    deal_seeds: tuple[str, ...]
    time_control: TimeControl = TimeControl()
    game_ids: tuple[str, ...] = ()

    def game_id(self, index: int) -> str:
        """The id of game ``index`` (given, or derived from the match id)."""
        if self.game_ids:
            return self.game_ids[index]
        return f"{self.match_id}-g{index + 1}"
