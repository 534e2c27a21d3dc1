"""``python -m arena_sdk.bots TIER`` refuses arguments it does not know.

A built-in bot takes no arguments of its own: on the old entry point every
unknown argument was passed on to the bot and ignored, so ``--budgte 0.1``
(a typo) ran Hard with its default budget and said nothing.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from arena_sdk.engine import resolve_ruleset

from arena.match import TimeControl
from arena.referee.server import RefereeServer
from arena.referee.session import RemoteSeat


def run_entry_point(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "ARENA_ADDRESS": "unix:/nonexistent/referee.sock", "ARENA_TOKEN": "x"}
    return subprocess.run(
        [sys.executable, "-m", "arena_sdk.bots", *argv], capture_output=True, text=True, timeout=60, env=env
    )


def test_a_misspelt_option_is_an_error_not_ignored() -> None:
    proc = run_entry_point("hard", "--budgte", "0.1")
    assert proc.returncode == 2, proc
    assert "unrecognized arguments: --budgte 0.1" in proc.stderr


def test_an_abbreviated_option_is_not_taken_for_another() -> None:
    proc = run_entry_point("hard", "--bud", "0.1")
    assert proc.returncode == 2 and "unrecognized arguments" in proc.stderr, proc


def test_address_and_token_options_reach_the_referee(tmp_path: Path) -> None:
    # A real referee on a Unix socket: the bot started with --address and
    # --token (no environment) joins its seat.
    address = f"unix:{tmp_path}/referee.sock"
    spec_rules = resolve_ruleset("two-player", {"max_hands": 1})

    async def scenario() -> bool:
        server = await RefereeServer().start([address])
        try:
            seats = [RemoteSeat(s, "m1") for s in range(2)]
            server.add_match("m1", spec_rules, TimeControl(), 1, seats)
            with (tmp_path / "bot.err").open("wb") as err:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "arena_sdk.bots", "easy", "--address", address, "--token", seats[0].token,
                    env={"PATH": "/usr/bin:/bin"}, stdout=asyncio.subprocess.DEVNULL, stderr=err,
                )  # fmt: skip
            try:
                ended = asyncio.ensure_future(proc.wait())
                joined = asyncio.ensure_future(seats[0].joined.wait())
                await asyncio.wait({ended, joined}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
                assert seats[0].joined.is_set(), (proc.returncode, (tmp_path / "bot.err").read_text()[-2000:])
                return True
            finally:
                joined.cancel()
                if proc.returncode is None:  # (a bot that ended by itself cannot be killed)
                    proc.kill()
                await proc.wait()
        finally:
            await asyncio.wait_for(server.stop(0.5), 10)

    assert asyncio.run(scenario())
