"""Numbers the referee promises a bot, checked in real matches.

``MatchInfo.hard_cap_ms`` (what an SDK bot is told when it joins) is the limit
the referee strikes it at (issue #16.2), and request ids count up from 1 and
stay below 2**53, exact as JSON numbers in every language (docs/protocol.md,
"Request ids").
"""

from __future__ import annotations

import json
from pathlib import Path

from referee_support import check_record, events, host, make_spec, python_launcher, task_launcher, write_sdk_bot

from arena.match import TimeControl

#: docs/protocol.md: ids stay far below 2^53, the largest integer every JSON reader keeps exact.
JSON_EXACT = 2**53

CAP_BOT = """\
import json
import time
from arena_sdk import Bot, run

REPORT = {report!r}

class CapBot(Bot):
    '''Tells what it was told, then takes 0.6 of its hard cap once and 1.4 of it once.'''

    name = "cap"
    plays = 0

    def bid(self, view):
        return 3

    def play(self, view):
        self.plays += 1
        cap_s = self.match.hard_cap_ms / 1000
        if self.plays == 1:
            info = self.match
            with open(REPORT, "w") as out:
                json.dump({{"hard_cap_ms": info.hard_cap_ms, "move_ms": info.move_ms, "bank_ms": info.bank_ms,
                           "time_left": view.time_left()}}, out)
        elif self.plays == 2:  # over the move time, inside the cap: paid from the bank
            time.sleep(0.6 * cap_s)
        elif self.plays == 4:  # over the cap, well inside move + bank: struck at the cap
            time.sleep(1.4 * cap_s)
        return view.legal_cards()[0]

run(CapBot())
"""


def test_the_hard_cap_a_bot_is_told_is_the_one_it_is_struck_at(
    unix_address: str, bot_dir: Path, log_dir: Path
) -> None:
    # Move 0.5 s and bank 4 s would allow 4.5 s; the hard cap of 1 s is what the referee enforces.
    tc = TimeControl(move_s=0.5, bank_s=4.0, hard_cap_s=1.0)
    report = bot_dir / "match-info.json"
    script = bot_dir / "cap_bot.py"
    script.write_text(CAP_BOT.format(report=str(report)))

    hosted = host(unix_address, make_spec(tc=tc), [python_launcher(script), python_launcher(write_sdk_bot(bot_dir))],
                  log_dir, 60)  # fmt: skip
    told = json.loads(report.read_text())
    assert (told["hard_cap_ms"], told["move_ms"], told["bank_ms"]) == (1000, 500, 4000), told
    assert told["time_left"] <= 1.0, "time_left() is bounded by the cap too"

    [game] = hosted.outcome.games
    record = check_record(game.record)
    plays = [a for h in record["hands"] for a in h["actions"] if a["seat"] == "A" and a["kind"] == "play"]
    inside, over = plays[1], plays[3]
    # A decision's "ms" leaves out the referee's own stalls ("lag_ms", a loaded machine's): the two make its wall time.
    assert "default" not in inside and inside["ms"] + inside.get("lag_ms", 0) >= 600, inside  # past the move time, not struck
    assert over.get("default") == "timeout", over
    # Struck at the cap, not after move + bank (4.5 s); a loaded machine may be late by a few ticks.
    assert told["hard_cap_ms"] <= over["ms"] + over.get("lag_ms", 0) < told["move_ms"] + told["bank_ms"], "struck at the cap it was told"
    assert record["strikes"]["A"] == 1 and record["result"]["ending"] == "max_hands", record["result"]


def test_request_ids_count_up_from_one_across_a_match_and_stay_json_exact(
    unix_address: str, bot_dir: Path, log_dir: Path
) -> None:
    import rawclient as rc

    script = rc.Script()  # keeps every request as it came off the wire
    spec = make_spec(games=2)
    hosted = host(unix_address, spec, [task_launcher(script), python_launcher(write_sdk_bot(bot_dir))], log_dir, 60)
    records = [check_record(g.record) for g in hosted.outcome.games]
    assert len(records) == 2
    ids = [a["request_id"] for r in records for h in r["hands"] for a in h["actions"]]
    # One counter per match: the second game goes on from the first, every decision has its own id.
    assert ids == list(range(1, len(ids) + 1))
    assert all(type(i) is int and 0 < i < JSON_EXACT for i in ids)
    assert all(0 <= e["request_id"] < JSON_EXACT for r in records for e in events(r))
    # What the bot was sent is what the records say.
    seat_a = [a["request_id"] for r in records for h in r["hands"] for a in h["actions"] if a["seat"] == "A"]
    assert [r.request_id for r in script.requests] == seat_a
