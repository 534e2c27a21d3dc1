"""A bot's own command-line arguments reach the bot (issue 23 item 8).

``run()`` used to parse the whole command line: ``python mybot.py --depth 3``
exited with argparse's "unrecognized arguments" before connecting, and the
seat was charged a crash.  Here a real bot process started with its own
arguments joins a real referee over its seat's socket and plays; ``run()``
takes only ``--address``/``--token`` and leaves the rest in ``bot.argv``.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

from arena.match import MatchSpec, TimeControl, game_seeds
from arena.referee.host import command_launcher, host_match
from arena.referee.server import RefereeServer
from arena_sdk.engine import resolve_ruleset

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "example_bots" / "random" / "bot.py"

BOT = textwrap.dedent(
    """
    import argparse, json, sys

    sys.path.insert(0, {bot_dir!r})
    from bot import RandomBot
    from arena_sdk import run

    # The bot's own options, read the way docs/writing-a-bot.md shows (run() takes the SDK's).
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=1)
    own, _ = parser.parse_known_args()


    class Deep(RandomBot):
        name = "deep"

        def on_match_start(self, info):
            json.dump({{"depth": own.depth, "argv": self.argv}}, open({out!r}, "w"))


    run(Deep())
    """
)


def test_a_bot_started_with_its_own_arguments_joins_and_plays(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    script = tmp_path / "deep.py"
    script.write_text(BOT.format(bot_dir=str(RANDOM_BOT.parent), out=str(out)))
    spec = MatchSpec(
        match_id="bot-args", rules=resolve_ruleset("two-player", {"max_hands": "1"}),
        deal_seeds=tuple(game_seeds("args", 1)), time_control=TimeControl(move_s=2.0, bank_s=10.0, hard_cap_s=20.0),
    )  # fmt: skip
    launchers = [
        command_launcher(f"python {script} --depth 3 positional --verbose"),
        command_launcher(f"python {RANDOM_BOT}"),
    ]

    async def scenario():
        server = await RefereeServer().start([f"unix:{tmp_path / 'r.sock'}"])
        try:
            return await host_match(
                server, spec, launchers, server.addresses[0], start_timeout=30, log_dir=tmp_path / "logs"
            )
        finally:
            await server.stop(0.5)

    hosted = asyncio.run(asyncio.wait_for(scenario(), 120))
    game = hosted.outcome.games[0]
    log = (tmp_path / "logs" / "seat0.log").read_text()
    assert game.ending in ("max_hands", "target"), (game.ending, game.forfeit, log[-2000:])
    assert game.stats[0].decisions > 0 and sum(st.strikes for st in game.stats) == 0
    seen = json.loads(out.read_text())
    assert seen == {"depth": 3, "argv": ["--depth", "3", "positional", "--verbose"]}, seen
    assert hosted.exit_codes[0] == 0, log


def test_only_the_sdks_own_options_are_taken_in_full(monkeypatch) -> None:
    from arena_sdk.client import ENV_TOKEN, ENV_TOKEN_FILE, sdk_arguments

    monkeypatch.delenv(ENV_TOKEN, raising=False)
    monkeypatch.delenv(ENV_TOKEN_FILE, raising=False)
    args, rest = sdk_arguments("b", ["--depth", "3", "--address=unix:/r.sock", "--to", "5", "--token", "t", "x"])
    assert (args.address, args.token) == ("unix:/r.sock", "t")
    assert rest == ["--depth", "3", "--to", "5", "x"]  # "--to" is the bot's, not an abbreviation of --token
