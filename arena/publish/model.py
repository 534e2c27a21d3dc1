"""What gets published: the standings of a tournament (the input of every output here)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from arena.ratings import Result

#: Keys of an entry's provenance.
PROVENANCE_KEYS = ("image_id", "sdk_version", "engine_version")


@dataclass(frozen=True)
class GameRow:
    """One played game, as a row of ``results.csv``.

    ``score`` is ``entry_a``'s (1 win, 0.5 draw, 0 loss); ``ending`` is the game's ending
    (``target``, ``floor``, ``max_hands``, ``forfeit:<why>``, ``void:<why>``); ``cluster``
    is the duplicate pair; ``scores_a``/``scores_b`` are the final game points of each side;
    ``hands`` the hands played (0 if unknown).
    ``pairing``, ``deal`` and ``table`` place the game in the schedule, and ``record`` is
    its record file relative to the tournament directory (all optional: the replay pages
    of ``arena ratings publish`` use them).
    """

    game_id: str
    entry_a: str
    entry_b: str
    score: float
    ending: str
    cluster: str
    scores_a: int
    scores_b: int
    hands: int = 0
    pairing: int | None = None
    deal: int | None = None
    table: int | None = None
    record: str | None = None

    @property
    def is_void(self) -> bool:
        """Whether the platform failed and the game does not count."""
        return self.ending.startswith("void")


@dataclass
class Standings:
    """A tournament's outcome, ready to publish.

    ``faults`` is entry -> reason -> count; ``provenance`` is entry ->
    {image_id, sdk_version, engine_version}. Entry names are untrusted text (bot
    authors choose them): every output escapes them for its format.
    """

    title: str
    ruleset_preset: str
    ruleset_hash: str
    entries: list[str]
    results: list[Result]
    games: list[GameRow]
    faults: dict[str, dict[str, int]] = field(default_factory=dict)
    disqualified: set[str] = field(default_factory=set)
    provenance: dict[str, dict[str, str]] = field(default_factory=dict)
    ruleset: dict[str, object] = field(default_factory=dict)
    """The full ruleset (preset and every option) when known: the caption shows overrides."""

    def fault_reasons(self) -> list[str]:
        """Every fault reason that occurred, sorted."""
        return sorted({reason for counts in self.faults.values() for reason in counts})


def results_from_games(games: Iterable[GameRow]) -> list[Result]:
    """The rated results of ``games``: every game except the voided ones."""
    return [Result(g.entry_a, g.entry_b, g.score, g.cluster) for g in games if not g.is_void]
