"""The generalised sequential probability ratio test (GSPRT) on pentanomial pair outcomes.

The test fishtest runs for chess engines, on our duplicate pairs:

- A pair scores 0, ¼, ½, ¾ or 1 per game for NEW (pair score / 2); the data
  are the five counts (the pentanomial). Zero counts are replaced by
  ``EPSILON`` (1e-3), as fishtest does, so the likelihoods stay finite.
- Elo model: **logistic**. Hypothesis ``Hk`` says NEW's expected score per game
  is ``s_k = 1 / (1 + 10^(−elo_k/400))``.
- Under each hypothesis the distribution is the maximum-likelihood one among
  all distributions on the five scores with mean ``s_k``: ``q_i = p_i / (1 + λ (a_i − s_k))``
  where ``p`` is the empirical distribution and ``λ`` solves ``Σ p_i (a_i − s_k) / (1 + λ (a_i − s_k)) = 0``
  (Van den Bergh, "support_MLE_multinomial").
- ``LLR = N Σ p_i log(q1_i / q0_i)`` with ``N`` the number of pairs.
- Wald's bounds: accept H1 when ``LLR ≥ log((1 − β)/α)``, H0 when ``LLR ≤ log(β/(1 − α))``.

Standard library only. ``docs/sprt.md`` explains how to choose the bounds.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.ratings.pairs import ELO_MODEL, score_of_elo

#: Pair scores per game for NEW, in pentanomial order.
SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
#: What an empty pentanomial slot counts as (fishtest's regularisation).
EPSILON = 1e-3
#: Largest |elo| a bound may have: beyond it the expected score is 1 or 0 in practice.
MAX_ELO = 2000.0

H1 = "H1"
H0 = "H0"

__all__ = [
    "ELO_MODEL",
    "EPSILON",
    "H0",
    "H1",
    "SCORES",
    "SequentialTest",
    "Settings",
    "Simulation",
    "Status",
    "constrained_mle",
    "llr",
    "simulate",
    "tilted",
]  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """The hypotheses and error rates: H0 ``elo = elo0``, H1 ``elo = elo1`` (logistic Elo)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)!r}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, got elo0={self.elo0:g}, elo1={self.elo1:g}")
        if max(abs(self.elo0), abs(self.elo1)) > MAX_ELO:
            raise ValueError(f"elo0 and elo1 must lie within ±{MAX_ELO:g}")
        for name in ("alpha", "beta"):
            if not 0.0 < getattr(self, name) < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, got {getattr(self, name)!r}")

    @property
    def lower(self) -> float:
        """The LLR at or below which H0 is accepted: ``log(β / (1 − α))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which H1 is accepted: ``log((1 − β) / α)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def to_dict(self) -> dict[str, float | str]:
        """JSON-ready form, with the bounds and the Elo model."""
        return {
            "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
            "lower": self.lower, "upper": self.upper, "elo_model": ELO_MODEL,
        }  # fmt: skip


def _regularized(counts: Sequence[float]) -> tuple[float, list[float]]:
    """``(N, p)``: the number of pairs and the empirical distribution, empty slots at ``EPSILON``."""
    if len(counts) != len(SCORES) or min(counts) < 0:
        raise ValueError(f"a pentanomial is 5 counts >= 0, got {list(counts)}")
    reg = [c if c > 0 else EPSILON for c in counts]
    total = sum(reg)
    return total, [c / total for c in reg]


def _lagrange(p: Sequence[float], s: float, x: float = 0.0) -> float:
    """``λ`` with ``Σ p_i d_i / (1 + λ d_i) = 0``, ``d_i = a_i − s`` (all ``p_i > 0``, ``0 < s < 1``).

    The left side falls strictly on the interval where every ``1 + λ d_i > 0``,
    from +∞ to −∞, so the root is unique: Newton steps from ``x`` (a warm
    start), kept inside a shrinking bracket (bisection when a step would leave it).
    Written out for the five slots: simulations call it millions of times.
    """
    p0, p1, p2, p3, p4 = p
    d0, d1, d2, d3, d4 = (a - s for a in SCORES)
    lo, hi = -1.0 / d4, -1.0 / d0  # SCORES ascend: d0 < 0 < d4
    if not lo < x < hi:
        x = 0.0
    for _ in range(200):
        t0 = d0 / (1.0 + x * d0)
        t1 = d1 / (1.0 + x * d1)
        t2 = d2 / (1.0 + x * d2)
        t3 = d3 / (1.0 + x * d3)
        t4 = d4 / (1.0 + x * d4)
        g = p0 * t0 + p1 * t1 + p2 * t2 + p3 * t3 + p4 * t4
        if g > 0.0:
            lo = x
        elif g < 0.0:
            hi = x
        else:
            return x
        dg = p0 * t0 * t0 + p1 * t1 * t1 + p2 * t2 * t2 + p3 * t3 * t3 + p4 * t4 * t4
        step = x + g / dg
        if not lo < step < hi:
            step = (lo + hi) / 2.0
        if abs(step - x) <= 1e-15 * (1.0 + abs(x)) or hi - lo <= 1e-15 * (1.0 + abs(x)):
            return step
        x = step
    return x


def constrained_mle(p: Sequence[float], s: float) -> list[float]:
    """The distribution on :data:`SCORES` with mean ``s`` closest (max likelihood) to ``p``."""
    lam = _lagrange(p, s)
    return [pi / (1.0 + lam * (a - s)) for pi, a in zip(p, SCORES, strict=True)]


def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalised log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for pentanomial ``counts``."""
    return _llr(counts, score_of_elo(elo0), score_of_elo(elo1))[0]


def _llr(
    counts: Sequence[float], s0: float, s1: float, x0: float = 0.0, x1: float = 0.0
) -> tuple[float, float, float]:
    """``(LLR, λ0, λ1)``; ``x0``/``x1`` are warm starts for the two ``λ`` (a running test's last ones)."""
    n, p = _regularized(counts)
    lam0, lam1 = _lagrange(p, s0, x0), _lagrange(p, s1, x1)
    # log(q1_i / q0_i) = log(1 + λ0 (a_i − s0)) − log(1 + λ1 (a_i − s1))
    log1p = math.log1p
    value = 0.0
    for pi, a in zip(p, SCORES):
        value += pi * (log1p(lam0 * (a - s0)) - log1p(lam1 * (a - s1)))
    return n * value, lam0, lam1


@dataclass(frozen=True)
class Status:
    """Where a test stands after ``pairs`` pairs."""

    pairs: int
    counts: tuple[int, int, int, int, int]
    llr: float
    lower: float
    upper: float
    verdict: str | None
    """:data:`H1`, :data:`H0`, or ``None`` while the LLR is between the bounds."""
    decided_at: int | None = None
    """The pair count at which the verdict was reached."""


@dataclass
class SequentialTest:
    """A running test: add pair outcomes in the order they finished; the first crossing decides.

    Once the LLR has crossed a bound the verdict stands; pairs that finish
    afterwards are counted but do not change it.
    """

    settings: Settings
    counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    verdict: str | None = None
    decided_at: int | None = None
    llr: float = 0.0
    """The LLR now, or at the decision once decided."""
    _lambdas: tuple[float, float] = (0.0, 0.0)

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add(self, slot: int) -> str | None:
        """Count one pair in pentanomial ``slot`` (0…4: NEW's pair score × 2); returns the verdict."""
        if not 0 <= slot <= 4:
            raise ValueError(f"pentanomial slot must be 0…4, got {slot!r}")
        self.counts[slot] += 1
        if self.verdict is None:
            s = self.settings
            self.llr, *lams = _llr(
                self.counts, score_of_elo(s.elo0), score_of_elo(s.elo1), *self._lambdas
            )
            self._lambdas = (lams[0], lams[1])
            if self.llr >= s.upper:
                self.verdict, self.decided_at = H1, self.pairs
            elif self.llr <= s.lower:
                self.verdict, self.decided_at = H0, self.pairs
        return self.verdict

    def status(self) -> Status:
        """The counts, the LLR (at the decision, if decided) and the verdict."""
        c = self.counts
        return Status(
            self.pairs, (c[0], c[1], c[2], c[3], c[4]), self.llr,
            self.settings.lower, self.settings.upper, self.verdict, self.decided_at,
        )  # fmt: skip


def tilted(shape: Sequence[float], elo: float) -> list[float]:
    """A pentanomial distribution with mean score at ``elo``: ``shape`` exponentially tilted.

    ``shape`` (five positive weights) sets how often pairs split or sweep;
    the tilt ``p_i ∝ shape_i · e^{t a_i}`` moves its mean to ``score_of_elo(elo)``.
    Used to draw pair outcomes at a known Elo difference in simulations.
    """
    target = score_of_elo(elo)
    if len(shape) != 5 or any(w <= 0 for w in shape):
        raise ValueError("shape must be five positive weights")

    def dist(t: float) -> list[float]:
        w = [s * math.exp(t * a) for s, a in zip(shape, SCORES, strict=True)]
        total = sum(w)
        return [x / total for x in w]

    lo, hi = -200.0, 200.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if sum(p * a for p, a in zip(dist(mid), SCORES, strict=True)) < target:
            lo = mid
        else:
            hi = mid
    return dist((lo + hi) / 2.0)


@dataclass(frozen=True)
class Simulation:
    """Outcomes of many simulated tests at one true distribution."""

    runs: int
    h1: int
    h0: int
    inconclusive: int
    mean_pairs: float

    @property
    def h1_rate(self) -> float:
        return self.h1 / self.runs

    @property
    def h0_rate(self) -> float:
        return self.h0 / self.runs


def simulate(
    probabilities: Sequence[float], settings: Settings, *, runs: int, max_pairs: int, seed: int
) -> Simulation:
    """Run ``runs`` tests on pair outcomes drawn from ``probabilities``; no games are played."""
    rng = random.Random(seed)
    slots = range(5)
    cumulative = list(itertools.accumulate(probabilities))
    h1 = h0 = total = 0
    for _ in range(runs):
        test = SequentialTest(settings)
        while test.verdict is None and test.pairs < max_pairs:
            # In chunks: most tests end long before max_pairs.
            for slot in rng.choices(
                slots, cum_weights=cumulative, k=min(64, max_pairs - test.pairs)
            ):
                if test.add(slot) is not None:
                    break
        total += test.pairs
        h1 += test.verdict == H1
        h0 += test.verdict == H0
    return Simulation(runs, h1, h0, runs - h1 - h0, total / runs)
