"""The course a rehearsal plays is a pure function of its seed (arena.rehearse.plan), and its uploads are what they claim."""

from __future__ import annotations

import io
import tarfile
import zlib

import pytest

from arena.rehearse.bots import (
    BASES,
    BROKEN_KINDS,
    HOSTILE_KINDS,
    archive_bomb,
    archive_for,
    bot_source,
    deep_archive,
)
from arena.rehearse.plan import FAULT_KINDS, make_plan, strength


def test_the_same_seed_gives_the_same_course_and_another_seed_another():
    assert make_plan(7, 40) == make_plan(7, 40)
    assert make_plan(7, 40) != make_plan(8, 40)


def test_a_course_has_its_teams_faults_and_hostile_uploads():
    plan = make_plan(3, 40)
    assert [t.name for t in plan.teams] == [f"team-{i:02d}" for i in range(1, 41)]
    assert all(t.uploads[0].kind == "honest" for t in plan.teams), (
        "every team starts with an honest version"
    )
    hostile = [u.kind for t in plan.teams for u in t.uploads if u.hostile]
    assert len(hostile) == 8 and len(set(hostile)) == min(8, len(HOSTILE_KINDS)), (
        "one in five teams, kinds in turn"
    )
    assert len(plan.faults) == 4 and [f.kind for f in plan.faults] == [*FAULT_KINDS, FAULT_KINDS[0]]
    assert all(0 < f.at < 1 for f in plan.faults) and plan.faults == tuple(
        sorted(plan.faults, key=lambda f: f.at)
    )
    assert {u.via for t in plan.teams for u in t.uploads} == {"api", "form"}, (
        "some teams use the site's form"
    )
    assert [at for at, _, _ in plan.uploads()] == sorted(at for at, _, _ in plan.uploads())
    assert make_plan(3, 40, faults=False).faults == ()


def test_the_true_order_follows_each_teams_last_honest_version():
    plan = make_plan(11, 12)
    order = plan.true_order()
    strengths = [next(t for t in plan.teams if t.name == name).strength for name in order]
    assert strengths == sorted(strengths, reverse=True) and sorted(order) == sorted(
        t.name for t in plan.teams
    )
    assert (
        strength("medium", 0.0)
        > strength("easy", 0.0)
        > strength("greedy", 0.0)
        > strength("random", 0.0)
    )
    assert strength("easy", 0.0) > strength("easy", 0.5), "playing at random more often is weaker"
    with pytest.raises(ValueError, match="at least 2 teams"):
        make_plan(1, 1)


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize(
    "kind", ["honest", *BROKEN_KINDS, "fork", "spin", "outlive", "build-forever", "log-flood"]
)
def test_every_bot_upload_is_a_tarball_whose_bot_compiles(base: str, kind: str):
    with tarfile.open(fileobj=io.BytesIO(archive_for(kind, base=base, p=0.5)), mode="r:gz") as tar:
        files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}  # type: ignore[union-attr]
    compile(files["bot.py"], "bot.py", "exec")
    assert ("Dockerfile" in files) == (kind in ("build-forever", "log-flood"))


def test_a_broken_bot_breaks_only_from_its_hand_and_an_unknown_base_is_refused():
    source = bot_source("easy", 0.0, broken="crash", at_hand=1)
    assert "if self.hands >= 1:" in source and "SystemExit" in source
    with pytest.raises(ValueError, match="unknown base"):
        bot_source("expert", 0.0)


def test_the_hostile_archives_are_small_and_hostile():
    bomb = archive_bomb(64 * 1024 * 1024)
    assert len(bomb) < 200_000
    assert len(zlib.decompress(bomb, 16 + zlib.MAX_WBITS)) > 64 * 1024 * 1024
    deep = deep_archive(1500)
    assert len(deep) < 1000
    with tarfile.open(fileobj=io.BytesIO(deep), mode="r:gz") as tar:
        assert tar.getmembers()[0].name.count("/") == 1499
