"""A local bot's environment: the organiser's ``ARENA_*`` settings for bots stay out (issue 23 item 3).

A real process is started with stale values of every variable the SDK reads in
this process's environment; it must see only what the seat gives it.  The SDK
reads its token from the pipe before ``ARENA_TOKEN`` (tests/sdk/test_sdk_token.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest

from arena.sandbox.local import MARK_ENV, SDK_ENV, LocalProcess

REPO = Path(__file__).resolve().parents[2]
DUMP_ENV = "import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w'))"


def test_sdk_env_names_every_arena_variable_the_sdk_reads() -> None:
    named = set()
    for path in (REPO / "sdk" / "arena_sdk").rglob("*.py"):
        named |= set(re.findall(r"\bARENA_[A-Z0-9_]+", path.read_text()))
    assert named, "the SDK reads its settings from ARENA_* variables"
    assert named <= set(SDK_ENV), f"not stripped from a local bot's environment: {sorted(named - set(SDK_ENV))}"


def test_a_local_bot_inherits_no_stale_arena_setting_only_its_seats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SDK_ENV:
        monkeypatch.setenv(name, f"stale-{name}")
    monkeypatch.setenv("ARENA_LABELS", "arena.test=kept")  # not a bot setting: inherited as before
    monkeypatch.setenv("SOME_OTHER", "kept")
    out = tmp_path / "env.json"

    async def scenario() -> dict[str, str]:
        process = await LocalProcess.start(
            [sys.executable, "-c", DUMP_ENV, str(out)],
            {"ARENA_ADDRESS": "unix:/seat.sock", "ARENA_HARD_BUDGET_S": "0.1"},
            secrets={"ARENA_TOKEN": "the-seat-token"},
        )
        assert await asyncio.wait_for(process.process.wait(), 30) == 0
        await process.stop()
        return json.loads(out.read_text())

    env = asyncio.run(scenario())
    assert env["ARENA_ADDRESS"] == "unix:/seat.sock" and env["ARENA_HARD_BUDGET_S"] == "0.1"  # the seat's own
    assert "ARENA_TOKEN" not in env  # the seat's token is on its pipe; the stale one is gone
    assert env["ARENA_TOKEN_FILE"].startswith("/dev/fd/")
    assert env["ARENA_LABELS"] == "arena.test=kept" and env["SOME_OTHER"] == "kept" and env[MARK_ENV]
    assert not any(value.startswith("stale-") for value in env.values()), env
