"""Off-turn CPU with real local bots (issue 36, docs/time-control.md "Off-turn CPU").

A bot whose threads spin while the other seat thinks takes cores from it and
nothing charged it.  Now the referee reads the seat's CPU meter (its process
tree, here) at its answer and at its next request, as it already did: the CPU
in between is recorded per seat and game (``meta.offturn`` of the record, the
match's timing) and, past the threshold, struck.  An honest bot's is near zero
and never struck.  Bounds are outcomes with wide margins: on a loaded machine
the spinner gets less of a core and the honest bot's spans get longer, which
only widens the gap.  The spinner's game has a strict limit (STRICT: 0.3 s and
2% of the wall time), so that a spinner that gets only a tenth of a core on a
very busy machine (where the default 25% would rightly spare it) is still
struck, while the honest seat beside it, under the same limit, is not.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from arena_sdk.engine import replay_record, resolve_ruleset
from offturn_support import SPIN_BOT

from arena.match import TimeControl
from arena.referee.botspec import BotSpec
from arena.referee.local_match import MatchConfig, run_match


#: The time control of these games: far from any timeout.
EASY = TimeControl(move_s=2.0, bank_s=10.0, hard_cap_s=10.0)
STRICT = TimeControl(move_s=2.0, bank_s=10.0, hard_cap_s=10.0, offturn_free_s=0.3, offturn_share=0.02)


def play(tmp_path: Path, spinner_threads: int, tc: TimeControl) -> tuple[dict, dict]:
    """One two-player game, A (``spinner_threads`` busy threads) against an honest B; (record, timing)."""
    script = tmp_path / "spin_bot.py"
    script.write_text(SPIN_BOT)
    command = f"{sys.executable} {script}"
    spinner = BotSpec("cmd", command, (("SPIN_THREADS", str(spinner_threads)), ("PAUSE_S", "0.01"),
                                       ("BOT_NAME", "spinner")))  # fmt: skip
    # B thinks (sleeps) 80 ms a decision: about 10 s in which A is not asked.
    honest = BotSpec("cmd", command, (("PAUSE_S", "0.08"), ("BOT_NAME", "honest")))
    config = MatchConfig(
        bots=(spinner, honest), rules=resolve_ruleset("two-player", {"max_hands": "5"}), games=1,
        seed="offturn-test", time_control=tc,
        out_dir=tmp_path / "out", match_id="offturn",
    )  # fmt: skip
    report = asyncio.run(asyncio.wait_for(run_match(config), 240))
    [game] = report.games
    record = json.loads((tmp_path / "out" / f"{game.game_id}.json").read_text())
    replay_record(record)  # the field is under meta: every reader takes it
    summary = json.loads((tmp_path / "out" / "match.json").read_text())
    timing = summary["games"][0]["timing"]
    # The per-bot totals over the match (one game here) say the same.
    for bot, seat in zip(summary["bots"], ("A", "B"), strict=True):
        assert bot["offturn_cpu_ms"] == timing[seat]["offturn_cpu_ms"], (bot, timing[seat])
    return record, timing


def offturn_strikes(record: dict, seat: str) -> list[dict]:
    return [a for h in record["hands"] for a in h["actions"] if a["seat"] == seat and a.get("default") == "offturn"]


def test_a_bot_spinning_between_its_decisions_is_recorded_and_struck(tmp_path: Path) -> None:
    record, timing = play(tmp_path, 3, STRICT)
    spinner, honest = record["meta"]["offturn"]["A"], record["meta"]["offturn"]["B"]
    # A's threads ran while B thought: half a second of CPU at the very least (several, unloaded).
    assert spinner["cpu_ms"] >= 500, spinner
    struck = offturn_strikes(record, "A")
    assert struck and all("while not asked" in a["reason"] for a in struck), record["strikes"]
    assert record["strikes"]["A"] >= len(struck)
    # B, honest, beside it: not struck, a small fraction of A's.
    assert record["strikes"]["B"] == 0 and not offturn_strikes(record, "B")
    assert honest["cpu_ms"] < 0.1 * spinner["cpu_ms"], (honest, spinner)
    # The match's timing says the same.
    assert timing["A"]["offturn_cpu_ms"] == spinner["cpu_ms"] and timing["B"]["offturn_ms"] == honest["ms"]


def test_honest_bots_are_recorded_near_zero_and_never_struck(tmp_path: Path) -> None:
    record, timing = play(tmp_path, 0, EASY)
    assert record["result"]["ending"] == "max_hands", record["result"]
    assert record["strikes"] == {"A": 0, "B": 0}
    for seat in ("A", "B"):
        offturn = record["meta"]["offturn"][seat]
        # A few ms a game (its transport, its bookkeeping at a hand's end); A is not asked for
        # about 10 s of B's thinking.  The bound is far above that and far below a strike.
        assert offturn["cpu_ms"] < 300, (seat, offturn)
        assert timing[seat]["offturn_cpu_ms"] == offturn["cpu_ms"]
    assert record["meta"]["offturn"]["A"]["ms"] >= 5000
