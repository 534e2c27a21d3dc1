"""Kendall's τ-b of the standings against the true order (arena.rehearse.tau)."""

from __future__ import annotations

import math
import random

import pytest
from scipy.stats import kendalltau

from arena.rehearse.tau import kendall_tau


def test_the_same_order_is_one_and_the_reversed_order_minus_one():
    truth = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}
    assert kendall_tau(truth, {"a": 1600, "b": 1550, "c": 1500, "d": 1400}) == pytest.approx(1.0)
    assert kendall_tau(truth, {"a": 1400, "b": 1500, "c": 1550, "d": 1600}) == pytest.approx(-1.0)
    # One neighbouring pair swapped of six pairs: (5 - 1) / 6.
    assert kendall_tau(truth, {"a": 1600, "b": 1500, "c": 1550, "d": 1400}) == pytest.approx(4 / 6)


def test_only_the_teams_in_both_count_and_too_few_give_none():
    truth = {"a": 3.0, "b": 2.0, "c": 1.0}
    assert kendall_tau(truth, {"a": 1600, "c": 1500, "unrated": 2000}) == pytest.approx(1.0)
    assert kendall_tau(truth, {"a": 1600}) is None
    assert kendall_tau({"a": 1.0, "b": 1.0}, {"a": 1500, "b": 1600}) is None, (
        "every pair tied in the truth"
    )


def test_it_is_scipys_tau_b_with_ties():
    rng = random.Random(5)
    for _ in range(300):
        n = rng.randint(2, 15)
        truth = [rng.choice((0, 0.5, 1, 2)) for _ in range(n)]
        measured = [rng.choice((1400, 1500, 1500, 1600, 1700)) for _ in range(n)]
        ours = kendall_tau(dict(enumerate(truth)), dict(enumerate(measured)))
        theirs = kendalltau(truth, measured).statistic
        if ours is None:
            assert math.isnan(theirs), "undefined there too"
        else:
            assert ours == pytest.approx(theirs, abs=1e-12)
