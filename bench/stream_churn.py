#!/usr/bin/env python
"""Stream churn on a seat's own socket: what it costs the table, the referee and an honest bot.

What is measured (issue 24, item 6)
-----------------------------------
One 4-player ``pagat`` match played by :func:`arena.referee.local_match.play_seated`
(every seat on its own socket, as ``arena match run`` and tournament tables
play), local-process seats:

* N: an SDK bot that answers at once and, at its first game start, starts
  ``--helpers`` processes of ``tests/referee/h2client.py churn``: each opens
  ``--connections`` side connections to N's own socket and, in a loop, opens
  ``Play`` streams that send a Join with a wrong token and are reset at once
  (``--mode reset``) or left for the referee to refuse (``join``; ``both``:
  the helpers take turns), at most ``--streams`` streams and ``--seconds`` each;
* E: an honest SDK bot that thinks ``--think`` seconds (a sleep) of every
  decision of a ``--move`` second move;
* S, W: SDK bots that answer at once.

Figures, with the churn (``churn``) and without it (``quiet``): the table's
wall time (``play_seated`` call to return), the referee's CPU
(``time.process_time`` of this process: the referee's event loop and gRPC's
threads), the honest bot's decisions and how many of them went past the move
time into the bank (bank hits) or timed out, the lag the referee credited
(``lag_ms``), the games' endings, and what N was charged (its events).

Run: ``.venv/bin/python bench/stream_churn.py`` (about a minute on a quiet
2-core machine; ``--rounds`` repeats both runs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
H2CLIENT = ROOT / "tests" / "referee" / "h2client.py"

CHURNER = """\
import subprocess, sys
from arena_sdk import Bot, run


class Churner(Bot):
    name = "churner"
    helpers = None

    def on_game_start(self, info):
        if self.helpers is None and {helpers} > 0:  # every seat has joined: churn while the others play
            self.helpers = [
                subprocess.Popen([sys.executable, {h2client!r}, "churn", "{connections}", "{streams}", "{seconds}",
                                  {modes!r}[i % 2]], stdout=open({out!r} + f".{{i}}", "w"))
                for i in range({helpers})
            ]

    def bid(self, view):
        return 3

    def play(self, view):
        return view.legal_cards()[0]


run(Churner())
"""

THINKER = """\
import time
from arena_sdk import Bot, run


class Thinker(Bot):
    name = "thinker"

    def bid(self, view):
        time.sleep({think})
        return 3

    def play(self, view):
        time.sleep({think})
        return view.legal_cards()[0]


run(Thinker())
"""

INSTANT = """\
from arena_sdk import Bot, run


class Instant(Bot):
    name = "instant"

    def bid(self, view):
        return 3

    def play(self, view):
        return view.legal_cards()[0]


run(Instant())
"""


async def one_run(args: argparse.Namespace, helpers: int, work: Path) -> dict[str, Any]:
    """Play one match (``helpers`` churn processes at N; 0: none) and return its figures."""
    from arena_sdk.engine import resolve_ruleset

    from arena.match import MatchSpec, TimeControl, game_seeds
    from arena.referee.botspec import BotSpec
    from arena.referee.local_match import play_seated

    out = work / f"churn-{helpers}.json"
    bots = {
        "churner": CHURNER.format(
            helpers=helpers, h2client=str(H2CLIENT), connections=args.connections,
            streams=args.streams, seconds=args.seconds, out=str(out),
            modes=["reset", "join"] if args.mode == "both" else [args.mode] * 2,
        ),
        "thinker": THINKER.format(think=args.think),
        "instant": INSTANT,
    }  # fmt: skip
    paths = {}
    for name, text in bots.items():
        paths[name] = work / f"{name}.py"
        paths[name].write_text(text)
    seat_bots = [BotSpec("cmd", f"{sys.executable} {paths[name]}") for name in ("churner", "thinker", "instant", "instant")]
    rules = resolve_ruleset("pagat", {"max_hands": args.max_hands})
    tc = TimeControl(move_s=args.move, bank_s=args.bank, hard_cap_s=args.hard_cap)
    spec = MatchSpec(f"churn{helpers}", rules, tuple(game_seeds(7, args.games)), tc)
    cpu0, wall0 = time.process_time(), time.monotonic()
    hosted = await play_seated(spec, seat_bots, log_dir=work / f"logs-{helpers}", start_timeout=20.0)
    wall, cpu = time.monotonic() - wall0, time.process_time() - cpu0
    honest = [a for g in hosted.outcome.games for h in g.record["hands"] for a in h["actions"] if a["seat"] == "E"]
    move_ms = args.move * 1000
    streams = 0
    for path in work.glob(f"churn-{helpers}.json.*"):
        lines = path.read_text().splitlines()
        streams += json.loads(lines[-1])["streams"] if lines else 0
    charged = [e["code"] for g in hosted.outcome.games for e in g.record["events"] if e["seat"] == "N"]
    return {
        "helpers": helpers,
        "wall_s": round(wall, 2),
        "referee_cpu_s": round(cpu, 2),
        "endings": [g.ending for g in hosted.outcome.games],
        "honest_decisions": len(honest),
        "honest_bank_hits": sum(a["ms"] > move_ms for a in honest),
        "honest_timeouts": sum(a.get("default") == "timeout" for a in honest),
        "honest_max_ms": max((a["ms"] for a in honest), default=0.0),
        "honest_lag_ms": round(sum(a.get("lag_ms", 0.0) for a in honest), 1),
        "churn_streams": streams,
        "n_events": {code: charged.count(code) for code in sorted(set(charged))},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--helpers", type=int, default=2, help="churn processes at seat N")
    parser.add_argument("--connections", type=int, default=3, help="side connections per churn process")
    parser.add_argument("--streams", type=int, default=200_000, help="streams per churn process at most")
    parser.add_argument("--seconds", type=float, default=90.0, help="how long a churn process runs at most")
    parser.add_argument(
        "--mode", choices=("reset", "join", "both"), default="both",
        help="churn streams reset at once, left for the referee to refuse, or half each (by helper)",
    )
    parser.add_argument("--think", type=float, default=0.25, help="the honest bot's thinking time per decision")
    parser.add_argument("--move", type=float, default=0.3)
    parser.add_argument("--bank", type=float, default=1.0)
    parser.add_argument("--hard-cap", type=float, default=2.0)
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--max-hands", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", choices=("churn", "quiet"), help="one of the two runs only")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    for _ in range(args.rounds):
        for label, helpers in (("quiet", 0), ("churn", args.helpers)):
            if args.only not in (None, label):
                continue
            with tempfile.TemporaryDirectory(prefix="arena-churn-") as tmp:
                result = asyncio.run(one_run(args, helpers, Path(tmp)))
            print(json.dumps({"run": label, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
