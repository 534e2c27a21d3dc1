"""The bot base is tagged by its fingerprint (issue 26): checkouts sharing an engine never retag
each other's ``arena-bot-base``.  Real Docker engine; two checkouts are two SDK fingerprints."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from typing import Any

import pytest
from docker_support import BASE_IMAGE, engine_or_skip

from arena.sandbox import build
from arena.sandbox.build import BOT_BASE_LABEL, bot_base_tag, ensure_bot_base

REPO = f"arena-bot-base-tagtest-{os.getpid()}"


def test_a_repository_gets_the_fingerprint_a_full_tag_stays() -> None:
    fp = "ab" * 32
    assert bot_base_tag("arena-bot-base", fp) == f"arena-bot-base:{'ab' * 8}"
    assert bot_base_tag("localhost:5000/bots/base", fp) == f"localhost:5000/bots/base:{'ab' * 8}"
    assert bot_base_tag("arena-bot-base:mine", fp) == "arena-bot-base:mine"
    assert bot_base_tag("reg:5000/base@sha256:" + "0" * 64, fp).endswith("0" * 64)
    assert build.DEFAULT_BOT_BASE == os.environ.get("ARENA_BOT_BASE", "arena-bot-base")


@pytest.fixture
def engine() -> Iterator[Any]:
    client = engine_or_skip("bot base tag tests")
    yield client
    for image in client.images.list(name=REPO):
        client.images.remove(image.id, force=True)


@pytest.mark.docker
@pytest.mark.timeout(1200)  # two bot base builds on a shared, loaded engine
def test_two_checkouts_keep_their_own_bot_base(engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    base = engine.images.get(BASE_IMAGE)

    real = build._source_fingerprint

    def as_checkout(name: str) -> tuple[str, list[str]]:
        # Only the bot base's SDK fingerprint differs: the wheel cache (shared by every
        # build on this machine) keeps seeing this checkout's real sources.
        monkeypatch.setattr(
            build, "_source_fingerprint", lambda *, sdk_only=False: f"checkout-{name}" if sdk_only else real()
        )
        lines: list[str] = []
        image_id = ensure_bot_base(base_image=BASE_IMAGE, tag=REPO, client=engine, on_line=lines.append)
        return image_id, lines

    def fingerprint(name: str) -> str:
        return hashlib.sha256(f"checkout-{name}/{base.id}".encode()).hexdigest()

    first, _ = as_checkout("A")
    second, _ = as_checkout("B")
    tag_a, tag_b = f"{REPO}:{fingerprint('A')[:16]}", f"{REPO}:{fingerprint('B')[:16]}"
    assert engine.images.get(tag_a).id == first and engine.images.get(tag_b).id == second
    assert first != second
    # B's build did not move A's tag: A's base is still A's, and A finds it without a build.
    assert engine.images.get(tag_a).labels[BOT_BASE_LABEL] == fingerprint("A")
    again, lines = as_checkout("A")
    assert again == first and lines == [], "no rebuild: the base was found under its own tag"
    assert not [t for image in engine.images.list(name=REPO) for t in image.tags if t.endswith(":latest")]
