"""A passing fault of the daemon never costs an honest seat a crash (issue 24, item 5, review).

The daemon answers 500 both for an image whose own configuration stops its
containers (``VOLUME /sys/x``) and for a passing fault of its own (containerd's
"context deadline exceeded" on a loaded machine).  A known-good control image
starting afterwards is not enough to blame the image: its own start is tried
once more, and only the same failure again (ids aside) charges it.

A passing 500 cannot be provoked on demand, so here the daemon's ``start``
call is wrapped (an edge fake) to fail for the bot's own containers a given
number of times; everything else (the images, the control, the retry, the
removal) is the real engine.  The preflight containers' removal is wrapped
the same way to fail: nothing of the run may be left behind.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from docker.errors import APIError
from docker_support import own_containers

import arena.sandbox.docker as sandbox
from arena.sandbox.docker import (
    PREFLIGHT_LABEL,
    RUN_LABEL,
    BotStartFailed,
    DockerProcess,
    SeatStartError,
    start_once,
)

pytestmark = pytest.mark.docker


def daemon_500(text: str) -> APIError:
    """The error the Docker SDK raises for a 500 of the daemon saying ``text``."""
    response = requests.Response()
    response.status_code = 500
    return APIError("500 Server Error: Internal Server Error", response=response, explanation=text)


class FlakyStart:
    """``client.api.start`` failing with the next of ``failures`` for each container of ``image``."""

    def __init__(self, client: Any, image: str, failures: list[str]) -> None:
        self.client = client
        self.image = image
        self.failures = list(failures)
        self.real: Callable[..., Any] = client.api.start
        self.failed = 0

    def __call__(self, container: Any, *args: Any, **kwargs: Any) -> Any:
        container_id = container if isinstance(container, str) else container["Id"]
        if self.failures and self.client.api.inspect_container(container_id)["Config"]["Image"] == self.image:
            self.failed += 1
            raise daemon_500(self.failures.pop(0))
        return self.real(container, *args, **kwargs)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """No image has started in this process yet (a later 5xx for one that did is the platform's anyway)."""
    monkeypatch.setattr(sandbox, "_started_images", set())


def start_and_stop(client: Any, image: str, socket_dir: Path, match: str) -> None:
    async def run() -> None:
        proc = await DockerProcess.start(client, image, {}, socket_dir, labels={"arena.match": match})
        await proc.stop(grace=0)

    asyncio.run(run())


def deadline(container_id: str) -> str:
    return f"failed to create task for container: failed to create shim task: {container_id}: context deadline exceeded: unknown"


def test_a_passing_500_then_a_start_is_not_the_seats_crash(docker, images, tmp_path, monkeypatch, fresh):
    flaky = FlakyStart(docker, images["random"], [deadline(uuid.uuid4().hex * 2)])
    monkeypatch.setattr(docker.api, "start", flaky)
    start_and_stop(docker, images["random"], tmp_path, "retry-1")  # started on the retry: no crash, no void
    assert flaky.failed == 1
    assert not own_containers(docker, label=["arena.match=retry-1"])


def test_the_same_failure_twice_after_the_control_started_is_the_images(docker, images, tmp_path, monkeypatch, fresh):
    # Ids differ from one container to the next: the same failure all the same.
    flaky = FlakyStart(docker, images["random"], [deadline(uuid.uuid4().hex * 2), deadline(uuid.uuid4().hex * 2)])
    monkeypatch.setattr(docker.api, "start", flaky)
    with pytest.raises(BotStartFailed) as caught:
        start_and_stop(docker, images["random"], tmp_path, "retry-2")
    assert "context deadline exceeded" in str(caught.value) and flaky.failed == 2
    assert not own_containers(docker, label=["arena.match=retry-2"])


def test_a_different_failure_on_the_retry_is_the_platforms(docker, images, tmp_path, monkeypatch, fresh):
    flaky = FlakyStart(docker, images["random"], [deadline("a" * 64), "ttrpc: closed: unknown"])
    monkeypatch.setattr(docker.api, "start", flaky)
    with pytest.raises(SeatStartError):
        start_and_stop(docker, images["random"], tmp_path, "retry-3")
    assert flaky.failed == 2
    assert not own_containers(docker, label=["arena.match=retry-3"])


def test_a_500_for_an_image_that_started_in_this_process_is_the_platforms(docker, images, tmp_path, monkeypatch, fresh):
    start_and_stop(docker, images["random"], tmp_path, "retry-4")  # it starts: its configuration is fine
    flaky = FlakyStart(docker, images["random"], [deadline("b" * 64), deadline("c" * 64)])
    monkeypatch.setattr(docker.api, "start", flaky)
    with pytest.raises(SeatStartError):
        start_and_stop(docker, images["random"], tmp_path, "retry-4")
    assert flaky.failed == 1  # neither a control nor a retry was needed to know
    assert not own_containers(docker, label=["arena.match=retry-4"])


class FlakyRemove:
    """``client.api.remove_container`` failing the first ``times`` calls for each container."""

    def __init__(self, client: Any, times: int) -> None:
        self.real: Callable[..., Any] = client.api.remove_container
        self.times = times
        self.calls: dict[str, int] = {}

    def __call__(self, container: Any, *args: Any, **kwargs: Any) -> Any:
        container_id = container if isinstance(container, str) else container["Id"]
        self.calls[container_id] = self.calls.get(container_id, 0) + 1
        if self.calls[container_id] <= self.times:
            raise daemon_500("removal of container failed: device or resource busy")
        return self.real(container, *args, **kwargs)


@pytest.mark.parametrize("times", [1, 2])
def test_a_preflight_container_whose_removal_fails_is_removed_all_the_same(docker, images, monkeypatch, times):
    run = f"preflight-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(docker.api, "remove_container", FlakyRemove(docker, times))
    start_once(docker, images["random"], run=run)  # tried again, then pruned by its labels
    assert not own_containers(docker, label=[f"{RUN_LABEL}={run}", f"{PREFLIGHT_LABEL}=1"])
