"""Helpers of the referee tests: a real server, bots as processes or tasks, record checks.

Everything async runs under :func:`arun` (a fresh event loop per test, every
wait bounded).  The fixtures that use these live in ``conftest.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import signal
import sys
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

from arena_sdk.engine import (
    Decision,
    GameState,
    Ruleset,
    parse_card,
    parse_decision,
    parse_seat,
    replay_record,
    resolve_ruleset,
)
from arena_sdk.engine.actions import action_from_json, action_to_json

from arena.match import MatchSpec, TimeControl, game_seeds
from arena.match.seat import RunningBot
from arena.referee.host import Launcher, command_launcher, host_match
from arena.referee.server import RefereeServer

HERE = Path(__file__).resolve().parent
RAWCLIENT = HERE / "rawclient.py"
#: Generous for well-behaved bots (a few ms per decision), small enough for a fast suite.
EASY = TimeControl(move_s=1.0, bank_s=2.0, hard_cap_s=5.0)
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])[CDHS][2-9TJQKA](?![A-Za-z0-9])")


def arun(coro: Awaitable[Any], timeout: float = 60.0) -> Any:
    """Run ``coro`` on a fresh event loop, failing (not hanging) after ``timeout`` seconds."""

    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


@contextlib.asynccontextmanager
async def running_referee(*addresses: str) -> AsyncIterator[RefereeServer]:
    server = await RefereeServer().start(list(addresses))
    try:
        yield server
    finally:
        await asyncio.wait_for(server.stop(0.5), 10)


def host(address: str, spec: MatchSpec, launchers: list[Any], log_dir: Path | None, timeout: float, **kw: Any) -> Any:
    """Start a referee on ``address``, host one match on it (bounded by ``timeout``), stop; the HostedMatch."""
    kw.setdefault("start_timeout", 15.0)

    async def scenario() -> Any:
        async with running_referee(address) as server:
            return await host_match(server, spec, launchers, server.addresses[0], log_dir=log_dir, **kw)

    return arun(scenario(), timeout)


def make_spec(
    match_id: str = "m1", preset: str = "two-player", *, games: int = 1, max_hands: int = 1,
    tc: TimeControl = EASY, seed: int | str = 1, **overrides: object,
) -> MatchSpec:  # fmt: skip
    rules = resolve_ruleset(preset, {"max_hands": max_hands, **overrides})
    return MatchSpec(match_id, rules, tuple(game_seeds(seed, games)), tc)


# ---------------------------------------------------------------------- bots


class TaskBot:
    """An in-process "process": a scripted client running as a task on the server's loop."""

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task

    def exited(self) -> bool:
        return self.task.done()

    async def exit_detail(self) -> str:
        return "the scripted client's task ended"

    async def stop(self, grace: float = 2.0) -> int:
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(self.task, grace)
        return 0


def task_launcher(script: Any, *, token: str | None = None) -> Launcher:
    """Launch ``script.run(address, token)`` as a task (``token`` overrides the seat's)."""

    async def launch(seat: int, address: str, seat_token: str, log_path: Path | None) -> RunningBot:
        return TaskBot(asyncio.ensure_future(script.run(address, token or seat_token)))

    return launch


def python_launcher(*argv: str | Path, token: str | None = None) -> Launcher:
    """Run ``python ARGV...`` as the bot's process (``token`` overrides the seat's)."""
    command = " ".join(shlex.quote(str(a)) for a in (sys.executable, *argv))
    inner = command_launcher(command)

    async def launch(seat: int, address: str, seat_token: str, log_path: Path | None) -> RunningBot:
        return await inner(seat, address, token or seat_token, log_path)

    return launch


def rawclient_launcher(mode: str, arg: str = "") -> Launcher:
    """The scripted client of ``rawclient.py`` as a separate process."""
    return python_launcher(RAWCLIENT, mode, *([arg] if arg else []))


class Remember:
    """Wraps a launcher and keeps the bot it started (to signal its process)."""

    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher
        self.bot: Any = None

    async def __call__(
        self, seat: int, address: str, token: str, log_path: Path | None
    ) -> RunningBot:
        self.bot = await self.launcher(seat, address, token, log_path)
        return self.bot

    def signal(self, sig: int) -> None:
        if self.bot is not None and getattr(self.bot, "pid", None):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.bot.pid, sig)

    def cleanup(self) -> None:
        """SIGCONT and SIGKILL whatever is left of the process group."""
        self.signal(signal.SIGCONT)
        if self.bot is not None and not self.bot.exited():
            self.signal(signal.SIGKILL)


SDK_BOT = '''\
"""An SDK bot for the referee tests: random legal play, misbehaving as told."""
import os
import signal
import sys
import time

from arena_sdk import Bot, Card, run

BEHAVIOUR = {behaviour!r}
PARAMS = {params!r}


def illegal_card(view):
    legal = set(view.legal_cards())
    in_hand = [c for c in view.hand if c not in legal]
    if in_hand:
        return in_hand[0]  # does not follow suit / spades not broken
    return next(Card(i) for i in range(52) if Card(i) not in view.hand)  # not held


class ScriptBot(Bot):
    name = "sdk-" + BEHAVIOUR
    version = "1"

    def __init__(self):
        super().__init__()
        self.plays = 0
        self.game = 0

    def on_game_start(self, info):
        self.game = info.index
        self.plays = 0

    def bid(self, view):
        return self.rng.randint(1, 4)

    def draw(self, view):
        return self.rng.random() < 0.5

    def blind_nil(self, view):
        return False

    def play(self, view):
        self.plays += 1
        plays = PARAMS.get("plays", (1,))
        if self.game in PARAMS.get("games", (0,)) and (plays == "all" or self.plays in plays):
            print(f"misbehaving ({{BEHAVIOUR}}) at play {{self.plays}} of game {{self.game}} at {{time.time():.3f}}", flush=True)
            if BEHAVIOUR == "late":
                time.sleep(PARAMS["delay"])
            elif BEHAVIOUR == "illegal":
                return illegal_card(view)
            elif BEHAVIOUR == "malformed":
                return "ZZ"
            elif BEHAVIOUR == "crash":
                os._exit(PARAMS.get("code", 7))
            elif BEHAVIOUR == "frozen":
                os.kill(os.getpid(), signal.SIGSTOP)
        return self.rng.choice(view.legal_cards())


if __name__ == "__main__":
    run(ScriptBot())
'''


def write_sdk_bot(directory: Path, behaviour: str = "random", **params: Any) -> Path:
    """Write an SDK bot script (``behaviour``: random, late, illegal, malformed, crash, frozen)."""
    path = directory / f"bot_{behaviour}_{len(list(directory.glob('bot_*.py')))}.py"
    path.write_text(SDK_BOT.format(behaviour=behaviour, params=params))
    return path


# ---------------------------------------------------------------------- records


def documented_default(state: GameState) -> Any:
    """docs/architecture.md section 5: bid 1; first legal card; blind nil no; draw keep; exchange none."""
    kind = state.decision
    if kind is Decision.BID:
        return 1
    if kind is Decision.BLIND_NIL:
        return False
    if kind is Decision.DRAW:
        return True
    if kind is Decision.EXCHANGE:
        return ()
    return state.legal_actions()[0]


def check_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record survives JSON, replays, and every defaulted action is the documented default.

    Returns the JSON round-tripped record.
    """
    data = json.loads(json.dumps(record))
    report = replay_record(data)
    result = data["result"]
    assert result["ending"] == report.result.ending
    rules = Ruleset.from_dict(data["ruleset"])
    n = rules.players
    decks = {i + 1: [int(parse_card(c)) for c in h["deck"]] for i, h in enumerate(data["hands"])}
    state = GameState.new(rules, data["seed"], first=parse_seat(n, data["first"]), decks=decks)
    strikes: dict[str, int] = {}
    rids: list[int] = []
    for hand in data["hands"]:
        for entry in hand["actions"]:
            kind = parse_decision(entry["kind"])
            assert "ms" in entry and "request_id" in entry, entry
            rids.append(entry["request_id"])
            if "default" in entry:
                assert entry["default"] in ("timeout", "illegal", "malformed"), entry
                strikes[entry["seat"]] = strikes.get(entry["seat"], 0) + 1
                assert entry["action"] == action_to_json(kind, documented_default(state)), (
                    entry,
                    hand["number"],
                )
            state.apply(action_from_json(kind, entry["action"]))
    assert rids == sorted(set(rids)), "request ids are unique and increasing"
    assert {k: v for k, v in data["strikes"].items() if v} == strikes
    return data


def all_actions(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for h in record["hands"] for a in h["actions"]]


def events(record: dict[str, Any], code: str | None = None) -> list[dict[str, Any]]:
    return [e for e in record["events"] if code is None or e["code"] == code]
