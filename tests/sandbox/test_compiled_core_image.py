"""A bot image runs the SDK's compiled core, installed from a wheel built on the host (issue 48).

The bot base image gets the arena-sdk wheel built with the compiled core for
the host's CPython, beside a pure-Python wheel of the SDK: the image's python3
(the same minor version) installs the compiled one, and there is no C compiler
in the image.  The probe runs in a container of a real ``arena bot build``
image, as the bot's user, without network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox.build import build_image
from arena.sandbox.docker import NO_NETWORK
from docker_support import BASE_IMAGE, TEST_LABEL, TEST_RUN

pytestmark = pytest.mark.docker

PROBE = r"""
import json, random, shutil, sys
from arena_sdk.engine import core, resolve_ruleset, GameState
from arena_sdk.engine.playout import play_random_hand
from arena_sdk.bots import simulate
state = GameState.new(resolve_ruleset("pagat"), 48)
play_random_hand(state, random.Random(48))
print(json.dumps({
    "core": core.describe(), "fast_random": getattr(core.compiled, "FAST_RANDOM", None),
    "hard_uses_it": simulate._fast is core.compiled and core.compiled is not None,
    "python": list(sys.version_info[:2]), "compiler": [c for c in ("cc", "gcc", "clang") if shutil.which(c)],
    "scores": state.scores, "history": len(state.history),
}))
"""


@pytest.mark.timeout(2400)  # the wheels (the SDK compiled with Cython) and the bot base image may be built first
def test_a_bot_image_runs_the_compiled_core_from_the_host_wheel(docker: Any, tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "bot.py").write_text("print('a bot')\n")
    tag = f"arena-core-probe:{TEST_RUN}"
    build_image(tmp_path / "bot", tag=tag, base_image=BASE_IMAGE, client=docker)
    try:
        out = docker.containers.run(
            tag, entrypoint=["/venv/bin/python", "-c", PROBE], **NO_NETWORK, remove=True,
            labels={TEST_LABEL: TEST_RUN},
        )  # fmt: skip
    finally:
        docker.images.remove(tag, force=True)
    report = json.loads(out.decode().strip().splitlines()[-1])
    assert report["python"] == list(sys.version_info[:2]), "the image's python is the host's minor version"
    assert report["core"]["compiled"] is True, report["core"]
    assert report["core"]["module"].startswith("/venv/"), report["core"]
    assert report["fast_random"] is True and report["hard_uses_it"] is True
    assert report["compiler"] == [], "no C compiler in the bot image"
    # The same hand as on the host (the engine is deterministic in the seed and the generator).
    from arena_sdk.engine import GameState, resolve_ruleset
    from arena_sdk.engine.playout import play_random_hand
    import random

    here = GameState.new(resolve_ruleset("pagat"), 48)
    play_random_hand(here, random.Random(48))
    assert report["scores"] == here.scores and report["history"] == len(here.history)
