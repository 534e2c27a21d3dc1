"""The final evaluation: which versions are final, which neighbours are settled, which pair to play next.

After the deadline (:mod:`arena.ladder.course.calendar`) only the final versions play.

**Final versions.**  A team's final version is the version it selected among its last
``[final] choose_from`` ranked versions (when the knob is on and it selected one), else
its *active version at the deadline*: of its versions that were ranked (active or
retired) and activated by the deadline, the one not retired before it, the latest
activated.  The times come from the store, so a server that was down at the deadline
fixes the same versions when it starts; a build that finished after the deadline
does not count.

**Settled neighbours.**  The final table is the standings of the final versions (the
ladder's one definition, :mod:`arena.ladder.games.standings`: every stored game counts,
before and after the deadline).  For each pair of neighbours, upper ``a`` and lower
``b``, with ``sd`` the standard deviation (Elo) of their rating difference:

- the likelihood of superiority ``LOS = Φ((elo_a − elo_b) / sd)``;
- **separated** when ``LOS ≥ [final] los`` (default 0.95);
- **tied** when the 95% interval of their difference lies within ``±[final] resolution``
  Elo: ``gap + 1.96·sd ≤ resolution`` (an equivalence test: equal bots never separate,
  and this ends their games);
- **open** otherwise.

``sd`` comes from the matchmaking's information model over the pairs played, scaled to
the reported intervals (:func:`arena.ladder.games.matchmaking.difference_sds`, what its
``"order"`` separation uses): it counts what two neighbours' own games against each
other tell about their difference.  ``sqrt(se_a² + se_b²)`` from the two intervals (the
fallback with no pair counts) ignores that: two equal versions would need every
version's interval narrow before they could be tied, and ``bench/final_evaluation.py``
ran into its cap of 1500 pairs at N = 8 that way (a median of 580 with the model).

The evaluation is settled when every final version is rated and no neighbour pair is
open.  Until then :func:`final_pairing` spends the next pair on the open neighbours
least separated (lowest LOS) whose two versions are free, and first on any final
version with no rating yet.  Pure functions (no I/O, no clock) but :func:`fix_candidates`.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from arena.ladder.course.calendar import Calendar, parse_instant
from arena.ladder.versions.lifecycle import ACTIVE, RETIRED
from arena.ladder.games.matchmaking import Standing as MatchStanding
from arena.ladder.games.matchmaking import difference_sds
from arena.ladder.games.standings import Standing
from arena.ladder.store import LadderStore
from arena.ladder.versions.store import Version

#: z of the two-sided 95% interval (the intervals the standings report).
Z95 = 1.959963984540054

SEPARATED = "separated"
TIED = "tied"
OPEN = "open"

SELECTED = "selected"
AT_DEADLINE = "active at the deadline"


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


# ------------------------------------------------------------ final versions


def _stamp(text: str | None) -> datetime.datetime | None:
    try:
        return parse_instant(text, "time") if text else None
    except ValueError:
        return None


def active_at(versions: Iterable[Version], deadline: datetime.datetime) -> Version | None:
    """The team's version active at ``deadline`` (see the module docstring), from its stored times."""
    best: tuple[datetime.datetime, int, Version] | None = None
    for v in versions:
        activated, retired = _stamp(v.activated), _stamp(v.retired)
        if v.status not in (ACTIVE, RETIRED) or activated is None or activated > deadline:
            continue
        if retired is not None and retired <= deadline:
            continue
        if best is None or (activated, v.number) > best[:2]:
            best = (activated, v.number, v)
    return None if best is None else best[2]


def choosable(versions: Sequence[Version], choose_from: int) -> list[Version]:
    """The versions a team may select as final: its last ``choose_from`` ranked ones (active or retired)."""
    ranked = [v for v in versions if v.status in (ACTIVE, RETIRED) and v.activated is not None]
    ranked.sort(key=lambda v: v.number)
    return ranked[-choose_from:] if choose_from > 0 else []


def fix_candidates(store: LadderStore, calendar: Calendar, choices: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """``{team: (entry, how)}`` for every enabled team with a final version (reads the store)."""
    assert calendar.deadline is not None
    out: dict[str, tuple[str, str]] = {}
    for team in store.teams():
        if team.disabled:
            continue
        versions = store.versions(team=team.name)
        chosen = choices.get(team.name)
        allowed = {v.entry for v in choosable(versions, calendar.choose_from)}
        ranked_at_deadline = {v.entry for v in versions if (_stamp(v.activated) or calendar.deadline) <= calendar.deadline}
        if chosen is not None and chosen in allowed and chosen in ranked_at_deadline:
            out[team.name] = (chosen, SELECTED)
            continue
        found = active_at(versions, calendar.deadline)
        if found is not None:
            out[team.name] = (found.entry, AT_DEADLINE)
    return out


# ------------------------------------------------------------ neighbours


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Two neighbours of the final table: ``upper`` placed above ``lower``."""

    upper: str
    lower: str
    gap: float
    """Elo: upper's minus lower's (>= 0)."""
    los: float
    """Likelihood that upper is stronger than lower."""
    width: float
    """Elo: half width of the 95% interval of their difference."""
    state: str
    """``separated``, ``tied`` or ``open``."""


def _se(row: Standing) -> float:
    assert row.low is not None and row.high is not None
    return max(0.0, (row.high - row.low) / 2.0 / Z95)


def verdict(upper: Standing, lower: Standing, los_threshold: float, resolution: float, sd: float | None = None) -> Verdict:
    """The verdict on two rated neighbours (the module docstring's rule).

    ``sd``: the standard deviation (Elo) of their difference; None: from their own
    intervals as if independent, ``sqrt(se_a² + se_b²)``.
    """
    assert upper.elo is not None and lower.elo is not None
    gap = upper.elo - lower.elo
    if sd is None:
        sd = math.hypot(_se(upper), _se(lower))
    los = (1.0 if gap > 0 else 0.5) if sd == 0 else _normal_cdf(gap / sd)
    width = Z95 * sd
    if los >= los_threshold:
        state = SEPARATED
    elif abs(gap) + width <= resolution:
        state = TIED
    else:
        state = OPEN
    return Verdict(upper.entry, lower.entry, gap, los, width, state)


def verdicts(
    rows: Sequence[Standing],
    los_threshold: float,
    resolution: float,
    played: Mapping[frozenset[str], int] | None = None,
) -> list[Verdict]:
    """One verdict per pair of rated neighbours of ``rows`` (ranked best first, as the standings are).

    ``played`` (``{frozenset({a, b}): pairs}``, every version's): the differences' spread
    comes from the matchmaking's information model over those pairs
    (:func:`arena.ladder.games.matchmaking.difference_sds`), which counts what two neighbours'
    own games tell; without it, from the two intervals as if independent (wider).
    """
    rated = [r for r in rows if r.elo is not None and r.low is not None and r.high is not None]
    neighbours = list(zip(rated, rated[1:], strict=False))
    sds: list[float | None] = [None] * len(neighbours)
    if played is not None and neighbours:
        pool = [MatchStanding(r.entry, r.elo, r.low, r.high, r.pairs) for r in rated]  # type: ignore[arg-type]
        sds = list(difference_sds(pool, played, [(a.entry, b.entry) for a, b in neighbours]))
    return [verdict(a, b, los_threshold, resolution, sd) for (a, b), sd in zip(neighbours, sds, strict=True)]


def settled(rows: Sequence[Standing], found: Sequence[Verdict]) -> bool:
    """Every final version is rated and no neighbour pair is open (fewer than two versions: nothing to settle)."""
    if len(rows) < 2:
        return True
    return all(r.elo is not None for r in rows) and all(v.state != OPEN for v in found)


def final_pairing(
    rows: Sequence[Standing],
    found: Sequence[Verdict],
    busy: Collection[str],
    played: Mapping[frozenset[str], int],
) -> tuple[str, str] | None:
    """The next final pair (names in order), or None when nothing open has both versions free.

    An unrated final version first (against the free version it met least, then by
    name); else the open neighbours with the lowest LOS, then the fewest pairs between them.
    """
    free = [r for r in rows if r.entry not in busy]
    unrated = sorted((r for r in free if r.elo is None), key=lambda r: (r.pairs, r.entry))
    for newcomer in unrated:
        others = [r.entry for r in free if r.entry != newcomer.entry]
        if others:
            other = min(others, key=lambda o: (played.get(frozenset((newcomer.entry, o)), 0), o))
            a, b = sorted((newcomer.entry, other))
            return a, b
    open_pairs = [v for v in found if v.state == OPEN and v.upper not in busy and v.lower not in busy]
    if not open_pairs:
        return None
    best = min(open_pairs, key=lambda v: (v.los, played.get(frozenset((v.upper, v.lower)), 0), v.upper))
    a, b = sorted((best.upper, best.lower))
    return a, b


# ------------------------------------------------------------ the final table


@dataclasses.dataclass(frozen=True)
class FinalRow:
    """One team's line of the final table."""

    rank: int | None
    """Its place (1 = first); a tied group shares its best place; None: no rating."""
    team: str
    entry: str
    elo: float | None
    low: float | None
    high: float | None
    los_next: float | None
    """Likelihood that it is stronger than the team placed next (None for the last)."""
    next_verdict: str | None
    """``separated``, ``tied`` or ``open`` towards the next team."""
    tie_group: int | None
    """Teams declared tied share a group number (None: not tied with a neighbour)."""
    pairs: int
    games: int
    points_per_hand: float | None


@dataclasses.dataclass(frozen=True)
class FinalTable:
    """The final standings at ``at``: rows best first, whether settled, and the rule's knobs."""

    at: str
    settled: bool
    los: float
    resolution: float
    rows: tuple[FinalRow, ...]

    def to_dict(self) -> dict[str, object]:
        return {"at": self.at, "settled": self.settled, "los": self.los, "resolution": self.resolution,
                "rows": [dataclasses.asdict(r) for r in self.rows]}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> FinalTable:
        rows = tuple(FinalRow(**r) for r in data["rows"])  # type: ignore[attr-defined]
        return cls(str(data["at"]), bool(data["settled"]), float(data["los"]), float(data["resolution"]), rows)  # type: ignore[arg-type]


def final_table(
    rows: Sequence[Standing],
    at: str,
    los_threshold: float,
    resolution: float,
    played: Mapping[frozenset[str], int] | None = None,
) -> FinalTable:
    """The final table of the final versions' standings ``rows`` (ranked best first); ``played`` as :func:`verdicts`."""
    found = verdicts(rows, los_threshold, resolution, played)
    after = {v.upper: v for v in found}
    groups: dict[str, int] = {}
    group = 0
    for v in found:
        if v.state == TIED:
            if v.upper not in groups:
                group += 1
                groups[v.upper] = group
            groups[v.lower] = groups[v.upper]
    out: list[FinalRow] = []
    place: dict[int, int] = {}
    for r in rows:
        rank = r.rank
        g = groups.get(r.entry)
        if rank is not None and g is not None:
            rank = place.setdefault(g, rank)  # a tied group shares its best place
        v = after.get(r.entry)
        out.append(FinalRow(
            rank=rank, team=r.entry.rpartition("@")[0], entry=r.entry, elo=r.elo, low=r.low, high=r.high,
            los_next=v.los if v else None, next_verdict=v.state if v else None, tie_group=g, pairs=r.pairs,
            games=r.games, points_per_hand=r.points_per_hand,
        ))  # fmt: skip
    return FinalTable(at, settled(rows, found), los_threshold, resolution, tuple(out))


__all__ = [
    "AT_DEADLINE", "OPEN", "SELECTED", "SEPARATED", "TIED", "FinalRow", "FinalTable", "Verdict", "active_at",
    "choosable", "final_pairing", "final_table", "fix_candidates", "settled", "verdict", "verdicts",
]  # fmt: skip
