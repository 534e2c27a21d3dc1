"""Issue #16.5: the published per-entry table shows CPU time next to wall time, and the referee's share.

A bot that burns a known amount of CPU per card and one that sleeps as long
must differ in CPU per decision and not in wall time; both figures reach
``ratings.json``, ``leaderboard.md``, the HTML fault table and ``ratings show``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path

from tournament_support import arena

BURN_S = 0.04

BOT = """\
import time
from arena_sdk import Bot, run

class Timed(Bot):
    name = "{name}"

    def bid(self, view):
        return 3

    def play(self, view):
        if {burn}:  # a known amount of CPU in this process
            until = time.process_time() + {seconds}
            while time.process_time() < until:
                pass
        else:  # as long, by the clock only
            time.sleep({seconds})
        return view.legal_cards()[0]

run(Timed())
"""


def test_cpu_and_referee_time_per_entry_are_published(tmp_path: Path) -> None:
    bots = {}
    for name, burn in (("burner", True), ("sleeper", False)):
        script = tmp_path / f"{name}.py"
        script.write_text(BOT.format(name=name, burn=burn, seconds=BURN_S))
        bots[name] = f"cmd:{sys.executable} {script}"
    (tmp_path / "t.toml").write_text(
        f"""
[tournament]
name = "time"
seed = "time-table"
deals_per_pairing = 1
concurrency = 2
output = "out"

[rules]
preset = "pagat"
set = {{ max_hands = 1 }}

[time]
move = 2.0

[[entry]]
name = "burner"
bot = "{bots['burner']}"

[[entry]]
name = "sleeper"
bot = "{bots['sleeper']}"
"""
    )
    run = arena(tmp_path, "tournament", "run", "t.toml", "--no-show")
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        stored = db.execute("SELECT entry, COUNT(*), SUM(decisions), SUM(cpu_decisions) FROM side_times GROUP BY entry")
        per_entry = {e: (games, d, cd) for e, games, d, cd in stored}
    assert set(per_entry) == {"burner", "sleeper"} and all(g == 2 for g, _, _ in per_entry.values())
    assert all(d > 0 and cd == d for _, d, cd in per_entry.values()), per_entry  # local processes: CPU measured

    published = arena(tmp_path, "ratings", "publish", "out", "--out", "site")
    assert published.returncode == 0, published.stderr
    doc = json.loads((tmp_path / "site" / "ratings.json").read_text())
    timing = {e["name"]: e["timing"] for e in doc["entries"]}
    plays_share = 13 / 14  # one bid, then thirteen cards, per hand; only the cards burn
    for name in ("burner", "sleeper"):
        assert timing[name]["wall_ms_per_decision"] >= 0.9 * BURN_S * 1000 * plays_share, timing
        assert timing[name]["referee_us_per_decision"] > 0, timing
    assert timing["burner"]["cpu_ms_per_decision"] >= 0.9 * BURN_S * 1000 * plays_share, timing
    assert timing["sleeper"]["cpu_ms_per_decision"] < 0.25 * BURN_S * 1000, timing

    html = (tmp_path / "site" / "index.html").read_text()
    faults = html[html.index('id="faults"') :]
    cpu = dict(re.findall(r'<tr data-entry="(\w+)">.*?<td data-time="cpu">([\d.,–]+)</td>', faults))
    assert float(cpu["burner"]) >= 0.9 * BURN_S * 1000 * plays_share and float(cpu["sleeper"]) < 10, cpu
    markdown = (tmp_path / "site" / "leaderboard.md").read_text()
    assert "## Time per decision" in markdown and "CPU ms/decision" in markdown
    shown = arena(tmp_path, "ratings", "show", "out")
    assert shown.returncode == 0 and "Time per decision" in shown.stdout, shown.stdout
