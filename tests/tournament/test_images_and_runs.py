"""Docker entries: a resumed run refuses a tag that moved; leftovers are pruned by run identity only."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.sandbox.docker import LABEL, MATCH_LABEL, NO_NETWORK, RUN_LABEL
from arena.tournament import load_config, open_store
from arena.tournament.runner import resolve_images, table_spec
from arena.tournament.schedule import schedule, tables
from arena.tables.task import ImageMismatch, check_images
from docker_support import BASE_IMAGE, engine_or_skip

pytestmark = pytest.mark.docker

MOVING = "arena-exec-moving"
OTHER = "arena-exec-moved:other"


@pytest.fixture(scope="module")
def engine():  # type: ignore[no-untyped-def]
    client = engine_or_skip("image tests")
    # A second image, different from the base (built offline from it).
    client.images.build(fileobj=io.BytesIO(f"FROM {BASE_IMAGE}\nLABEL arena.test=moved\n".encode()), tag=OTHER, rm=True)
    yield client
    client.close()


def tournament(tmp: Path) -> Path:
    path = tmp / "t.toml"
    path.write_text(
        '[tournament]\nname = "same"\nseed = "s"\noutput = "out"\n\n'
        f'[[entry]]\nname = "a"\nbot = "docker:{MOVING}:test"\n\n[[entry]]\nname = "b"\nbot = "docker:{MOVING}:test"\n'
    )
    return path


def test_resume_refuses_a_tag_that_now_names_another_image(engine, tmp_path, monkeypatch):
    base = engine.images.get(BASE_IMAGE)
    other = engine.images.get(OTHER)
    tag = f"{MOVING}:test-{os.getpid()}"
    path = tournament(tmp_path)
    path.write_text(path.read_text().replace(f"{MOVING}:test", tag))
    base.tag(tag)
    try:
        config = load_config(tmp_path / "t.toml")
        monkeypatch.chdir(tmp_path)
        store = open_store(config)
        try:
            assert resolve_images(config, store)["a"] == base.id  # the run starts: the IDs are remembered
            spec = table_spec(config, tables(schedule(config))[0], {e.name: e for e in config.entries},
                              resolve_images(config, store), store.run_id)  # fmt: skip
            assert {seat.image_id for seat in spec.seats} == {base.id}, "containers start from the ID"
        finally:
            store.close()
        other.tag(tag)  # the tag moves to another image
        result = subprocess.run(
            [sys.executable, "-m", "arena", "tournament", "run", str(path)], cwd=tmp_path,
            capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "300"},
        )  # fmt: skip
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "entry 'a'" in lines[0], result.stderr
        assert base.id in lines[0] and other.id in lines[0]
    finally:
        engine.images.remove(tag)


def test_a_machine_whose_tag_names_another_image_does_not_play_the_table(engine, tmp_path):
    base = engine.images.get(BASE_IMAGE)
    tag = f"{MOVING}:check-{os.getpid()}"
    engine.images.get(OTHER).tag(tag)
    try:
        path = tournament(tmp_path)
        path.write_text(path.read_text().replace(f"{MOVING}:test", tag))
        config = load_config(path)
        images = {"a": base.id, "b": base.id}  # what the coordinator resolved elsewhere
        spec = table_spec(config, tables(schedule(config))[0], {e.name: e for e in config.entries}, images, "r",
                          local=False)  # fmt: skip
        with pytest.raises(ImageMismatch, match=f"{tag} is sha256:"):
            check_images(spec, engine)
        local = table_spec(config, tables(schedule(config))[0], {e.name: e for e in config.entries}, images, "r")
        check_images(local, engine)  # locally the ID is what counts (the tag may move mid-run)
        gone = table_spec(config, tables(schedule(config))[0], {e.name: e for e in config.entries},
                          {"a": "sha256:" + "0" * 64, "b": base.id}, "r")  # fmt: skip
        with pytest.raises(ImageMismatch, match="entry 'a'.*is not on this machine"):
            check_images(gone, engine)
    finally:
        engine.images.remove(tag)


def test_only_this_runs_leftovers_are_pruned(engine, tmp_path, monkeypatch):
    path = tournament(tmp_path)
    path.write_text(path.read_text().replace(f"docker:{MOVING}:test", f"docker:{BASE_IMAGE}"))
    monkeypatch.chdir(tmp_path)
    config = load_config(path)
    store = open_store(config)
    containers = []
    try:
        run_id = store.run_id
        for run in (run_id, "another-run"):
            # Same tournament name, same table: only the run identity tells them apart.
            containers.append(
                engine.containers.run(
                    BASE_IMAGE, ["sleep", "300"], detach=True, **NO_NETWORK,
                    labels={LABEL: "1", RUN_LABEL: run, MATCH_LABEL: "same/p000-t1"},
                )  # fmt: skip
            )
        resolve_images(config, store)  # a resumed run first removes the leftovers of its killed earlier run
        alive = {c.id for c in engine.containers.list(all=True, filters={"label": f"{MATCH_LABEL}=same/p000-t1"})}
        assert containers[0].id not in alive, "this run's leftover is removed"
        assert containers[1].id in alive, "another run's container (same tournament name) is left alone"
        assert store.run_id == run_id, "the run identity belongs to the output directory"
    finally:
        store.close()
        for c in containers:
            try:
                c.remove(force=True)
            except Exception:  # noqa: BLE001 - already removed
                pass


def test_a_killed_table_process_leaves_no_containers(engine, tmp_path):
    from arena.sandbox.build import build_image
    from tournament_support import BOTS, stored_rows

    tag = "arena-exec-table-kill:test"
    build_image(BOTS / "random", tag=tag, base_image=BASE_IMAGE, client=engine)
    name = f"tablekill{os.getpid()}"  # this test's containers only, whatever else runs on the engine
    path = tmp_path / "t.toml"
    path.write_text(
        f'[tournament]\nname = "{name}"\nseed = "s"\noutput = "out"\ndeals_per_pairing = 3\n\n'
        '[rules]\npreset = "pagat"\nset = { max_hands = 12 }\n\n'
        f'[[entry]]\nname = "a"\nbot = "docker:{tag}"\n\n[[entry]]\nname = "b"\nbot = "docker:{tag}"\n'
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", str(path), "--no-show", "--json"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        seats: list = []
        tables: list[int] = []
        # Both at once: the table's four seats run and its process is seen (a table may end between two looks).
        while (len(seats) < 4 or len(tables) != 1) and time.monotonic() < deadline:
            seats = engine.containers.list(filters={"label": f"{MATCH_LABEL}={name}/p000-t1", "status": "running"})
            tables = list(_children_of_forkserver(run.pid))
            time.sleep(0.2)
        assert len(seats) == 4, "the first table's four containers run"
        assert len(tables) == 1
        os.kill(tables[0], signal.SIGKILL)
        ids = {c.id for c in seats}
        deadline = time.monotonic() + 60
        while ids & existing(engine) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not ids & existing(engine), "the dead table's containers are removed"
        # ... at once, not by the clean-up before the voided games are replayed (the other table still plays).
        assert count(tmp_path / "out" / "results.sqlite") < 3
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert len(stored_rows(tmp_path / "out")) == 6, "the voided games were played again"


def existing(engine) -> set[str]:  # type: ignore[no-untyped-def]
    """IDs of every container (the plain list: no inspect that another run's removal could fail)."""
    return {c["Id"] for c in engine.api.containers(all=True)}


def count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])


def _children_of_forkserver(coordinator: int) -> dict[int, int]:
    """The table processes of a run: children of the forkserver the coordinator started."""
    parents = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            parents[int(proc.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    servers = [pid for pid, parent in parents.items() if parent == coordinator]
    return {pid: parent for pid, parent in parents.items() if parent in servers}
