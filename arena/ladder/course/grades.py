"""The organiser's grade bands (``ladder.toml``'s ``[grades]``): a grade from a team's final place.

**The rule** (one, by rank percentile, so it does not depend on where the Elo scale
sits): ``bands = [[10, "A"], [35, "B"], [70, "C"], [100, "D"]]`` gives a team the
first band's grade for which *fewer than that percent of the ranked teams are
placed above it*.  Teams in one tied group share the group's best place, so a tie
never straddles a band.  With 10 ranked teams: the first gets A (0% above), the
second B (10% above is not fewer than 10), ..., the last D.  A team with no rated
final version gets ``missing`` (empty by default: the organiser decides).
The bounds rise and the last is 100 (every ranked team gets a grade).

Standard library only.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class GradeBands:
    """``[grades]``: ``bands`` as (percent, grade) rising to 100; ``missing`` for a team with no place."""

    bands: tuple[tuple[float, str], ...] = ()
    missing: str = ""

    def __post_init__(self) -> None:
        last = 0.0
        for bound, grade in self.bands:
            if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not last < bound <= 100:
                raise ValueError(f"bands: each bound is a percent above the previous one and at most 100, got {bound!r}")
            if not isinstance(grade, str) or not 1 <= len(grade) <= 20:
                raise ValueError(f"bands: each grade is a text of 1 to 20 characters, got {grade!r}")
            last = float(bound)
        if self.bands and last != 100:
            raise ValueError(f"bands: the last bound must be 100 (every ranked team gets a grade), got {last:g}")
        if not isinstance(self.missing, str) or len(self.missing) > 20:
            raise ValueError(f"missing must be a text of at most 20 characters, got {self.missing!r}")

    def grade(self, place: int | None, ranked: int) -> str:
        """The grade of a team at ``place`` (1 = first; a tied group's best place) among ``ranked`` teams."""
        if place is None or ranked < 1 or not self.bands:
            return self.missing if place is None else ""
        above = 100.0 * (place - 1) / ranked
        for bound, grade in self.bands:
            if above < bound:
                return grade
        return self.bands[-1][1]  # unreachable: the last bound is 100 and above < 100


def parse_bands(value: object) -> tuple[tuple[float, str], ...]:
    """``[[10, "A"], [35, "B"], ...]`` as read from TOML; :class:`ValueError` (one line) for another shape."""
    if not isinstance(value, list):
        raise ValueError(f"bands must be a list of [percent, grade] pairs, got {value!r}")
    out = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2:
            raise ValueError(f"bands: each band is [percent, grade], got {item!r}")
        out.append((item[0], item[1]))
    return tuple(out)


__all__ = ["GradeBands", "parse_bands"]
