"""Matchmaking for the continuous ladder: which two active versions play the next duplicate pair.

A pure function of the current standings (no I/O, no clock, no global randomness): the
server calls :func:`next_pairing` whenever a table slot is free and plays the pairing it
returns. The rule, in order (docs/ladder-matchmaking.md):

1. **Busy versions are avoided.** Only pairings with the fewest members already at a
   table are considered: both members free when at least two versions are free, else
   the one free version against a busy one, else any pairing.
2. **Exploration.** With probability ``Settings.explore`` the pairing is drawn uniformly
   from those pairings, so every version keeps meeting the whole pool (the game graph
   stays connected and the ratings stay comparable across the ladder).
3. **New versions first.** A version is *unsettled* while it has played fewer than
   ``settle_pairs`` pairs or its 95% interval's half width is not below
   ``target_half_width`` (an interval that is not finite counts as infinitely wide).
   The unsettled version with the fewest pairs (then the widest interval) plays, against
   the opponent from which one pair is expected to narrow its interval most (see the
   information model below): one close to it in estimated strength, with a narrow
   interval of its own, and not yet played often against it.
4. **Then where the ranking is least certain.** With every candidate settled, the
   pairing is the one expected to shrink most how far the current ranking's neighbours
   are from being separated at 95%. For each adjacent pair of the ranking (by Elo), with
   ``gap = elo_hi − elo_lo``, the *shortfall* is, by ``Settings.separation``:

   - ``"order"`` (default): with ``width = 1.96·sd(θhi − θlo)`` the half width of the 95%
     interval of their *difference* (``sd`` from the information model below, scaled to
     the reported intervals), ``min(width − gap, width + gap − resolution)``: positive
     while that interval contains 0 (their order is not established: likelihood of
     superiority under 97.5%) *and* reaches beyond ``±Settings.resolution`` Elo;
   - ``"intervals"``: the same with ``width = half_hi + half_lo``: positive while their
     two 95% intervals overlap and together reach beyond a band of ``resolution`` (what a
     leaderboard shows; it needs each version placed against the whole pool, so it
     rewards broad play and gains little over a round robin).

   A neighbour pair whose shortfall is not positive is *settled*: separated, or shown
   equal to within the resolution (an equivalence test) and so tied. Two equal versions
   never separate; without the resolution they would take every pair for ever.

   The ranking's uncertainty is ``Σ softplus(shortfall)`` (softness ``Settings.softness``
   Elo: separated neighbours count next to nothing, unseparated ones fully). Candidates
   are pairings at most ``Settings.window`` places apart in the ranking (every allowed
   pairing if none is). Repeats are penalised by the model itself: a pairing whose
   difference is already well measured teaches little. Two versions that are truly equal
   never separate, but their shortfall shrinks as they play, so they do not take every
   pair.
5. Ties are broken by fewer pairs already played between the two, then by name.

**Information model.** Each duplicate pair between ``a`` and ``b`` adds
``2·p(1−p)`` (two games; ``p`` the Bradley–Terry expected score from the current Elo)
to the Fisher information of ``θa − θb`` (logits); with a weak prior of
``Settings.prior_information`` per version (so a version that never played has a large,
finite variance) its inverse ``Σ`` approximates the ratings' covariance. One more pair
``(a, b)`` lowers the variance of every ``θi`` by ``w·(Σ(ea−eb))ᵢ² / (1 + w·(ea−eb)ᵀΣ(ea−eb))``
(a rank-one update). Only the *relative* change is used: the predicted half width of
version ``i`` is its reported half width times ``sqrt(1 − Δvarᵢ/Σᵢᵢ)``, and a difference's
sd is the model's times one factor that matches the model's variances to the reported
half widths, so the intervals the fit reports (pair-robust, or the model's) set the scale
and the model only says where a pair helps. (The model needs only ``played`` and the
Elo, not the fit's covariance, which ``Standing`` does not carry.)

``next_pairing`` is deterministic given ``rng`` (and independent of the order of
``standings``): it draws exactly one number from ``rng`` per call (the explore draw) plus
one choice when exploring.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Collection, Mapping, Sequence
from itertools import combinations

import numpy as np
from numpy.typing import NDArray

from arena.ratings import ELO_PER_LOGIT, Z95

Floats = NDArray[np.float64]

__all__ = ["INTERVALS", "ORDER", "Settings", "Standing", "difference_sds", "next_pairing"]

#: Settled phase, separation by order: a neighbours' difference is established at 95%.
ORDER = "order"
#: Settled phase, separation by intervals: the two 95% intervals no longer overlap.
INTERVALS = "intervals"


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


@dataclasses.dataclass(frozen=True)
class Settings:
    """Matchmaking knobs (``ladder.toml``'s matchmaking section)."""

    #: A new version plays at least this many pairs before it counts as settled.
    settle_pairs: int = 6
    #: Elo: a version is settled once its 95% interval's half width is below this.
    target_half_width: float = 60.0
    #: Share of picks made at random among the allowed pairings (keeps the graph connected).
    explore: float = 0.1
    #: Settled phase: candidate pairings are at most this many places apart in the ranking.
    window: int = 4
    #: Elo: how sharply the settled phase tells unseparated neighbours from separated ones
    #: (small: only the unseparated count; 2 did best in bench/ladder.py, 10 and 30 worse).
    softness: float = 2.0
    #: Fisher information (logits⁻²) each version gets as a prior, about one game against an equal.
    prior_information: float = 0.25
    #: What the settled phase works towards for neighbours: ``"order"`` (their difference's
    #: 95% interval excludes 0) or ``"intervals"`` (their own 95% intervals do not overlap).
    separation: str = ORDER
    #: Elo: neighbours whose difference's 95% interval lies within ±this count as settled
    #: (tied) though their order is open: equal versions would otherwise never settle.
    resolution: float = 40.0

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.settle_pairs, int) or self.settle_pairs < 0:
            problems.append(f"settle_pairs must be an integer >= 0, got {self.settle_pairs!r}")
        if not _finite(self.target_half_width) or self.target_half_width <= 0:
            problems.append(
                f"target_half_width must be a number > 0, got {self.target_half_width!r}"
            )
        if not _finite(self.explore) or not 0.0 <= self.explore <= 1.0:
            problems.append(f"explore must be a number from 0 to 1, got {self.explore!r}")
        if not isinstance(self.window, int) or self.window < 1:
            problems.append(f"window must be an integer >= 1, got {self.window!r}")
        if not _finite(self.softness) or self.softness <= 0:
            problems.append(f"softness must be a number > 0, got {self.softness!r}")
        if not _finite(self.prior_information) or self.prior_information <= 0:
            problems.append(
                f"prior_information must be a number > 0, got {self.prior_information!r}"
            )
        if not _finite(self.resolution) or self.resolution < 0:
            problems.append(f"resolution must be a number >= 0 (Elo), got {self.resolution!r}")
        if self.separation not in (ORDER, INTERVALS):
            problems.append(
                f"separation must be {ORDER!r} or {INTERVALS!r}, got {self.separation!r}"
            )
        if problems:
            raise ValueError("matchmaking settings: " + "; ".join(problems))


@dataclasses.dataclass(frozen=True)
class Standing:
    """One active version as the matchmaking sees it (from the latest ratings fit).

    A version that has not played yet may carry ``low = -inf`` and ``high = inf`` (or NaN):
    its interval counts as infinitely wide, and a non-finite ``elo`` as the pool's mean.
    """

    name: str  # the version's entry name, e.g. "team-a@3"
    elo: float  # current estimate (pool mean 1500)
    low: float  # 95% interval, Elo
    high: float
    pairs: int  # duplicate pairs it has played (against active versions)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Standing.name must be a non-empty string, got {self.name!r}")
        if isinstance(self.pairs, bool) or not isinstance(self.pairs, int) or self.pairs < 0:
            raise ValueError(f"{self.name}: pairs must be an integer >= 0, got {self.pairs!r}")
        if _finite(self.low) and _finite(self.high) and self.low > self.high:
            raise ValueError(f"{self.name}: interval low {self.low} is above high {self.high}")

    @property
    def half_width(self) -> float:
        """Half the 95% interval's width, Elo (``inf`` when the interval is not finite)."""
        if _finite(self.low) and _finite(self.high):
            return (self.high - self.low) / 2.0
        return math.inf


def next_pairing(
    standings: Sequence[Standing],
    played: Mapping[frozenset[str], int],
    busy: Collection[str],
    rng: random.Random,
    settings: Settings = Settings(),
) -> tuple[str, str] | None:
    """The two versions to play the next duplicate pair, or ``None`` with fewer than two.

    ``played[frozenset({a, b})]`` is how many pairs ``a`` and ``b`` have played (missing:
    none; entries naming versions not in ``standings`` are ignored); ``busy`` the versions
    at a table now. The rule is the module docstring's. The pair's order is by name.
    """
    pool = sorted(standings, key=lambda s: s.name)
    names = [s.name for s in pool]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"standings name a version more than once: {', '.join(dupes)}")
    counts = _played_counts(played, set(names))
    explore_draw = rng.random()
    if len(pool) < 2:
        return None
    busy_set = set(busy)
    free = sum(1 for n in names if n not in busy_set)
    fewest_busy = max(0, 2 - free)
    allowed = [
        (i, j)
        for i, j in combinations(range(len(pool)), 2)
        if (names[i] in busy_set) + (names[j] in busy_set) == fewest_busy
    ]
    if explore_draw < settings.explore:
        i, j = rng.choice(allowed)
        return names[i], names[j]
    model = _Model(pool, counts, settings)
    unsettled = [i for i in range(len(pool)) if not _settled(pool[i], settings)]
    chosen = _newcomer_pairing(pool, unsettled, allowed, model, counts)
    if chosen is None:
        chosen = _uncertain_pairing(pool, allowed, model, counts, settings)
    i, j = chosen
    return names[i], names[j]


def difference_sds(
    standings: Sequence[Standing],
    played: Mapping[frozenset[str], int],
    pairs: Sequence[tuple[str, str]],
    settings: Settings = Settings(),
) -> list[float]:
    """The standard deviation (Elo) of each of ``pairs``' rating differences.

    From the information model (module docstring), scaled to the reported intervals: what
    rule 4's ``"order"`` separation uses. Unlike ``sqrt(se_a² + se_b²)`` it counts what
    two versions' own games against each other tell about their difference (the final
    evaluation's verdicts, :mod:`arena.ladder.course.final`, use it).
    """
    pool = sorted(standings, key=lambda s: s.name)
    index = {s.name: i for i, s in enumerate(pool)}
    model = _Model(pool, _played_counts(played, set(index)), settings)
    scale = model.elo_scale()
    out = []
    for a, b in pairs:
        i, j = index[a], index[b]
        var = float(model.cov[i, i] + model.cov[j, j] - 2.0 * model.cov[i, j])
        out.append(scale * math.sqrt(max(var, 0.0)))
    return out


def _settled(s: Standing, settings: Settings) -> bool:
    return s.pairs >= settings.settle_pairs and s.half_width < settings.target_half_width


def _played_counts(
    played: Mapping[frozenset[str], int], names: set[str]
) -> dict[frozenset[str], int]:
    """``played`` checked and restricted to the active versions."""
    out: dict[frozenset[str], int] = {}
    for key, n in played.items():
        if not isinstance(key, frozenset) or len(key) != 2:
            raise ValueError(f"played keys must be frozensets of two version names, got {key!r}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"played[{sorted(key)}] must be an integer >= 0, got {n!r}")
        if key <= names and n:
            out[key] = n
    return out


class _Model:
    """The information model of the module docstring, for one call."""

    def __init__(
        self, pool: list[Standing], counts: Mapping[frozenset[str], int], settings: Settings
    ) -> None:
        k = len(pool)
        finite = [s.elo for s in pool if _finite(s.elo)]
        centre = sum(finite) / len(finite) if finite else 1500.0
        self.elo = np.array([s.elo if _finite(s.elo) else centre for s in pool], dtype=np.float64)
        self.half = np.array([s.half_width for s in pool], dtype=np.float64)
        theta = (self.elo - centre) / ELO_PER_LOGIT
        index = {s.name: i for i, s in enumerate(pool)}
        ends = np.array([[index[x] for x in key] for key in counts], dtype=np.int64).reshape(-1, 2)
        a, b = ends[:, 0], ends[:, 1]
        w = np.fromiter(counts.values(), dtype=np.float64, count=len(counts)) * self.weight(
            theta[a] - theta[b]
        )
        h = np.eye(k) * settings.prior_information
        np.add.at(h, (a, a), w)
        np.add.at(h, (b, b), w)
        np.add.at(h, (a, b), -w)
        np.add.at(h, (b, a), -w)
        self.theta = theta
        # Ratings are reported around the pool's mean, so their variances are those of
        # θ − mean(θ): project out the common shift, which only the prior pins down
        # (it is an eigenvector of h, so the projection is exact).
        centring = np.eye(k) - 1.0 / k
        self.cov: Floats = centring @ np.linalg.inv(h) @ centring

    @staticmethod
    def weight(diff: float | Floats) -> float | Floats:
        """Information about ``θa − θb`` from one duplicate pair (two games): ``2·p(1−p)``."""
        p = 1.0 / (1.0 + np.exp(-diff))
        return 2.0 * p * (1.0 - p)

    def update(self, a: Sequence[int], b: Sequence[int]) -> tuple[Floats, Floats]:
        """The rank-one update of one more pair ``(a[c], b[c])`` for each candidate ``c``:
        ``Σ' = Σ − k[c]·col[:, c]·col[:, c]ᵀ``."""
        ia, ib = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        col = self.cov[:, ia] - self.cov[:, ib]
        c = np.arange(len(ia))
        s = col[ia, c] - col[ib, c]
        w = self.weight(self.theta[ia] - self.theta[ib])
        k: Floats = w / (1.0 + w * s)
        return col, k

    def shrink(self, col: Floats, k: Floats) -> Floats:
        """Predicted half width / current half width of every version (rows) after the
        candidates' update (columns)."""
        rel = 1.0 - k[None, :] * col * col / np.diagonal(self.cov)[:, None]
        out: Floats = np.sqrt(np.clip(rel, 0.0, 1.0))
        return out

    def finite_half(self, fill: float) -> Floats:
        """The reported half widths, ``fill`` for an infinite one (a version not yet rated)."""
        out: Floats = np.where(np.isfinite(self.half), self.half, fill)
        return out

    def elo_scale(self) -> float:
        """Elo per model standard deviation, calibrated on the reported intervals.

        The model knows where a pair teaches most, not the exact scale: duplicate pairs are
        less noisy than two independent games, and the fit may use pair-robust errors. The
        factor makes the model's variances match the reported half widths on average.
        """
        ok = np.isfinite(self.half) & (self.half > 0)
        if not ok.any():
            return ELO_PER_LOGIT
        reported = (self.half[ok] / Z95) ** 2
        return float(np.sqrt(reported.sum() / np.diagonal(self.cov)[ok].sum()))


def _newcomer_pairing(
    pool: list[Standing],
    unsettled: list[int],
    allowed: list[tuple[int, int]],
    model: _Model,
    counts: Mapping[frozenset[str], int],
) -> tuple[int, int] | None:
    """Rule 3: the most urgent unsettled version and its most informative opponent."""
    playable = {x for pair in allowed for x in pair}
    urgent = sorted(
        (i for i in unsettled if i in playable),
        key=lambda i: (pool[i].pairs, -pool[i].half_width, pool[i].name),
    )
    if not urgent:
        return None
    a = urgent[0]
    options = [j if i == a else i for i, j in allowed if a in (i, j)]
    shrink = model.shrink(*model.update([a] * len(options), options))[a]

    def key(c: int) -> tuple[float, float, int, str]:
        b = options[c]
        return (
            float(shrink[c]),  # smaller is better: a's interval narrows most
            abs(float(model.elo[a] - model.elo[b])),
            counts.get(frozenset((pool[a].name, pool[b].name)), 0),
            pool[b].name,
        )

    b = options[min(range(len(options)), key=key)]
    return (a, b) if a < b else (b, a)


def _softplus(x: Floats, softness: float) -> Floats:
    out: Floats = softness * np.logaddexp(0.0, x / softness)
    return out


def _uncertain_pairing(
    pool: list[Standing],
    allowed: list[tuple[int, int]],
    model: _Model,
    counts: Mapping[frozenset[str], int],
    settings: Settings,
) -> tuple[int, int]:
    """Rule 4: the pairing expected to shrink most what keeps the ranking's neighbours apart."""
    order = sorted(range(len(pool)), key=lambda i: (-model.elo[i], pool[i].name))
    rank = {i: r for r, i in enumerate(order)}
    near = [(i, j) for i, j in allowed if abs(rank[i] - rank[j]) <= settings.window]
    candidates = near or allowed
    hi, lo = np.array(order[:-1]), np.array(order[1:])
    gap = model.elo[hi] - model.elo[lo]
    col, k = model.update([c[0] for c in candidates], [c[1] for c in candidates])
    # A neighbour pair is settled once separated (its 95% band above 0: width < gap) or
    # measured to the resolution (its band inside ±resolution: width + gap <= resolution).
    half = model.finite_half(10.0 * settings.target_half_width)
    new_half = half[:, None] * model.shrink(col, k)
    if settings.separation == ORDER:
        # The 95% interval of each neighbours' difference, in Elo, before and after.
        scale = model.elo_scale()
        var = model.cov[hi, hi] + model.cov[lo, lo] - 2.0 * model.cov[hi, lo]
        diff = col[hi] - col[lo]
        new_var = np.maximum(var[:, None] - k[None, :] * diff * diff, 0.0)
        width = Z95 * scale * np.sqrt(var)
        new_width = Z95 * scale * np.sqrt(new_var)
    else:
        width = half[hi] + half[lo]
        new_width = new_half[hi] + new_half[lo]
    res = settings.resolution
    before = np.minimum(width - gap, width + gap - res)
    after = np.minimum(new_width - gap[:, None], new_width + gap[:, None] - res)
    if np.any(before > 0.0):
        soft = settings.softness
        gain = (_softplus(before, soft)[:, None] - _softplus(after, soft)).sum(axis=0)
    else:
        # Every neighbour pair is settled: narrow the leaderboard's intervals (rule 5).
        gain = (half[:, None] - new_half).sum(axis=0)

    def key(c: int) -> tuple[float, int, str, str]:
        i, j = candidates[c]
        return (
            -float(gain[c]),
            counts.get(frozenset((pool[i].name, pool[j].name)), 0),
            pool[i].name,
            pool[j].name,
        )

    return candidates[min(range(len(candidates)), key=key)]
