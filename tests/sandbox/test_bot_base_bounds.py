"""Making the bot base is bounded like a team's build (issue 44).

Before this (the main branch) ``ensure_bot_base`` built with no limit,
timeout or cancel, under a lock every default build waits on: one slow base
build held every builder, and a build waiting for the lock could neither time
out nor be cancelled.  Real Docker engine: the base is made from a base image
of the test's own (its layers are in no cache, so the build really runs).
"""

from __future__ import annotations

import io
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from docker_support import BASE_IMAGE, engine_or_skip

from arena.sandbox import build
from arena.sandbox.build import BuildInterrupted, ensure_bot_base
from arena.sandbox.build_run import BuildLimits

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]

RUN = uuid.uuid4().hex[:10]
REPO = f"arena-bot-base-bounds-{RUN}"
#: The longest a build may take to notice its cancel or its timeout while it waits (generous: a loaded machine).
NOTICE_S = 60.0


@pytest.fixture
def engine() -> Iterator[Any]:
    client = engine_or_skip("bot base bounds tests")
    yield client
    for image in client.images.list(name=REPO):
        client.images.remove(image.id, force=True)
    for image in client.images.list(name=f"arena-base-bounds-{RUN}"):
        _remove_with_children(client, image.id)
    client.close()


def _remove_with_children(client: Any, image_id: str) -> None:
    """Remove ``image_id`` and the layers a stopped build cached on it (its children first)."""
    family = {image_id}
    while True:
        children = {i["Id"] for i in client.api.images(all=True) if i.get("ParentId") in family} - family
        if not children:
            break
        family |= children
    while family:
        parents = {i.get("ParentId") for i in client.api.images(all=True) if i["Id"] in family}
        for leaf in family - parents:
            client.api.remove_image(leaf, force=True)
        family &= parents


def _waiting(engine: Any, **kw: Any) -> tuple[threading.Thread, list[BaseException]]:
    """``ensure_bot_base`` in a thread while this test holds the base's lock (another build making it)."""
    raised: list[BaseException] = []

    def make() -> None:
        try:
            ensure_bot_base(base_image=BASE_IMAGE, tag=REPO, client=engine, **kw)
        except BaseException as exc:  # noqa: BLE001 - the test looks at what it raised
            raised.append(exc)

    thread = threading.Thread(target=make, daemon=True)
    thread.start()
    return thread, raised


def test_a_build_waiting_for_the_bot_base_is_cancelled_and_times_out_while_it_waits(engine: Any) -> None:
    assert build._BOT_BASE_LOCK.acquire(timeout=NOTICE_S), "another test holds the bot base's lock"
    try:
        cancel = threading.Event()
        cancelled, cancel_raised = _waiting(engine, cancel=cancel)
        timed, timeout_raised = _waiting(engine, build_limits=BuildLimits(timeout_s=2.0))
        time.sleep(0.5)  # (both are waiting for the lock)
        cancel.set()
        cancelled.join(NOTICE_S)
        timed.join(NOTICE_S)
        assert not cancelled.is_alive(), "a cancelled build still waited for the bot base"
        assert not timed.is_alive(), "a build past its timeout still waited for the bot base"
    finally:
        build._BOT_BASE_LOCK.release()
    assert isinstance(cancel_raised[0], BuildInterrupted) and cancel_raised[0].reason == "cancelled", cancel_raised
    assert isinstance(timeout_raised[0], BuildInterrupted) and timeout_raised[0].reason == "timeout", timeout_raised
    assert str(timeout_raised[0]) == "build timed out after 2 s waiting for the bot base image"
    assert engine.images.list(name=REPO) == [], "nothing was made"


def test_the_bot_base_build_stops_at_its_timeout_and_leaves_no_step_container(engine: Any) -> None:
    base = f"arena-base-bounds-{RUN}:1"
    # A base image of our own (a label changes its ID): the bot base's steps find nothing cached.
    engine.images.build(fileobj=io.BytesIO(f"FROM {BASE_IMAGE}\nLABEL arena.test={RUN}\n".encode()), tag=base,
                        network_mode="none", rm=True)  # fmt: skip
    started = time.monotonic()
    with pytest.raises(BuildInterrupted) as raised:
        ensure_bot_base(base_image=base, tag=REPO, client=engine, build_limits=BuildLimits(timeout_s=3.0))
    took = time.monotonic() - started
    assert raised.value.reason == "timeout", raised.value
    assert str(raised.value) == "build timed out after 3 s (making the bot base image)"
    assert took < 300, f"stopped after {took:.0f} s"
    assert engine.images.list(name=REPO) == [], "no bot base was made"
    steps = [c for c in engine.api.containers(all=True, filters={"ancestor": base})]
    assert steps == [], f"the stopped build left step containers: {steps}"
    # Another build may take the lock at once (the stopped one let it go).
    assert build._BOT_BASE_LOCK.acquire(blocking=False)
    build._BOT_BASE_LOCK.release()
