"""The image builder's wheel cache is safe for two builders at once.

Two checkouts of the platform (or two processes of one test run) share
``~/.cache/arena/wheels``.  The old cache was one flat folder: a builder
whose sources differed deleted the other's ``arena*.whl`` while that one was
copying them into its build context (``FileNotFoundError``).  Now each
version of the sources has its own folder, built aside and renamed into place.

The pip step is replaced by a stand-in that writes a wheel file slowly (this
is a unit test of the cache's edges; the real pip build runs in every Docker
image test).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from arena.sandbox import build


@pytest.fixture
def slow_pip(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def fake_pip(sources: list[Path], dest: Path) -> None:
        calls.append(build._source_fingerprint())
        time.sleep(0.2)
        (dest / f"arena-{calls[-1][:8]}-py3-none-any.whl").write_text("wheel")
        (dest / "dependency-1.0-py3-none-any.whl").write_text("wheel")

    monkeypatch.setattr(build, "_pip_wheel", fake_pip)
    return calls


def test_another_checkouts_build_does_not_delete_the_wheels_in_use(
    tmp_path: Path, slow_pip: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = build.build_wheels(tmp_path)
    monkeypatch.setattr(build, "_source_fingerprint", lambda **_: "f" * 64)  # another checkout
    theirs = build.build_wheels(tmp_path)
    assert all(path.exists() for path in mine), mine
    assert all(path.exists() for path in theirs), theirs
    assert {p.name for p in mine} != {p.name for p in theirs}


def test_two_builders_at_once_both_get_complete_wheels(tmp_path: Path, slow_pip: list[str]) -> None:
    results: list[list[Path]] = []
    errors: list[BaseException] = []

    def builder() -> None:
        try:
            results.append(build.build_wheels(tmp_path))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=builder) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    assert len(results) == 2 and results[0] == results[1]
    assert all(path.exists() for path in results[0]) and len(results[0]) == 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".building-")]  # no staging left


def test_the_same_sources_are_built_once(tmp_path: Path, slow_pip: list[str]) -> None:
    build.build_wheels(tmp_path)
    build.build_wheels(tmp_path)
    assert len(slow_pip) == 1


def test_stale_folders_of_other_sources_are_removed(tmp_path: Path, slow_pip: list[str]) -> None:
    old = tmp_path / ("0" * 24)
    old.mkdir()
    (old / "arena-0-py3-none-any.whl").write_text("wheel")
    recent = tmp_path / ("1" * 24)
    recent.mkdir()
    flat = tmp_path / "arena-0.1.0-py3-none-any.whl"  # the old flat layout
    flat.write_text("wheel")
    day_ago = time.time() - build.STALE_WHEELS_S - 60
    os.utime(old, (day_ago, day_ago))
    os.utime(flat, (day_ago, day_ago))
    build.build_wheels(tmp_path)
    assert not old.exists() and not flat.exists()
    assert recent.exists()
