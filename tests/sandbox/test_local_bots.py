"""Local ``cmd:`` bots (development mode): tokens out of reach of other local bots, every process stopped.

The hostile bot below, as a red team wrote it: once the game has begun it
looks through every process's environment for other seats' tokens (and
tries their token pipes), and it leaves behind a ``setsid`` child that
ignores TERM and a double-forked daemon; it plays normally.  (A bot that
reads another bot's pipe before its owner does, at start-up, can still take
that token: local mode is not a sandbox, docs/reliability.md.)  After the match every one of its processes
must be gone, it must have found no token, and the honest seats must have
played a normal game.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena.match import MatchSpec, TimeControl, game_seeds
from arena.referee.host import command_launcher, host_match
from arena.referee.server import RefereeServer
from arena.referee.session import RemoteSeat
from arena.sandbox.local import LocalProcess
from arena_sdk.engine import resolve_ruleset

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "example_bots" / "random" / "bot.py"

HOSTILE = textwrap.dedent(
    """
    import json, os, subprocess, sys

    sys.path.insert(0, {bot_dir!r})
    from bot import RandomBot  # the random example bot, made hostile
    from arena_sdk import run

    OUT = {out!r}
    SLEEPER = (
        "import os, signal, sys, time\\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
        "if sys.argv[1] == 'daemon' and os.fork():\\n"
        "    os._exit(0)\\n"  # the daemon: its parent exits at once, it is reparented
        "open(sys.argv[2], 'a').write(f'{{os.getpid()}}\\\\n')\\n"
        "time.sleep(600)\\n"
    )


    def steal():
        found = set()
        for pid in filter(str.isdigit, os.listdir("/proc")):
            if int(pid) == os.getpid():
                continue
            try:
                environ = open(f"/proc/{{pid}}/environ", "rb").read().split(b"\\0")
            except OSError:
                continue
            for item in environ:
                if item.startswith(b"ARENA_TOKEN="):
                    found.add(item.split(b"=", 1)[1].decode())
                if item.startswith(b"ARENA_TOKEN_FILE=/dev/fd/"):  # another bot's pipe, through /proc
                    fd = item.split(b"/")[-1].decode()
                    try:
                        f = os.open(f"/proc/{{pid}}/fd/{{fd}}", os.O_RDONLY | os.O_NONBLOCK)
                        data = os.read(f, 100)
                        os.close(f)
                        if data:
                            found.add(data.decode())
                    except OSError:
                        pass
        json.dump(sorted(found), open(OUT, "w"))


    class Hostile(RandomBot):
        name = "hostile"
        looked = False

        def bid(self, view):
            if not Hostile.looked:  # every seat has joined: the game has begun
                Hostile.looked = True
                steal()
            return super().bid(view)


    # A setsid child that ignores TERM, and a double-forked daemon (new session too).
    subprocess.Popen([sys.executable, "-c", SLEEPER, "setsid", OUT + ".pids"], start_new_session=True)
    subprocess.Popen([sys.executable, "-c", SLEEPER, "daemon", OUT + ".pids"], start_new_session=True).wait()
    run(Hostile())
    """
)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_a_hostile_local_bot_finds_no_token_and_leaves_no_process(tmp_path):
    out = tmp_path / "hostile.json"
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE.format(out=str(out), bot_dir=str(RANDOM_BOT.parent)))
    spec = MatchSpec(
        match_id="local-hostile", rules=resolve_ruleset("pagat", {"max_hands": "1"}),
        deal_seeds=tuple(game_seeds("local", 1)), time_control=TimeControl(move_s=2.0, bank_s=10.0, hard_cap_s=20.0),
    )  # fmt: skip
    seats = [RemoteSeat(s, spec.match_id) for s in range(4)]
    honest = command_launcher(f"python {RANDOM_BOT}")

    async def scenario():
        server = await RefereeServer().start([f"unix:{tmp_path / 'r.sock'}"])
        try:
            return await host_match(
                server, spec, [command_launcher(f"python {script}"), honest, honest, honest],
                server.addresses[0], seats=seats, start_timeout=30, log_dir=tmp_path / "logs",
            )  # fmt: skip
        finally:
            await server.stop(0.5)

    hosted = asyncio.run(asyncio.wait_for(scenario(), 120))
    game = hosted.outcome.games[0]
    assert game.ending in ("max_hands", "target"), (game.ending, game.forfeit, (tmp_path / "logs" / "seat0.log").read_text()[-2000:])
    assert sum(st.strikes for st in game.stats) == 0
    stolen = set(json.loads(out.read_text())) & {s.token for s in seats[1:]}
    assert not stolen, "a local bot read other seats' tokens"
    pids = [int(p) for p in Path(f"{out}.pids").read_text().split()]
    assert len(pids) == 2, "the setsid child and the daemon both started"
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if alive(p)]
    for pid in left:  # never leave them running, whatever the outcome
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes the bot started outlived the match: {left}"


def test_a_secret_reaches_the_process_on_a_pipe_not_in_its_environment(tmp_path):
    code = "import os; print(os.environ.get('SECRET')); print(open(os.environ['SECRET_FILE']).read()); print(repr(open(os.environ['SECRET_FILE']).read()))"

    async def scenario() -> str:
        proc = await LocalProcess.start([sys.executable, "-c", code], {}, log_path=tmp_path / "log", secrets={"SECRET": "s3cret"})
        await proc.process.wait()
        await proc.stop()
        return (tmp_path / "log").read_text()

    assert asyncio.run(scenario()).split("\n")[:3] == ["None", "s3cret", "''"], "read once; not in the environment"
