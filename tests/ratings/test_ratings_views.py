"""The array-backed views read like the nested dicts they stand for."""

from __future__ import annotations

import json

import numpy as np
import pytest
from ratings_synth import random_games

from arena.ratings import Result, crosstable, fit
from arena.ratings.views import NamedMatrix


def test_named_matrix_reads_like_nested_dicts() -> None:
    m = NamedMatrix(["a", "b", "c"], np.arange(9.0).reshape(3, 3))
    plain = {"a": {"a": 0.0, "b": 1.0, "c": 2.0}, "b": {"a": 3.0, "b": 4.0, "c": 5.0},
             "c": {"a": 6.0, "b": 7.0, "c": 8.0}}  # fmt: skip
    assert m == plain and plain == m and m.to_dict() == plain
    assert list(m) == ["a", "b", "c"] and len(m["a"]) == 3 and m["b"]["c"] == 5.0
    assert isinstance(m["b"]["c"], float) and "z" not in m and m.get("z") is None
    with pytest.raises(KeyError):
        m["z"]
    with pytest.raises(KeyError):
        m["a"]["z"]
    assert m != {"a": {"a": 0.0}}


def test_skipping_the_diagonal_and_computing_on_first_read() -> None:
    calls = []

    def compute() -> np.ndarray:
        calls.append(1)
        return np.array([[9.0, 0.25], [0.75, 9.0]])

    los = NamedMatrix(["x", "y"], compute=compute, skip_diagonal=True)
    assert not calls  # nothing computed until read
    assert los["x"]["y"] == 0.25 and los["y"]["x"] == 0.75 and calls == [1]
    assert "x" not in los["x"] and list(los["x"]) == ["y"] and len(los["x"]) == 1
    with pytest.raises(KeyError):
        los["x"]["x"]
    assert los.to_dict() == {"x": {"y": 0.25}, "y": {"x": 0.75}} and calls == [1]
    with pytest.raises(ValueError):
        NamedMatrix(["x"])


def test_ratings_views_match_plain_dicts_and_serialise() -> None:
    results, _ = random_games(7, 500, seed=3)
    r = fit(results)
    doc = json.loads(json.dumps(r.to_dict()))
    assert doc["covariance"] == r.covariance and doc["los"] == r.los
    assert r.crosstable == crosstable(results)
    a, b = r.names[0], r.names[-1]
    rec, back = r.crosstable[a][b], r.crosstable[b][a]
    assert (rec.wins, rec.losses, rec.draws) == (back.losses, back.wins, back.draws)
    assert rec.points + back.points == rec.games
    assert r.crosstable.get(a, {}).get("nobody") is None


def test_crosstable_rows_hold_only_the_opponents_met() -> None:
    results = [Result("x", "y", 1.0, "1"), Result("y", "z", 0.5, "2"), Result("z", "y", 0.0, "2")]
    table = crosstable(results)
    assert list(table) == ["x", "y", "z"]
    assert list(table["y"]) == ["x", "z"] and "z" not in table["x"] and len(table["x"]) == 1
    assert table["z"]["y"].points == 0.5 and table["y"]["z"].points == 1.5
    with pytest.raises(KeyError):
        table["x"]["z"]
