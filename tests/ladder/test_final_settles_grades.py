"""The final evaluation spends its pairs on what the grades depend on, and an open pair is graded as tied.

Issue 46: three identical bots got A, B and C because "lowest LOS first", one table at a
time, spent 116 of 120 pairs on the top pair (LOS 52%) and none on an open pair straddling
the A/B band (LOS 69%); the frozen table then said nothing loud about its open pairs.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import httpx
from calendar_support import frozen_ladder
from site_support import served

from arena.ladder.course.final import OPEN, SEPARATED, TIED, final_pairing, final_table, settled, straddling, verdicts
from arena.ladder.course.grades import GradeBands
from arena.ladder.games.standings import Standing

ARENA = str(Path(sys.executable).with_name("arena"))
#: Five ranked teams: places 1 to 3 get A (fewer than 50% above), 4 and 5 get B.
BANDS = GradeBands(((50, "A"), (100, "B")))


def row(entry: str, elo: float, half: float, rank: int, pairs: int = 10) -> Standing:
    return Standing(entry, elo, elo - half, elo + half, pairs, 2 * pairs, 0.0, rank)


def issue_rows() -> list[Standing]:
    """a/b open at LOS ~52% (the top pair), c/d open at LOS ~69% straddling A/B; the rest separated."""
    return [row("a@1", 1800, 60, 1), row("b@1", 1797, 60, 2), row("c@1", 1600, 60, 3), row("d@1", 1580, 60, 4),
            row("e@1", 1200, 30, 5)]  # fmt: skip


def test_an_open_pair_straddling_a_band_is_played_first_and_every_open_pair_gets_games():
    rows = issue_rows()
    found = verdicts(rows, 0.95, 10)
    assert [v.state for v in found] == [OPEN, SEPARATED, OPEN, SEPARATED]
    assert found[0].los < found[2].los  # "lowest LOS first" would play a/b for ever
    straddles = straddling(rows, BANDS)
    assert straddles == {frozenset(("c@1", "d@1"))}
    played: Counter[frozenset[str]] = Counter({frozenset(("a@1", "b@1")): 20})  # the top pair met often in the term
    spent: Counter[frozenset[str]] = Counter()  # what the final evaluation spent
    picks = []
    for _ in range(30):
        pick = final_pairing(rows, found, (), played, straddles, spent)
        assert pick is not None
        picks.append(pick)
        played[frozenset(pick)] += 1
        spent[frozenset(pick)] += 1
    assert picks[0] == ("c@1", "d@1"), "the open pair whose order changes a grade goes first"
    counts = Counter(picks)
    assert counts[("a@1", "b@1")] > 0 and counts[("c@1", "d@1")] > 0, counts
    assert counts[("c@1", "d@1")] > counts[("a@1", "b@1")], counts


def test_every_free_table_gets_a_pair_while_open_pairs_remain_and_none_is_left_behind():
    rows = issue_rows()
    found = verdicts(rows, 0.95, 10)
    straddles = straddling(rows, BANDS)
    assert final_pairing(rows, found, {"c@1", "d@1"}, {}, straddles) == ("a@1", "b@1")  # a second table at once
    assert final_pairing(rows, found, {"a@1", "c@1"}, {}, straddles) is None  # both open pairs busy: nothing else plays
    # A chain of open neighbours: b/c gets its turn, a/b and c/d do not run ahead of it (the real ladder's
    # three tables once kept playing the same three disjoint pairs, and the middle pair none).
    chain = [row("a@1", 1700, 90, 1), row("b@1", 1680, 90, 2), row("c@1", 1660, 90, 3), row("d@1", 1640, 90, 4)]
    open_chain = verdicts(chain, 0.95, 10)
    assert [v.state for v in open_chain] == [OPEN, OPEN, OPEN]
    spent = Counter({frozenset(("a@1", "b@1")): 3, frozenset(("c@1", "d@1")): 3})
    assert final_pairing(chain, open_chain, {"c@1", "d@1"}, {}, (), spent) is None  # a/b waits for b/c
    assert final_pairing(chain, open_chain, set(), {}, (), spent) == ("b@1", "c@1")
    tables: Counter[frozenset[str]] = Counter()
    spent = Counter()
    for _ in range(20):  # rounds of three tables: every open pair plays, evenly
        busy: set[str] = set()
        for _ in range(3):
            pick = final_pairing(chain, open_chain, busy, {}, (), spent)
            if pick is None:
                break
            busy.update(pick)
            spent[frozenset(pick)] += 1
            tables[frozenset(pick)] += 1
    assert set(tables) == {frozenset(("a@1", "b@1")), frozenset(("b@1", "c@1")), frozenset(("c@1", "d@1"))}
    assert max(tables.values()) - min(tables.values()) <= 1, tables


def test_an_open_pair_at_the_end_is_graded_as_tied_and_the_table_says_so_loudly():
    rows = issue_rows()
    table = final_table(rows, "2026-03-04T12:00:00+00:00", 0.95, 10)
    assert not table.settled and table.open_pairs == 2
    by = {r.entry: r for r in table.rows}
    assert by["a@1"].rank == by["b@1"].rank == 1 and by["a@1"].tie_group == by["b@1"].tie_group is not None
    assert by["c@1"].rank == by["d@1"].rank == 3 and by["c@1"].next_verdict == OPEN
    assert BANDS.grade(by["c@1"].rank, 5) == BANDS.grade(by["d@1"].rank, 5) == "A"
    assert by["e@1"].tie_group is None and by["e@1"].rank == 5
    assert table.warning is not None and "graded as tied" in table.warning and "2 neighbour pairs" in table.warning
    body = table.to_dict()
    assert body["open_pairs"] == 2 and body["warning"] == table.warning
    assert type(table).from_dict(body) == table
    tied_rows = [row("x@1", 1500, 5, 1), row("y@1", 1499, 5, 2)]
    assert final_table(tied_rows, "t", 0.95, 40).warning is None and settled(tied_rows, verdicts(tied_rows, 0.95, 40))
    assert verdicts(tied_rows, 0.95, 40)[0].state == TIED


def test_a_table_frozen_with_an_open_pair_says_so_in_every_export_the_console_and_the_site(tmp_path: Path):
    lad = frozen_ladder(tmp_path / "lad", resolution=1.0, bands=[[30, "A"], [67, "B"], [100, "C"]])
    lad.close()
    out = tmp_path / "out"
    done = subprocess.run([ARENA, "ladder", "export", str(lad.directory), "--final", "--csv", str(out / "final.csv"),
                           "--json", str(out / "final.json")], check=False, capture_output=True, text=True, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "WARNING: the final table is NOT SETTLED: 1 neighbour pair is still open" in done.stderr
    assert "graded as tied" in done.stderr
    rows = list(csv.DictReader(io.StringIO((out / "final.csv").read_text())))
    got = [(r["team"], r["rank"], r["grade"], r["verdict"]) for r in rows]
    assert got == [("alpha", "1", "A", "separated"), ("beta", "2", "B", "open"), ("gamma", "2", "B", ""),
                   ("delta", "", "", "")]  # fmt: skip
    data = json.loads((out / "final.json").read_text())
    assert data["settled"] is False and data["open_pairs"] == 1 and "graded as tied" in data["warning"]
    assert "graded as tied" in data["rule"]["open"]
    plain = subprocess.run([ARENA, "ladder", "export", str(lad.directory), "--final"], check=False, capture_output=True,
                           text=True, timeout=180)  # fmt: skip
    assert plain.returncode == 0 and "WARNING" in plain.stderr and "verdict" in plain.stdout.splitlines()[0]
    with served(lad.config, lad.state) as url:
        page = httpx.get(url + "/final").text
        assert 'id="final-warning"' in page and "graded as tied" in page
        assert '<span class="verdict verdict-open">open</span>' in page
        home = httpx.get(url + "/").text
        assert 'id="final-warning"' in home
        api = httpx.get(url + "/api/final").json()
        assert api["final"]["open_pairs"] == 1 and "graded as tied" in api["final"]["warning"]


def test_the_loud_line_and_the_verdicts_are_read_in_a_real_browser(tmp_path: Path, browser):  # type: ignore[no-untyped-def]
    lad = frozen_ladder(tmp_path / "lad", resolution=1.0, bands=[[30, "A"], [67, "B"], [100, "C"]])
    try:
        with served(lad.config, lad.state) as url:
            page = browser.new_page()
            blocked: list[str] = []
            page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
            page.goto(url + "/")
            alert = page.get_by_role("alert")
            assert alert.is_visible() and "graded as tied" in alert.text_content()
            verdicts = page.locator("#final-table td.verdict").all_text_contents()
            assert [v.strip() for v in verdicts] == ["separated", "open", ""]
            ranks = [r.split()[0] for r in page.locator("#final-table td.rank").all_text_contents()]
            assert ranks == ["1", "2", "2"]
            page.keyboard.press("Tab")  # by keyboard: the link to the final standings, then the page
            page.locator("#final-link").focus()
            page.keyboard.press("Enter")
            page.wait_for_url(url + "/final")
            assert page.get_by_role("alert").is_visible() and blocked == []
    finally:
        lad.close()
