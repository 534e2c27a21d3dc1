"""``arena ratings publish`` with records: games.html, a replay page per game, a page per
duplicate pair, crosstable links, in headless Chromium from file://."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from chromium_run import chromium
from publish_dom import Node, parse
from replay_records import HOSTILE_NAME, record

from arena.publish import GameRow, Standings, results_from_games, write_outputs
from arena.publish.games import game_page, pair_page
from arena.ratings import fit

EVIL = '<img src=x onerror=alert(1)> "quoted" & co'
ENTRIES = ("alpha", "beta", EVIL)


def _tournament(src: Path) -> Standings:
    """Three entries, two deals per pairing at two tables; one record is broken, one missing."""
    games: list[GameRow] = []
    pairings = [(a, b) for i, a in enumerate(ENTRIES) for b in ENTRIES[i + 1 :]]
    (src / "records").mkdir()
    for p, (a, b) in enumerate(pairings):
        for deal in range(2):
            for table, (s0, s1) in enumerate(((a, b), (b, a)), 1):
                gid = f"p{p:03d}-d{deal:03d}-t{table}"
                rec = record("pagat", 100 + 10 * p + deal, names=(s0, HOSTILE_NAME), max_hands=1)
                rec["game_id"] = gid
                path = src / "records" / f"{gid}.json"
                path.write_text(json.dumps(rec))
                won = rec["result"]["winner"] == "NS"
                games.append(
                    GameRow(gid, s0, s1, 1.0 if won else 0.0, rec["result"]["ending"],
                            f"p{p:03d}-d{deal:03d}", rec["result"]["scores"]["NS"],
                            rec["result"]["scores"]["EW"], pairing=p, deal=deal, table=table,
                            record=f"records/{gid}.json")  # fmt: skip
                )
    (src / "records" / "p001-d001-t2.json").write_text('{"format": "nope"}')
    (src / "records" / "p002-d001-t1.json").unlink()
    return Standings(
        title="Cup", ruleset_preset="pagat", ruleset_hash="x" * 16, entries=list(ENTRIES),
        results=results_from_games(games), games=games,
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Standings, Path, dict]:
    src = tmp_path_factory.mktemp("tournament")
    out = tmp_path_factory.mktemp("site")
    standings = _tournament(src)
    paths = write_outputs(standings, fit(standings.results), out, records_dir=src)
    return standings, out, {**paths, "records_dir": src}


def dom_of(tmp: Path, page: Path, fragment: str = "") -> Node:
    return parse(chromium(tmp, "--dump-dom", page.as_uri() + fragment).stdout)


def test_games_page_lists_every_game_with_its_links(site, tmp_path: Path):
    standings, out, paths = site
    assert paths["games"] == out / "games.html"
    dom = dom_of(tmp_path, paths["games"])
    rows = {r.attrs["data-game"]: r for r in dom.find_all("tr") if "data-game" in r.attrs}
    assert set(rows) == {g.game_id for g in standings.games}
    for g in standings.games:
        row = rows[g.game_id]
        cells = [td.text for td in row.find_all("td")]
        assert cells[1:6] == [g.entry_a, g.entry_b, str(g.deal), str(g.table), g.ending]
        assert cells[7] == f"{g.scores_a} : {g.scores_b}"
        links = row.find_all("a", class_="replay")
        if g.game_id in ("p001-d001-t2", "p002-d001-t1"):
            assert not links and "record" in row.text  # listed, with the reason
            continue
        assert links[0].attrs["href"] == game_page(g)
        assert (out / links[0].attrs["href"]).is_file()
        pair = row.find_all("a", class_="pair")
        if g.cluster in ("p001-d001", "p002-d001"):
            assert not pair
        else:
            assert pair[0].attrs["href"] == pair_page(g.cluster) and (out / pair_page(g.cluster)).is_file()
    assert not dom.find_all("img")
    # One script, inline (sorting by swing), admitted by its hash: no other script can run.
    scripts = dom.find_all("script")
    assert len(scripts) == 1 and "src" not in scripts[0].attrs
    csp = html.unescape(paths["games"].read_text())
    assert "script-src 'sha256-" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split('"')[0]


def test_crosstable_cells_link_to_the_pairings_games(site, tmp_path: Path):
    _, out, paths = site
    dom = dom_of(tmp_path, paths["html"])
    games = dom_of(tmp_path, paths["games"])
    anchors = {h.attrs["id"]: h.text for h in games.find_all("h2") if "id" in h.attrs}
    cells = dom.find("table", id="crosstable").find_all("td", class_="pair")
    assert len(cells) == 6
    for td in cells:
        href = td.find("a").attrs["href"]
        page, _, anchor = href.partition("#")
        assert page == "games.html" and anchor in anchors
        row = next(r for r in dom.find("table", id="crosstable").find_all("tr") if td in r.iter())
        names = {row.attrs["data-entry"], td.attrs["data-opponent"]}
        assert anchors[anchor] in {f"{a} vs {b}" for a in names for b in names if a != b}


def test_replay_and_pair_pages_run_from_file_urls(site, tmp_path: Path):
    standings, out, _ = site
    game = standings.games[0]
    dom = dom_of(tmp_path, out / game_page(game), "#step=5")
    viewers = dom.find_all("div", class_="viewer")
    assert len(viewers) == 1 and viewers[0].attrs["data-step"] == "4"  # step 5 as shown: index 4
    assert HOSTILE_NAME in [n.text for n in dom.find_all("span", class_="bot-name")]
    assert not dom.find_all("img")
    # Shared script and style, loaded by relative path (works from disk).
    scripts = [s.attrs.get("src") for s in dom.find_all("script") if s.attrs.get("src")]
    assert scripts == ["replay.js"] and (out / "games" / "replay.js").is_file()
    # The pair page frames both games' pages (no copy of their data) and moves them together.
    pair_path = out / pair_page(game.cluster)
    pair = parse(chromium(tmp_path, "--virtual-time-budget=8000", "--dump-dom",
                          pair_path.as_uri() + "#do=next-trick,next-trick").stdout)  # fmt: skip
    frames = pair.find_all("iframe")
    assert [f.attrs["src"] for f in frames] == [
        f"{Path(game_page(g)).name}#embed" for g in standings.games[:2]
    ]
    assert len(pair_path.read_text()) < 3000
    status = pair.find("p", id="pair-status")
    left, right = (game_steps_of(out / game_page(g)) for g in standings.games[:2])
    assert status.attrs["data-left-step"] == str(left["hands"][0]["tricks"][1])
    assert status.attrs["data-right-step"] == str(right["hands"][0]["tricks"][1])
    assert pair.find("div", id="pair-controls").find_all("button")
    # Same deal at both tables: the same cards in the same seats at the start.
    assert left["steps"][0]["h0"] == right["steps"][0]["h0"]
    assert [left["steps"][0][f"h{s}"] for s in range(4)] == [right["steps"][0][f"h{s}"] for s in range(4)]


def game_steps_of(page: Path) -> dict:
    """The step data a published replay page carries."""
    text = page.read_text()
    start = text.index('class="game-data"')
    body = text[text.index(">", start) + 1 : text.index("</script>", start)]
    return json.loads(body)


def test_publishing_again_keeps_fresh_pages(site, tmp_path: Path):
    standings, out, _ = site
    src = site[2]["records_dir"]
    kept, redone = out / game_page(standings.games[0]), out / game_page(standings.games[4])
    times = kept.stat().st_mtime_ns, redone.stat().st_mtime_ns
    record = src / standings.games[4].record
    record.write_text(record.read_text())  # a newer record: its pair is rebuilt
    write_outputs(standings, fit(standings.results), out, records_dir=src)
    assert kept.stat().st_mtime_ns == times[0]
    assert redone.stat().st_mtime_ns > times[1]
