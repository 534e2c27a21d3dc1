"""A version's lifecycle as a table of moves, compare-and-set in the store; the store used by two threads."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from arena.ladder.versions import lifecycle
from arena.ladder.versions.lifecycle import (
    ACTIVE, BUILDING, DISABLED, FAILED, QUEUED, RETIRED, SUSPENDED, UPLOADING, VALIDATING, IllegalTransition,
)  # fmt: skip
from arena.ladder.common.ladder_db import LadderError
from arena.ladder.store import LadderStore


@pytest.fixture
def store(tmp_path: Path) -> LadderStore:
    s = LadderStore(tmp_path / "ladder.sqlite")
    s.add_team("alpha")
    yield s
    s.close()


def new_version(store: LadderStore, status: str = QUEUED, team: str = "alpha"):
    v = store.add_version(team, "", quota=100)
    for step in {QUEUED: [QUEUED], BUILDING: [QUEUED, BUILDING], VALIDATING: [QUEUED, BUILDING, VALIDATING]}.get(status, []):
        store.transition(v.id, step)
    return store.version(v.id)


def test_the_table_allows_the_documented_way_and_nothing_else():
    way = [UPLOADING, QUEUED, BUILDING, VALIDATING, ACTIVE, RETIRED]
    for before, after in zip(way, way[1:]):
        assert lifecycle.allowed(before, after), (before, after)
    assert lifecycle.allowed(RETIRED, ACTIVE), "a retired version is restored when its successor is suspended"
    assert lifecycle.allowed(ACTIVE, SUSPENDED)
    for status in lifecycle.STATUSES:
        if status not in (FAILED, DISABLED):
            assert lifecycle.allowed(status, DISABLED), f"the organiser can disable a {status} version"
        assert not lifecycle.allowed(DISABLED, status), "disabled is final"
        assert lifecycle.allowed(FAILED, status) == (status == QUEUED), "failed: only queued again (revalidation)"
    assert not lifecycle.allowed(QUEUED, ACTIVE) and not lifecycle.allowed(UPLOADING, ACTIVE), "no skipping the build"
    with pytest.raises(IllegalTransition, match="version x@1 is disabled: it cannot become validating"):
        lifecycle.check("x@1", DISABLED, VALIDATING)


def test_the_organiser_revalidates_a_failed_version_and_nothing_else(store: LadderStore):
    failed = store.transition(
        new_version(store, QUEUED).id, FAILED, attempts=2, reason="validation could not be played: the platform failed it"
    )
    again = store.revalidate(failed.entry)
    assert (again.status, again.attempts, again.reason) == (QUEUED, 0, "")
    for status in (QUEUED, VALIDATING, DISABLED):
        other = new_version(store, status)
        if status == DISABLED:
            other = store.transition(other.id, DISABLED)
        with pytest.raises(LadderError, match=f"is {status}, not failed"):
            store.revalidate(other.entry)
        assert store.version(other.id).status == status, "nothing changed"
    with pytest.raises(LadderError, match="no version"):
        store.revalidate("nobody@9")


def test_a_disable_during_a_build_is_not_undone_by_the_builder(store: LadderStore):
    """The finding: the builder's unconditional writes moved a disabled version to validating, then active."""
    v = new_version(store, BUILDING)
    store.set_status(v.id, DISABLED)  # the organiser, from the site
    with pytest.raises(IllegalTransition):
        store.transition(v.id, VALIDATING, expect=BUILDING, image_id="sha256:x")
    with pytest.raises(IllegalTransition):
        store.transition(v.id, VALIDATING, image_id="sha256:x")
    with pytest.raises(IllegalTransition):
        store.activate(v, {})
    after = store.version(v.id)
    assert after.status == DISABLED and after.image_id is None, "nothing of the build was written"


def test_activation_retires_the_previous_version_and_suspension_restores_it(store: LadderStore):
    first = new_version(store, VALIDATING)
    store.transition(first.id, VALIDATING, image_id="sha256:one")
    store.activate(first, {})
    second = new_version(store, VALIDATING)
    store.transition(second.id, VALIDATING, image_id="sha256:two")
    store.activate(second, {"alpha@1": (1510.0, 1480.0, 1540.0, 12)})
    old = store.version(first.id)
    assert old.status == RETIRED and old.final_elo == 1510.0 and old.final_pairs == 12
    restored = store.suspend(store.version(second.id), "lost its first 4 games by crash")
    assert restored is not None and restored.id == first.id and restored.status == ACTIVE
    bad = store.version(second.id)
    assert bad.status == SUSPENDED and "crash" in bad.reason
    assert [v.entry for v in store.active_versions()] == ["alpha@1"]
    with pytest.raises(IllegalTransition):
        store.suspend(bad, "again")


def test_a_failed_upload_does_not_use_the_quota(store: LadderStore):
    v = store.add_version("alpha", "", quota=2)
    store.set_status(v.id, FAILED, reason="the archive could not be read")
    assert store.submissions_today("alpha") == 0
    ok = store.add_version("alpha", "", quota=2)
    store.transition(ok.id, QUEUED)
    assert store.submissions_today("alpha") == 1
    store.add_version("alpha", "", quota=2)  # in progress: counts, so two at once cannot pass the quota
    with pytest.raises(LadderError, match="used its 2 submissions"):
        store.add_version("alpha", "", quota=2)


def test_two_threads_on_one_store_lose_and_duplicate_nothing(store: LadderStore):
    """The finding: the build worker and the loop shared one connection; 291 of 600 writes failed."""
    writes = 300
    errors: list[BaseException] = []
    versions = [store.add_version("alpha", "", quota=100) for _ in range(4)]
    for v in versions:
        store.set_status(v.id, QUEUED)

    def builder() -> None:  # what a build worker writes: status moves with their logs
        try:
            for i in range(writes):
                v = versions[i % len(versions)]
                store.set_status(v.id, QUEUED, build_log=f"line {i}")
                store.add_history([(f"alpha@{i}", i, 1500.0, 1400.0, 1600.0)])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def loop() -> None:  # what the site and the loop write meanwhile
        try:
            for i in range(writes):
                store.new_session("alpha", admin=False)
                store.set_meta(f"k{i}", str(i))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=builder), threading.Thread(target=loop)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors[:3]
    (history,) = store.db.execute("SELECT COUNT(*) FROM history").fetchone()
    (sessions,) = store.db.execute("SELECT COUNT(*) FROM sessions").fetchone()
    assert history == writes and sessions == writes
    assert all(store.meta()[f"k{i}"] == str(i) for i in range(writes))
