"""A ladder from first upload to a kill -9 and back, under the real Docker engine (issue 25).

Teams submit real bot directories (through ``arena submit`` and the HTTP
API); the server builds them offline, validates them with a game against
themselves, plays duplicate pairs between the active versions and fills the
leaderboard.  Along the way: a version that fails validation changes nothing,
a second version takes over and the first keeps its rating, a team reads its
own bots' logs and never another team's, and a server killed mid-game comes
back with every stored game once and the interrupted pair played again on
its own deal.
"""

from __future__ import annotations

import json
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_support import engine_or_skip
from ladder_support import Ladder, bot_source, cli, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder tests")
    with served(Ladder(tmp_path_factory.mktemp("ladder") / "lad", "submissions.validation_hands=1"), client) as lad:
        yield lad


def _bot_dir(tmp: Path, marker: str, **kw: bool) -> Path:
    d = tmp / marker
    d.mkdir()
    (d / "bot.py").write_text(bot_source(marker, **kw))
    return d


def _status(ladder: Ladder, team: str, number: int) -> str:
    return next(v["status"] for v in ladder.versions(team) if v["version"] == number)


def _rows(ladder: Ladder) -> list[dict]:
    return ladder.get("/api/leaderboard").json()["standings"]


def test_submit_build_rank_take_over_and_survive_kill_9(ladder: Ladder, tmp_path: Path):
    # Two teams submit: one through the CLI, one through the API.
    sent = cli("submit", str(_bot_dir(tmp_path, "ALPHA-ONE")), "--server", ladder.url, "--token",
               ladder.tokens["alpha"], "--note", "first try")  # fmt: skip
    assert sent.returncode == 0 and "alpha@1" in sent.stdout, sent.stderr
    beta = ladder.upload("beta", tarball({"bot.py": bot_source("BETA-ONE")}), note="beta's bot")
    assert beta.status_code == 201 and beta.json()["entry"] == "beta@1"

    ladder.wait_for("both versions active", lambda: _status(ladder, "alpha", 1) == _status(ladder, "beta", 1) == "active")
    assert "validation" in ladder.versions("alpha")[0]["validation_log"]
    rows = ladder.wait_for("two rated versions with 2 pairs each",
                           lambda: (r := _rows(ladder)) and len(r) == 2 and all(x["elo"] is not None and x["pairs"] >= 2 for x in r) and r)  # fmt: skip
    assert {r["entry"] for r in rows} == {"alpha@1", "beta@1"} and [r["rank"] for r in rows] == [1, 2]
    assert all(r["low"] < r["elo"] < r["high"] for r in rows)

    # Logs: each team reads its own seats' logs of a game, never the other's.
    game = ladder.get("/api/games").json()["games"][0]["game_id"]
    mine = ladder.get(f"/api/me/games/{game}/logs", "alpha")
    theirs = ladder.get(f"/api/me/games/{game}/logs", "beta")
    assert mine.status_code == theirs.status_code == 200
    assert "ALPHA-ONE" in mine.text and "BETA-ONE" not in mine.text
    assert "BETA-ONE" in theirs.text and "ALPHA-ONE" not in theirs.text
    organiser = ladder.get(f"/api/me/games/{game}/logs", "admin").text
    assert "ALPHA-ONE" in organiser and "BETA-ONE" in organiser
    record = ladder.get(f"/api/games/{game}").json()
    assert record["game_id"] == game and set(record["bot_seeds"]) == {"N", "E", "S", "W"}

    # A version that fails validation is kept with its log, seen by its team only, and changes nothing.
    broken = ladder.upload("alpha", tarball({"bot.py": bot_source("ALPHA-BROKEN", crash=True)}), note="oops")
    assert broken.status_code == 201
    ladder.wait_for("the broken version to fail", lambda: _status(ladder, "alpha", 2) == "failed")
    failed = next(v for v in ladder.versions("alpha") if v["version"] == 2)
    assert "FAILED" in failed["validation_log"] and "crashes on purpose" in failed["validation_log"]
    assert _status(ladder, "alpha", 1) == "active"
    public = ladder.get("/api/teams/alpha", "beta").json()["versions"]
    assert [v["version"] for v in public] == [1] and "validation_log" not in public[0]
    # A Dockerfile that reaches for another image is refused by the builder.
    other = ladder.upload("beta", tarball({"Dockerfile": "FROM arena-base:bookworm\nCOPY bot.py /bot.py\n", "bot.py": "x"}))
    assert other.status_code == 201
    ladder.wait_for("the Dockerfile to be refused", lambda: _status(ladder, "beta", 2) == "failed")
    assert "FROM" in next(v for v in ladder.versions("beta") if v["version"] == 2)["build_log"]

    # A second good version takes over; the first retires with its rating.
    before = {r["entry"]: r for r in _rows(ladder)}["alpha@1"]
    third = ladder.upload("alpha", tarball({"bot.py": bot_source("ALPHA-THREE")}), note="better")
    assert third.status_code == 201
    ladder.wait_for("alpha@3 active", lambda: _status(ladder, "alpha", 3) == "active")
    retired = next(v for v in ladder.get("/api/teams/alpha").json()["versions"] if v["version"] == 1)
    assert retired["status"] == "retired" and retired["elo"] is not None and retired["pairs"] >= before["pairs"]
    ladder.wait_for("alpha@3 rated", lambda: any(r["entry"] == "alpha@3" and r["elo"] is not None for r in _rows(ladder)))
    assert "alpha@1" not in {r["entry"] for r in _rows(ladder)}
    history = ladder.get("/api/teams/alpha").json()["history"]
    assert {h["entry"] for h in history} >= {"alpha@1", "alpha@3"}, "a rating history across versions"

    # kill -9 in the middle of a game; on restart nothing is lost or counted twice.
    ladder.wait_for("a pair in play", lambda: ladder.get("/api/leaderboard").json()["in_play"])
    stored_before = _games(ladder)
    assert ladder.stop(signal.SIGKILL) == -signal.SIGKILL
    with sqlite3.connect(ladder.directory / "results.sqlite") as db:  # the run's pairs, kept by its ledger
        cut = [row[0] for row in db.execute("SELECT seq FROM pairs WHERE status='playing'")]
    assert cut, "a pair was in play when the server was killed"
    ladder.start()
    ladder.wait_for("the cut pair played again", lambda: all(f"L{seq:07d}-t{t}" in _games(ladder) for seq in cut for t in (1, 2)))
    games = _games(ladder)
    assert all(stored_before[g] == games[g] for g in stored_before), "stored games are kept as they were"
    pairs: dict[str, set[str]] = {}
    for game_id, (cluster, seed) in games.items():
        pairs.setdefault(cluster, set()).add(seed)
    assert all(len(seeds) == 1 for seeds in pairs.values()), "both tables of a pair play the same deal"
    with sqlite3.connect(ladder.directory / "results.sqlite") as db:
        (count, distinct) = db.execute("SELECT COUNT(*), COUNT(DISTINCT game_id) FROM games").fetchone()
    assert count == distinct
    shown = cli("ladder", "show", str(ladder.directory), "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["games"] >= count  # the ladder plays on meanwhile


def _games(ladder: Ladder) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(ladder.directory / "results.sqlite") as db:
        return {g: (c, s) for g, c, s in db.execute("SELECT game_id, cluster, deal_seed FROM games")}
