"""The GSPRT statistics: LLR against an independent reference, error rates by simulation, the test's rules."""

from __future__ import annotations

import math
import random

import pytest
from scipy.optimize import brentq, minimize

from arena.ratings.pairs import elo_of_score, score_of_elo
from arena.ratings.sprt import (
    H0,
    H1,
    SequentialTest,
    Settings,
    constrained_mle,
    llr,
    simulate,
    tilted,
)

SCORES = [0.0, 0.25, 0.5, 0.75, 1.0]


# ---------------------------------------------------------------- references written from the formulas


def logistic(elo: float) -> float:
    """Expected score at a logistic Elo difference: 1 / (1 + 10^(-elo/400))."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def empirical(counts: list[int]) -> tuple[float, list[float]]:
    """Fishtest's regularised empirical distribution: zero counts become 1e-3."""
    reg = [float(c) if c else 1e-3 for c in counts]
    n = math.fsum(reg)
    return n, [c / n for c in reg]


def reference_mle(p: list[float], s: float) -> list[float]:
    """Van den Bergh, Proposition 1.1: q_i = p_i / (1 + x (a_i - s)) with sum_i p_i (a_i - s) / (1 + x (a_i - s)) = 0.

    Solved with Brent's method on the whole admissible interval (a different solver from the module's).
    """

    def f(x: float) -> float:
        return math.fsum(pi * (a - s) / (1.0 + x * (a - s)) for pi, a in zip(p, SCORES))

    lo, hi = -1.0 / (1.0 - s), 1.0 / s
    shrink = 1e-13
    x = brentq(f, lo * (1 - shrink), hi * (1 - shrink), xtol=1e-300, rtol=1e-15, maxiter=1000)
    return [pi / (1.0 + x * (a - s)) for pi, a in zip(p, SCORES)]


def reference_llr(counts: list[int], elo0: float, elo1: float) -> float:
    """LLR = N sum_i p_i log(q1_i / q0_i), the q's the constrained maximum-likelihood distributions."""
    n, p = empirical(counts)
    q0 = reference_mle(p, logistic(elo0))
    q1 = reference_mle(p, logistic(elo1))
    return n * math.fsum(pi * (math.log(b) - math.log(a)) for pi, a, b in zip(p, q0, q1))


def direct_llr(counts: list[int], elo0: float, elo1: float) -> float:
    """The generalised likelihood ratio by its definition: the best log-likelihood with mean s1 minus with s0.

    Maximised numerically over the distributions with the given mean (no Lagrange formula at all).
    """
    n, p = empirical(counts)

    def best(s: float) -> float:
        cons = [
            {"type": "eq", "fun": lambda q: sum(q) - 1.0},
            {"type": "eq", "fun": lambda q: sum(qi * a for qi, a in zip(q, SCORES)) - s},
        ]
        res = minimize(
            lambda q: -sum(pi * math.log(max(qi, 1e-300)) for pi, qi in zip(p, q)),
            x0=[0.2] * 5, constraints=cons, bounds=[(1e-12, 1.0)] * 5, method="SLSQP",
            options={"ftol": 1e-15, "maxiter": 1000},
        )  # fmt: skip
        assert res.success, res.message
        return -res.fun

    return n * (best(logistic(elo1)) - best(logistic(elo0)))


# ---------------------------------------------------------------- agreement


CASES = [
    ([10, 20, 40, 25, 5], 0.0, 5.0),
    ([10, 20, 40, 25, 5], -10.0, 30.0),
    ([0, 0, 10, 0, 0], 0.0, 30.0),
    ([0, 0, 0, 0, 3], 0.0, 50.0),
    ([3, 0, 0, 0, 0], 0.0, 50.0),
    ([1, 0, 0, 0, 1], -5.0, 5.0),
    ([120, 31, 790, 29, 130], 0.0, 2.0),
    ([40, 3, 210, 6, 61], 0.0, 20.0),
    ([5000, 400, 12000, 450, 5400], 0.5, 2.5),
    ([2, 7, 1, 0, 0], -300.0, 300.0),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1"), CASES)
def test_llr_agrees_with_the_reference_to_1e6(counts, elo0, elo1):
    assert llr(counts, elo0, elo1) == pytest.approx(
        reference_llr(counts, elo0, elo1), abs=1e-6, rel=0
    )


def test_llr_agrees_with_the_reference_on_random_counts():
    rng = random.Random(7)
    for _ in range(300):
        counts = [rng.choice([0, 0, 1, 2, 5, 17, 60, 300, 2500]) for _ in range(5)]
        if not sum(counts):
            continue
        elo0 = rng.uniform(-100, 100)
        elo1 = elo0 + rng.uniform(0.5, 150)
        assert llr(counts, elo0, elo1) == pytest.approx(reference_llr(counts, elo0, elo1), abs=1e-6, rel=0), (
            counts, elo0, elo1,
        )  # fmt: skip


@pytest.mark.parametrize(("counts", "elo0", "elo1"), CASES[:8])
def test_llr_is_the_generalised_likelihood_ratio_by_definition(counts, elo0, elo1):
    # A direct numerical maximisation has its own (looser) accuracy: agreement to 1e-5 relative.
    direct = direct_llr(counts, elo0, elo1)
    assert llr(counts, elo0, elo1) == pytest.approx(
        direct, abs=1e-5 * max(1.0, sum(counts)), rel=1e-5
    )


def test_constrained_mle_has_the_mean_and_is_a_distribution():
    _, p = empirical([4, 1, 30, 2, 9])
    for s in (0.1, 0.4, 0.5, 0.6, 0.93):
        q = constrained_mle(p, s)
        assert all(x > 0 for x in q)
        assert math.fsum(q) == pytest.approx(1.0, abs=1e-12)
        assert math.fsum(x * a for x, a in zip(q, SCORES)) == pytest.approx(s, abs=1e-12)
    mean = math.fsum(x * a for x, a in zip(p, SCORES))
    assert constrained_mle(p, mean) == pytest.approx(p, abs=1e-12), (
        "at the empirical mean nothing changes"
    )


def test_llr_symmetries():
    counts = [7, 3, 50, 9, 21]
    # Mirroring the scores (a -> 1 - a) and the hypotheses (elo -> -elo) flips the sign.
    assert llr(counts[::-1], -20.0, 10.0) == pytest.approx(-llr(counts, -10.0, 20.0), abs=1e-9)
    assert llr(counts, 20.0, 0.0) == pytest.approx(-llr(counts, 0.0, 20.0), abs=1e-9)
    # Data at elo1's mean favour H1; at elo0's mean, H0.
    assert llr([0, 0, 50, 0, 50], 0.0, 50.0) > 0 > llr([0, 0, 100, 0, 0], 0.0, 50.0)


def test_logistic_model_round_trips():
    for elo in (-400.0, -35.5, 0.0, 1.0, 250.0):
        assert elo_of_score(score_of_elo(elo)) == pytest.approx(elo, abs=1e-9)
    assert (
        score_of_elo(0.0) == 0.5
        and elo_of_score(1.0) == math.inf
        and elo_of_score(0.0) == -math.inf
    )


# ---------------------------------------------------------------- the test's rules


def test_wald_bounds():
    s = Settings(0.0, 5.0, alpha=0.05, beta=0.1)
    assert s.upper == pytest.approx(math.log(0.9 / 0.05))
    assert s.lower == pytest.approx(math.log(0.1 / 0.95))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"elo0": 5.0, "elo1": 5.0}, "elo0 must be below elo1"),
        ({"elo0": 5.0, "elo1": 0.0}, "elo0 must be below elo1"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": 0.0}, "alpha must be between 0 and 0.5"),
        ({"elo0": 0.0, "elo1": 5.0, "beta": 0.7}, "beta must be between 0 and 0.5"),
        ({"elo0": 0.0, "elo1": math.inf}, "elo1 must be a finite number"),
        ({"elo0": 0.0, "elo1": 5000.0}, "within ±2000"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Settings(**kwargs)


def test_first_crossing_decides_and_stands():
    test = SequentialTest(Settings(0.0, 50.0))
    verdicts = [test.add(4) for _ in range(30)]
    assert H1 in verdicts
    at = verdicts.index(H1) + 1
    assert test.decided_at == at and test.status().llr >= test.settings.upper
    decided_llr = test.llr
    for _ in range(200):  # pairs that finish afterwards are counted but change nothing
        test.add(0)
    assert test.verdict == H1 and test.decided_at == at and test.llr == decided_llr
    assert test.status().counts == (200, 0, 0, 0, 30)

    test = SequentialTest(Settings(0.0, 50.0))
    while test.verdict is None:
        test.add(2)
    assert test.verdict == H0 and test.llr <= test.settings.lower


def test_tilted_distributions_have_the_mean_of_their_elo():
    shape = [0.15, 0.02, 0.66, 0.02, 0.15]
    for elo in (-50.0, 0.0, 50.0):
        p = tilted(shape, elo)
        assert math.fsum(p) == pytest.approx(1.0)
        assert math.fsum(x * a for x, a in zip(p, SCORES)) == pytest.approx(
            score_of_elo(elo), abs=1e-12
        )


# ---------------------------------------------------------------- error rates by simulation

#: Duplicate Spades pairs split often (each side wins the deal's strong hand): a heavy middle.
SHAPE = [0.15, 0.02, 0.66, 0.02, 0.15]
RUNS = 2000


@pytest.mark.parametrize(("true_elo", "wrong", "rate"), [(0.0, H1, "alpha"), (50.0, H0, "beta")])
def test_error_rates_match_alpha_and_beta(true_elo, wrong, rate):
    settings = Settings(0.0, 50.0, alpha=0.05, beta=0.05)
    sim = simulate(tilted(SHAPE, true_elo), settings, runs=RUNS, max_pairs=100_000, seed=1)
    nominal = getattr(settings, rate)
    measured = (sim.h1 if wrong == H1 else sim.h0) / sim.runs
    sampling_sd = math.sqrt(nominal * (1 - nominal) / RUNS)
    print(
        f"\ntrue elo {true_elo:+g}, H0 elo<=0, H1 elo>=50: {rate} measured {measured:.4f} "
        f"(nominal {nominal}, sd {sampling_sd:.4f}) over {sim.runs} tests; mean pairs {sim.mean_pairs:.1f}"
    )
    assert sim.inconclusive == 0
    assert abs(measured - nominal) <= 3 * sampling_sd, (measured, nominal)
    assert 20 < sim.mean_pairs < 400, sim.mean_pairs


def test_simulation_at_a_stronger_new_accepts_h1_fast():
    settings = Settings(0.0, 50.0)
    sim = simulate(tilted(SHAPE, 150.0), settings, runs=300, max_pairs=10_000, seed=1)
    assert sim.h1_rate > 0.99 and sim.mean_pairs < 40
