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
    logs: tuple[tuple[str, str], ...] = ()
    """The bots' logs of the game's table: (who, e.g. ``greedy, seat 0``; the file relative to the
    tournament directory).  A table's bots play all its games, so its logs cover them all."""

    @property
    def is_void(self) -> bool:
        """Whether the platform failed and the game does not count."""
        return self.ending.startswith("void")


@dataclass(frozen=True)
class EntryTiming:
    """An entry's time over its stored games: what its bots used and what the platform added.

    ``wall_s`` is the time charged to its bots; ``cpu_s`` their CPU time over
    the ``cpu_decisions`` decisions where it could be measured; ``ref_s`` the
    referee's own CPU time for its decisions; ``lag_s`` the referee's stalls
    while it thought (never charged).  A bot slow in wall time but not in CPU
    time waited on its machine; a large ``lag_s`` means the platform was busy.
    ``offturn_cpu_s`` is the CPU its bots used while not asked (pondering), over
    the ``offturn_games`` games where that could be measured.
    """

    games: int
    decisions: int
    wall_s: float
    max_s: float
    cpu_s: float
    cpu_decisions: int
    ref_s: float
    lag_s: float
    timeouts: int
    offturn_cpu_s: float | None = None
    offturn_games: int = 0

    @property
    def offturn_cpu_ms_per_game(self) -> float | None:
        """CPU used while not asked, per game where measured; None where it never was."""
        if not self.offturn_games or self.offturn_cpu_s is None:
            return None
        return 1000 * self.offturn_cpu_s / self.offturn_games

    @property
    def wall_ms_per_decision(self) -> float | None:
        return 1000 * self.wall_s / self.decisions if self.decisions else None

    @property
    def cpu_ms_per_decision(self) -> float | None:
        """None where no decision's CPU time could be measured."""
        return 1000 * self.cpu_s / self.cpu_decisions if self.cpu_decisions else None

    @property
    def ref_us_per_decision(self) -> float | None:
        return 1e6 * self.ref_s / self.decisions if self.decisions else None

    def as_json(self) -> dict[str, object]:
        """Plain figures (milliseconds per decision, rounded) for results.json."""

        def r(x: float | None, digits: int = 3) -> float | None:
            return None if x is None else round(x, digits)

        return {
            "games": self.games, "decisions": self.decisions, "timeouts": self.timeouts,
            "wall_ms_per_decision": r(self.wall_ms_per_decision), "max_ms": r(1000 * self.max_s),
            "cpu_ms_per_decision": r(self.cpu_ms_per_decision), "cpu_decisions": self.cpu_decisions,
            "referee_us_per_decision": r(self.ref_us_per_decision, 1), "platform_lag_ms": r(1000 * self.lag_s),
            "offturn_cpu_ms_per_game": r(self.offturn_cpu_ms_per_game, 1),
        }  # fmt: skip


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
    timing: dict[str, EntryTiming] = field(default_factory=dict)
    """Entry -> its time figures, where the store has them (shown next to its faults)."""

    def fault_reasons(self) -> list[str]:
        """Every fault reason that occurred, sorted."""
        return sorted({reason for counts in self.faults.values() for reason in counts})


def results_from_games(games: Iterable[GameRow]) -> list[Result]:
    """The rated results of ``games``: every game except the voided ones."""
    return [Result(g.entry_a, g.entry_b, g.score, g.cluster) for g in games if not g.is_void]
