"""After the freeze, `arena ladder show`, the leaderboard page, /final, the API and the export show one table.

Issue 46: `show` after the freeze printed the live table: the frozen rank-6 team missing (its final
version was replaced by an upload for practice after the deadline), that never-played post-deadline
version listed, no tie, no phase.  Here one frozen ladder is read by every output and they must agree
with each other and with the stored final table: entries in order, places, tie groups and verdicts.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
from calendar_support import set_keys
from site_support import SyntheticLadder, served
from standings_support import pair

from arena.ladder.config import load_ladder_config
from arena.ladder.course.calendar import iso
from arena.ladder.course.final_store import FinalStore
from arena.ladder.service import LadderService, open_results
from arena.tables.players import LocalTables

ARENA = str(Path(sys.executable).with_name("arena"))
HOUR = datetime.timedelta(hours=1)
TEAMS = [f"t{i}" for i in range(1, 8)]


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], check=False, capture_output=True, text=True, timeout=180)


def frozen_seven(directory: Path) -> SyntheticLadder:
    """Seven teams, stronger by number (t3 and t4 identical: they split every pair), frozen at final_until."""
    real = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    lad = SyntheticLadder(directory)
    set_keys(directory, deadline=real - 2 * HOUR, final_until=real - HOUR, after_deadline="practice", resolution=60.0)
    for team in TEAMS:
        lad.add_team(team)
        lad.add_version(team)
    with sqlite3.connect(lad.config.ladder_path) as db:
        db.execute("UPDATE versions SET activated=?", (iso(real - 3 * HOUR),))
    seq = 0
    for round_ in range(10):
        for i, a in enumerate(TEAMS):
            for b in TEAMS[i + 1:]:
                j = TEAMS.index(b)
                split = {a, b} == {"t3", "t4"} or (j - i == 1 and round_ % 3 == 0)
                seq += 1
                for g in pair(seq, f"{a}@1", f"{b}@1", 1 if split else 2):
                    lad.results.record_game(g)
    lad.config = load_ladder_config(directory)
    results = open_results(lad.config, lad.store.meta()["ladder_id"])
    LadderService(lad.config, lad.store, results, LocalTables()).close()  # final_until passed: it freezes at its start
    results.close()
    lad.add_version("t6")  # after the freeze, for practice: t6@1 is retired, t6@2 active and never played
    return lad


def test_show_the_site_the_api_and_the_export_agree_on_the_frozen_final_table(tmp_path: Path):
    lad = frozen_seven(tmp_path / "lad")
    try:
        assert [v.status for v in lad.store.versions(team="t6")] == ["retired", "active"]
        frozen = FinalStore(lad.config.ladder_path).frozen()
        assert frozen is not None
        stored = [(r["entry"], r["rank"], r["tie_group"], r["next_verdict"]) for r in frozen.body["rows"]]
        assert [e for e, *_ in stored] == [f"{t}@1" for t in TEAMS]
        assert stored[5][0] == "t6@1" and stored[5][1] == 6, "the frozen rank-6 team"
        assert stored[2][1] == stored[3][1] == 3 and stored[2][2] is not None, "t3 and t4 share a place"

        shown = json.loads(arena("ladder", "show", str(lad.directory), "--json").stdout)
        assert (shown["phase"], shown["table"]) == ("frozen", "final")
        from_show = [(r["entry"], r["rank"], r["tie_group"], r["verdict"]) for r in shown["standings"]]
        text = arena("ladder", "show", str(lad.directory)).stdout
        assert "final table, phase frozen" in text and "t6@2" not in text.split("uploads:")[0] and "3=" in text

        exported = json.loads(arena("ladder", "export", str(lad.directory), "--json", "-").stdout)
        assert (exported["phase"], exported["table"]) == ("frozen", "final")
        from_export = [(r["entry"], r["rank"], r["tied"], r["verdict"]) for r in exported["standings"]]
        rows = list(csv.DictReader(io.StringIO(arena("ladder", "export", str(lad.directory)).stdout)))
        from_csv = [(r["entry"], int(r["rank"]), int(r["tied"]) if r["tied"] else None, r["verdict"] or None) for r in rows]
        assert {r["phase"] for r in rows} == {"frozen"}

        with served(lad.config, lad.state) as url:  # the state: the live standings of the active versions
            api = httpx.get(url + "/api/leaderboard").json()
            assert (api["phase"], api["table"]) == ("frozen", "final")
            from_api = [(r["entry"], r["rank"], r["tie_group"], r["verdict"]) for r in api["standings"]]
            final_api = httpx.get(url + "/api/final").json()["final"]
            from_final_api = [(r["entry"], r["rank"], r["tie_group"], r["next_verdict"]) for r in final_api["rows"]]
            pages = []
            for path in ("/", "/final"):
                html = httpx.get(url + path).text
                table = html[html.index('<table id="final-table">'):]
                table = table[:table.index("</table>")]
                found = re.findall(r'<tr data-entry="([^"]+)"(?: class="tied" data-tie-group="(\d+)")?>\s*<td class="rank">(\d+|–)'
                                   r'.*?<td class="verdict">(?:<span class="verdict verdict-(\w+)">)?', table, re.S)  # fmt: skip
                pages.append([(e, int(rank), int(g) if g else None, v or None) for e, g, rank, v in found])
            api_team = httpx.get(url + "/api/teams/t6").json()
            api_t3 = httpx.get(url + "/api/teams/t3").json()
            page_t3 = httpx.get(url + "/teams/t3").text
        for other in (from_show, from_export, from_csv, from_api, from_final_api, pages[0], pages[1]):
            assert other == stored
        assert not any(e == "t6@2" for e, *_ in from_api + from_show + from_export)
        assert api_team["team"] == "t6"
        # The team pages tell the same story: the final table's figures, place and tie (they showed the live ones).
        t3 = next(v for v in api_t3["versions"] if v["entry"] == "t3@1")
        frozen_t3 = next(r for r in frozen.body["rows"] if r["entry"] == "t3@1")
        assert (t3["table"], t3["phase"], t3["rank"], t3["tied"], t3["final"]) == ("final", "frozen", 3, True, True)
        assert t3["elo"] == frozen_t3["elo"] and t3["pairs"] == frozen_t3["pairs"]
        t6 = {v["entry"]: v for v in api_team["versions"]}
        assert (t6["t6@1"]["rank"], t6["t6@1"]["final"]) == (6, True), "the frozen rank-6 version, retired since"
        assert (t6["t6@2"]["rank"], t6["t6@2"]["final"]) == (None, False), "the post-deadline version has no place"
        assert '<td class="place">3 (tied)</td>' in page_t3 and 'id="table-kind"' in page_t3
    finally:
        lad.close()
