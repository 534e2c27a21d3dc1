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
- **separated** when ``LOS ≥ [final] los`` (default 0.95) and the gap is at least
  ``[final] resolution``: a difference that matters, shown.  Without the second
  condition two identical versions were declared separated by chance in up to half
  of the simulated courses that ran until settled (the verdict is looked at after
  every pair: LOS touched 0.95 at a 27 Elo gap); within the resolution a pair ends tied,
  or open and graded as tied;
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
open.  Until then :func:`final_pairing` spends the next pair first on any final version
with no rating yet, then on the open neighbours in turn (the fewest pairs between them
first), those whose order changes a grade (:func:`straddling`: their places get
different grades under ``[grades]``) first and twice as often, so that every open pair
gets games; the loop asks it once per free table (several tables at once), and no pair
runs more than one turn ahead of the open pair furthest behind.

**An open pair is graded as tied.**  When ``final_until`` comes with pairs still open,
the table freezes as it stands and each open pair is graded as if tied: its two teams
share the better place (:func:`final_table`'s ``tie_group``), so the grade; the verdict
(``separated``, ``tied``, ``open``) is in every row, and the table carries a loud
:attr:`FinalTable.warning`.  Two identical bots therefore end in one band, tied or
open and graded as tied, unless they are separated by chance: the verdicts are looked
at after every pair, so that risk is above ``1 - los`` (``bench/final_evaluation.py
--course`` measures it).

Pure functions (no I/O, no clock) but :func:`fix_candidates`.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from arena.ladder.course.calendar import Calendar, parse_instant
from arena.ladder.course.grades import GradeBands
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
    if los >= los_threshold and gap >= resolution:  # a difference that matters, shown (the module docstring)
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


def straddling(rows: Sequence[Standing], bands: GradeBands | None) -> frozenset[frozenset[str]]:
    """The rated neighbours of ``rows`` (best first) whose order changes a grade under ``bands``.

    Two neighbours straddle a band when the places they hold now (among the rated
    versions) get different grades; no bands: none does (every open pair counts the same).
    """
    rated = [r.entry for r in rows if r.elo is not None]
    if bands is None or not bands.bands:
        return frozenset()
    n = len(rated)
    return frozenset(
        frozenset((upper, lower))
        for place, (upper, lower) in enumerate(zip(rated, rated[1:], strict=False), 1)
        if bands.grade(place, n) != bands.grade(place + 1, n)
    )


#: How many more pairs an open pair straddling a grade band gets than one that does not.
STRADDLE_WEIGHT = 2.0


def final_pairing(
    rows: Sequence[Standing],
    found: Sequence[Verdict],
    busy: Collection[str],
    played: Mapping[frozenset[str], int],
    straddles: Collection[frozenset[str]] = frozenset(),
    spent: Mapping[frozenset[str], int] | None = None,
) -> tuple[str, str] | None:
    """The next final pair (names in order), or None when no open neighbour pair may play now.

    An unrated final version first (against the free version it met least, then by
    name).  Then the open neighbour pairs in turn: each pair's *turn* is the pairs
    ``spent`` on it by the final evaluation (None: ``played``, every pair between its two
    versions, the term's too), divided by :data:`STRADDLE_WEIGHT` for a pair straddling a
    grade band (``straddles``, :func:`straddling`: played first and twice as often).
    Among the pairs whose two versions are free, the lowest turn plays (then straddling
    first, then the lowest LOS), but only if it is at most one turn ahead of the open pair
    furthest behind: otherwise the table waits for that pair's versions to be free.
    Every open pair gets games, none waits for another to settle, and several tables
    play at once (a pick for each free table) without locking into the same disjoint
    pairs: "lowest LOS first" played only the pair of identical versions, and a pick of
    whatever was free kept three tables on the same three pairs, none of them neighbours.
    """
    free = [r for r in rows if r.entry not in busy]
    unrated = sorted((r for r in free if r.elo is None), key=lambda r: (r.pairs, r.entry))
    for newcomer in unrated:
        others = [r.entry for r in free if r.entry != newcomer.entry]
        if others:
            other = min(others, key=lambda o: (played.get(frozenset((newcomer.entry, o)), 0), o))
            return _ordered(newcomer.entry, other)
    counts = spent if spent is not None else played

    def turn(v: Verdict) -> tuple[float, bool, float, str]:
        pair = frozenset((v.upper, v.lower))
        weight = STRADDLE_WEIGHT if pair in straddles else 1.0
        return counts.get(pair, 0) / weight, pair not in straddles, v.los, v.upper

    still_open = [v for v in found if v.state == OPEN]
    if not still_open:
        return None
    behind = min(turn(v)[0] for v in still_open)
    ready = [v for v in still_open if v.upper not in busy and v.lower not in busy and turn(v)[0] <= behind + 1]
    if not ready:
        return None
    best = min(ready, key=turn)
    return _ordered(best.upper, best.lower)


def _ordered(a: str, b: str) -> tuple[str, str]:
    first, second = sorted((a, b))
    return first, second


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
    """Teams graded as tied share a group number: neighbours declared tied, and neighbours still
    open (an open pair is graded as tied); None: separated from both neighbours."""
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

    @property
    def open_pairs(self) -> int:
        """How many neighbour pairs are still open (graded as tied)."""
        return sum(1 for r in self.rows if r.next_verdict == OPEN)

    @property
    def warning(self) -> str | None:
        """The loud line of a table with open pairs (None when every pair is separated or tied)."""
        n = self.open_pairs
        unrated = sum(1 for r in self.rows if r.elo is None)
        if self.settled or (n == 0 and unrated == 0):
            return None
        parts = []
        if n:
            pairs = "1 neighbour pair is" if n == 1 else f"{n} neighbour pairs are"
            parts.append(f"{pairs} still open (verdict 'open'): by the rule, an open pair is graded as tied "
                         "(its two teams share the better place, so the grade)")  # fmt: skip
        if unrated:
            parts.append(f"{unrated} final version(s) have no rating (no place, the 'missing' grade)")
        return "NOT SETTLED: " + "; ".join(parts)

    def to_dict(self) -> dict[str, object]:
        return {"at": self.at, "settled": self.settled, "los": self.los, "resolution": self.resolution,
                "open_pairs": self.open_pairs, "warning": self.warning,
                "rows": [dataclasses.asdict(r) for r in self.rows]}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> FinalTable:
        fields = {f.name for f in dataclasses.fields(FinalRow)}
        rows = tuple(FinalRow(**{k: v for k, v in r.items() if k in fields}) for r in data["rows"])  # type: ignore[attr-defined]
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
        if v.state != SEPARATED:  # tied, or open: an open pair is graded as tied (the module docstring)
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
    "choosable", "final_pairing", "final_table", "fix_candidates", "settled", "straddling", "verdict", "verdicts",
]  # fmt: skip
