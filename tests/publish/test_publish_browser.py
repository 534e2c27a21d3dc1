"""index.html in a real headless Chromium: the DOM it builds, and a screenshot for people."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from chromium_run import chromium
from publish_dom import Node, parse
from publish_sample import HOSTILE, MARKUP, QUOTES, UNPLAYED, sample_standings

from arena.publish import write_outputs
from arena.ratings import fit

REPO = Path(__file__).resolve().parents[2]
#: Set to True (locally) to refresh docs/leaderboard-example.png from the screenshot.
SAVE_EXAMPLE_SCREENSHOT = False


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Node, dict, Path]:
    """The DOM Chromium builds from index.html, the ratings.json beside it, the output dir."""
    out = tmp_path_factory.mktemp("site")
    standings = sample_standings()
    paths = write_outputs(standings, fit(standings.results), out)
    proc = chromium(tmp_path_factory.mktemp("chromium"), "--dump-dom", paths["html"].as_uri())
    return parse(proc.stdout), json.loads(paths["json"].read_text()), out


def leaderboard_rows(dom: Node) -> list[Node]:
    return dom.find("table", id="leaderboard").find("tbody").find_all("tr")


def cell(row: Node, cls: str) -> Node:
    return row.find("td", class_=cls)


def test_leaderboard_rows_match_ratings_json(page):
    dom, doc, _ = page
    rows = leaderboard_rows(dom)
    assert [r.attrs["data-entry"] for r in rows] == [e["name"] for e in doc["entries"]]
    for row, entry in zip(rows, doc["entries"], strict=True):
        if entry["elo"] is None:
            assert cell(row, "elo").text == "–" and cell(row, "games").text == "0"
            continue
        assert cell(row, "rank").text == str(entry["rank"])
        assert cell(row, "elo").text == f"{entry['elo']:.0f}"
        assert float(cell(row, "elo").attrs["data-value"]) == entry["elo"]
        assert cell(row, "margin").text == f"{entry['margin']:.0f}"
        assert cell(row, "games").text == str(entry["games"])
        assert cell(row, "score").text == f"{entry['score_pct']:.1f}%"
        assert [cell(row, c).text for c in ("wins", "losses", "draws")] == [
            str(entry["wins"]),
            str(entry["losses"]),
            str(entry["draws"]),
        ]
    elos = [
        float(cell(r, "elo").attrs["data-value"])
        for r in rows
        if cell(r, "elo").attrs["data-value"]
    ]
    assert elos == sorted(elos, reverse=True) and len(elos) == 5
    assert rows[-1].attrs["data-entry"] == UNPLAYED


def test_every_rated_row_has_an_error_bar(page):
    dom, doc, _ = page
    for row, entry in zip(leaderboard_rows(dom), doc["entries"], strict=True):
        bars = cell(row, "interval").find_all("svg", class_="errorbar")
        if entry["elo"] is None:
            assert not bars
            continue
        (bar,) = bars
        assert float(bar.attrs["data-lower"]) == entry["lower"]
        assert float(bar.attrs["data-upper"]) == entry["upper"]
        line = bar.find("line", class_="range")
        dot = bar.find("circle", class_="point")
        x1, x2, cx = float(line.attrs["x1"]), float(line.attrs["x2"]), float(dot.attrs["cx"])
        assert x1 < cx < x2


def test_hostile_names_are_text_not_markup(page):
    dom, _, _ = page
    assert dom.find_all("script") == []
    assert dom.find_all("b") == []  # from QUOTES' <b>bold</b>
    by_entry = {r.attrs["data-entry"]: r for r in leaderboard_rows(dom)}
    assert set(by_entry) >= {HOSTILE, QUOTES, MARKUP}
    assert cell(by_entry[HOSTILE], "entry").text == HOSTILE
    assert cell(by_entry[QUOTES], "entry").text == QUOTES
    assert dom.find("title").text == "Spring <Cup> & friends"
    csp = dom.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert "default-src 'none'" in csp


def test_disqualified_entry_is_marked(page):
    dom, _, _ = page
    row = {r.attrs["data-entry"]: r for r in leaderboard_rows(dom)}[MARKUP]
    assert "disqualified" in row.classes
    assert cell(row, "entry").find("span", class_="dq-mark").text == "DQ"


def test_crosstable_los_faults_and_provenance(page):
    dom, doc, _ = page
    cross = {
        r.attrs["data-entry"]: r
        for r in dom.find("table", id="crosstable").find("tbody").find_all("tr")
    }
    for a, row in doc["crosstable"].items():
        for b, rec in row.items():
            td = cross[a].find("td", data_opponent=b)
            assert int(td.attrs["data-games"]) == rec["games"]
            assert td.text.startswith(f"{rec['wins']}-{rec['losses']}-{rec['draws']}")
    los = {
        r.attrs["data-entry"]: r for r in dom.find("table", id="los").find("tbody").find_all("tr")
    }
    assert (
        float(los["alpha"].find("td", data_opponent=HOSTILE).attrs["data-value"])
        == doc["los"]["alpha"][HOSTILE]
    )
    faults = {
        r.attrs["data-entry"]: r
        for r in dom.find("table", id="faults").find("tbody").find_all("tr")
    }
    assert faults[MARKUP].find("td", data_reason="timeout").text == "3"
    assert faults[MARKUP].find("td", class_="total").text == "4"
    assert faults["alpha"].find("td", class_="total").text == "0"
    prov = {
        r.attrs["data-entry"]: r
        for r in dom.find("table", id="provenance").find("tbody").find_all("tr")
    }
    assert (
        prov["alpha"].find("td", class_="image_id").text == doc["provenance"]["alpha"]["image_id"]
    )
    assert dom.find("span", id="error-method").text == doc["method"]["error_bars"]


def test_screenshot(page, tmp_path: Path):
    _, _, out = page
    shot = out / "leaderboard.png"
    chromium(
        tmp_path, f"--screenshot={shot}", "--window-size=1200,900", (out / "index.html").as_uri()
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    print(f"\nscreenshot: {shot}")
    if SAVE_EXAMPLE_SCREENSHOT:
        shutil.copyfile(shot, REPO / "docs" / "leaderboard-example.png")
