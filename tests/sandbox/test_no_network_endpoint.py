"""No container the arena starts is a libnetwork endpoint: seats, start probes and build steps.

Docker 20.10 before 20.10.27 can deadlock when two endpoints of the shared
``none`` network end at once (moby/libnetwork#2679); a container with its
networking disabled has no endpoint at all (``NetworkSettings.Networks`` is
empty) and sees only ``lo``.  These tests ask the real engine.
"""

from __future__ import annotations

import os
import asyncio
import threading
from typing import Any

import pytest

from arena.sandbox.build import build_image
from arena.sandbox.build_network import HOLDER_LABEL, build_network
from arena.sandbox.docker import ContainerLimits, DockerProcess
from docker_support import BASE_IMAGE, own_containers

pytestmark = pytest.mark.docker


def _networks(docker: Any, container_id: str) -> dict[str, Any]:
    return dict(docker.api.inspect_container(container_id)["NetworkSettings"]["Networks"] or {})


def test_a_seat_has_no_network_endpoint(docker, images, tmp_path):
    async def start_and_look() -> tuple[dict[str, Any], bool]:
        proc = await DockerProcess.start(docker, images["probe"], {"ARENA_PROBE": "net"}, tmp_path, limits=ContainerLimits())
        try:
            info = docker.api.inspect_container(proc.container.id)
            return dict(info["NetworkSettings"]["Networks"] or {}), bool(info["Config"].get("NetworkDisabled"))
        finally:
            await proc.stop()

    networks, disabled = asyncio.run(start_and_look())
    assert networks == {}, f"a seat is an endpoint of {sorted(networks)}"
    assert disabled


def test_build_steps_share_a_holder_without_endpoint(docker, tmp_path):
    source = tmp_path / "bot"
    source.mkdir()
    # Each step prints its interfaces; the step sleeps so that it can be looked at while it runs.
    (source / "Dockerfile").write_text(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN sleep 2 && echo interfaces: $(ls /sys/class/net)\n"
    )
    seen: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    def on_line(line: str) -> None:
        if "Running in" in line:
            step = line.rsplit(" ", 1)[-1].strip()
            info = docker.api.inspect_container(step)
            with lock:
                seen[step] = {
                    "networks": dict(info["NetworkSettings"]["Networks"] or {}),
                    "mode": info["HostConfig"]["NetworkMode"],
                }

    lines: list[str] = []
    built = build_image(
        source, tag=None, base_image=BASE_IMAGE, client=docker, trusted=True,
        on_line=lambda line: (lines.append(line), on_line(line)),
    )  # fmt: skip
    try:
        assert seen, "the build announced no step container"
        for step, found in seen.items():
            assert found["networks"] == {}, f"build step {step} is an endpoint of {sorted(found['networks'])}"
            assert found["mode"].startswith("container:"), found
        assert any(line.strip() == "interfaces: lo" for line in lines), lines
        assert not own_containers(docker, label=[f"{HOLDER_LABEL}=1"]), "the holder is removed after the build"
    finally:
        docker.api.remove_image(built.image_id, force=True)


def test_an_image_that_cannot_hold_the_namespace_builds_offline_all_the_same(docker):
    notes: list[str] = []
    with build_network(docker, "arena-no-such-image:never", on_note=notes.append) as mode:
        assert mode == "none"
    assert notes and "none network" in notes[0]
    assert not own_containers(docker, label=[f"{HOLDER_LABEL}=1"])


def test_the_holder_has_no_endpoint_and_is_removed(docker):
    with build_network(docker, BASE_IMAGE) as mode:
        holder = mode.removeprefix("container:")
        assert mode.startswith("container:")
        assert _networks(docker, holder) == {}
    assert not own_containers(docker, id=holder)


def test_a_holder_left_by_a_killed_builder_ends_by_itself_after_its_build_would_have():
    from arena.sandbox.build_network import HOLDER_LIFETIME_S, HOLDER_MARGIN_S, holder_lifetime, holder_settings

    assert holder_lifetime(600.0) == 600 + HOLDER_MARGIN_S
    assert holder_lifetime(None) == HOLDER_LIFETIME_S
    assert holder_settings("img", {}, holder_lifetime(30.0))["command"] == [str(30 + HOLDER_MARGIN_S)]


def test_a_killed_servers_build_holder_is_removed_by_its_runs_next_start_prune(docker):
    """The finding (CI): a ladder killed mid-build left its holder sleeping past the restart; the run's prune never saw it."""
    from arena.sandbox.docker import RUN_LABEL
    from arena.tables.containers import prune_run

    run_id = f"ladder-holder-{os.getpid()}"
    killed_build = build_network(docker, BASE_IMAGE, timeout_s=600, labels={RUN_LABEL: run_id})
    holder = killed_build.__enter__().removeprefix("container:")  # never exited: its builder "died" here
    assert own_containers(docker, id=holder), "the holder runs"
    prune_run(run_id, client=docker, strict=True)
    assert not own_containers(docker, id=holder), "the run's start prune removed the killed build's holder"
