"""Docker entries: a resumed run refuses a tag that moved; leftovers are pruned by run identity only."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox.docker import LABEL, MATCH_LABEL, RUN_LABEL
from arena.tournament import load_config, open_store
from arena.tournament.runner import resolve_images, table_spec
from arena.tournament.schedule import schedule, tables
from arena.tournament.table import ImageMismatch, check_images
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
                    BASE_IMAGE, ["sleep", "300"], detach=True, network_mode="none",
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
