"""A validation the platform failed is never the team's: validated again by itself, or by the organiser (issue 44).

Before, a seat the engine could not start (``SeatStartError``, as a wedged
Docker 20.10 engine gives) failed the version with "validation failed to run",
charged to the team, with no way to validate it again but a new upload.

The platform's fault in :func:`arena.ladder.versions.builds.validate` is injected at its
edge (``play_seated`` raising ``SeatStartError``, the engine probe's answer):
whether the engine can start a container decides between waiting for it and
playing again.  ``arena ladder admin revalidate`` is tested end to end: a real
served ladder, a real build and validation.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docker_support import engine_or_skip
from ladder_support import Ladder, bot_source, cli, served, tarball

from arena.ladder.versions import builds
from arena.ladder.config import CONFIG_NAME, load_ladder_config, template
from arena.ladder.versions.store import Version
from arena.sandbox.docker import SeatStartError


def _config(tmp_path: Path) -> Any:
    directory = tmp_path / "lad"
    directory.mkdir()
    (directory / CONFIG_NAME).write_text(template("revalidate", "pagat", {"max_hands": "1"}, "arena-base:bookworm"))
    return load_ladder_config(directory)


def _version() -> Version:
    return Version(id=7, team="alpha", number=3, note="", status="validating", image_id="sha256:x", build_log="",
                   validation_log="", attempts=1, created="", activated=None, retired=None, final_elo=None,
                   final_low=None, final_high=None, final_pairs=None)  # fmt: skip


@pytest.fixture
def seats_never_start(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``play_seated`` fails as a wedged engine makes it fail; returns the list of games tried."""
    tried: list[str] = []

    async def play_seated(*args: Any, **kwargs: Any) -> Any:
        tried.append("game")
        raise SeatStartError("the Docker engine could not start a container: ReadTimeout (read timeout=60)")

    monkeypatch.setattr(builds, "play_seated", play_seated)
    monkeypatch.setattr(builds, "prune_run", lambda *a, **k: None)
    return tried


def test_a_seat_the_engine_cannot_start_waits_for_the_engine(tmp_path, monkeypatch, seats_never_start):
    monkeypatch.setattr(builds, "engine_starts", lambda *a, **k: "the Docker engine did not start a container within 30 s")
    with pytest.raises(builds.EngineDown, match="a seat could not be started.*did not start a container"):
        builds.validate(_config(tmp_path), "sha256:x", _version(), run_id="r", cancel=threading.Event())
    assert seats_never_start == ["game"], "no second game while the engine cannot start one"


def test_a_platform_fault_while_the_engine_is_well_is_played_again_then_named_the_platforms(
    tmp_path, monkeypatch, seats_never_start
):
    monkeypatch.setattr(builds, "engine_starts", lambda *a, **k: None)
    result = builds.validate(_config(tmp_path), "sha256:x", _version(), run_id="r", cancel=threading.Event())
    assert seats_never_start == ["game"] * builds.PLATFORM_TRIES
    assert not result.passed
    assert "not your bot's fault" in result.log and "arena ladder admin revalidate DIR alpha@3" in result.log
    assert result.reason is not None and result.reason.startswith("validation could not be played: the platform")


# ------------------------------------------------------------------ the organiser's revalidation, end to end


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the revalidation test")
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", "submissions.validation_hands=1")
    with served(lad, client):
        yield lad


def _status(ladder: Ladder, team: str) -> tuple[str, str]:
    with sqlite3.connect(ladder.directory / "ladder.sqlite") as db:
        row = db.execute("SELECT status, reason FROM versions WHERE team=? ORDER BY number DESC", (team,)).fetchone()
    return (row[0], row[1]) if row else ("", "")


@pytest.mark.docker
@pytest.mark.timeout(1200)
def test_the_organiser_validates_a_failed_version_again(ladder: Ladder):
    assert ladder.upload("alpha", tarball({"bot.py": bot_source("alpha-1")})).status_code == 201
    ladder.wait_for("alpha@1 active", lambda: _status(ladder, "alpha")[0] == "active")
    # What a platform failure left before this issue: the version failed, with the platform's reason.
    with sqlite3.connect(ladder.directory / "ladder.sqlite") as db:
        db.execute("UPDATE versions SET status='failed', reason='validation failed to run: SeatStartError' "
                   "WHERE team='alpha' AND number=1")  # fmt: skip

    refused = cli("ladder", "admin", "revalidate", str(ladder.directory), "beta@1")
    assert refused.returncode != 0 and "no version 'beta@1'" in refused.stderr, refused
    again = cli("ladder", "admin", "revalidate", str(ladder.directory), "alpha@1")
    assert again.returncode == 0, again.stderr
    assert "alpha@1 queued to be built and validated again" in again.stdout
    ladder.wait_for("alpha@1 active again", lambda: _status(ladder, "alpha") == ("active", ""))
    twice = cli("ladder", "admin", "revalidate", str(ladder.directory), "alpha@1")
    assert twice.returncode != 0 and "is active, not failed" in twice.stderr, twice
