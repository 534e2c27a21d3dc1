"""Per-deal "vs the field" (issue 26): each duplicate deal's swing in games.html (sortable by
it, in Chromium from file://) and on the pair page."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from chromium_run import chromium
from publish_dom import Node, parse
from test_games_pages import _tournament

from arena.publish import GameRow, Standings, write_outputs
from arena.publish.games import deal_swing, pair_page
from arena.ratings import fit


def test_the_swing_is_the_margin_over_both_tables() -> None:
    t1 = GameRow("d1-t1", "A", "B", 1.0, "target", "d1", 520, 310)  # A +210 at table 1
    t2 = GameRow("d1-t2", "B", "A", 1.0, "target", "d1", 505, 450)  # A -55 at table 2
    assert deal_swing([t1, t2], "A") == 210 - 55
    assert deal_swing([t1, t2], "B") == -(210 - 55)
    assert deal_swing([t2, t1], "A") == 155, "the order of the tables does not matter"
    void = GameRow("d1-t2", "B", "A", 0.5, "void:platform", "d1", 0, 0)
    assert deal_swing([t1, void], "A") is None
    assert deal_swing([t1], "A") is None
    same_sides = GameRow("d1-t2", "A", "B", 1.0, "target", "d1", 505, 450)
    assert deal_swing([t1, same_sides], "A") is None, "not a duplicate deal: the sides did not swap"
    assert deal_swing([t1, t2], "C") is None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Standings, Path]:
    src = tmp_path_factory.mktemp("tournament")
    out = tmp_path_factory.mktemp("site")
    standings = _tournament(src)
    # The sample's two tables replay one record, so every swing would be 0: shift table 2's
    # points deal by deal (the swing is computed from the listed points, not the records).
    shifted = [
        dataclasses.replace(g, scores_a=g.scores_a + 37 * ((k * 5) % 7 - 3))
        if g.table == 2 else g
        for k, g in enumerate(standings.games)
    ]
    standings = dataclasses.replace(standings, games=shifted)
    write_outputs(standings, fit(standings.results), out, records_dir=src)
    return standings, out


def dom_of(tmp: Path, page: Path, fragment: str = "") -> Node:
    return parse(chromium(tmp, "--dump-dom", page.as_uri() + fragment).stdout)


def expected_swing(standings: Standings, game: GameRow, first: str) -> int:
    deal = [g for g in standings.games if g.cluster == game.cluster]
    a, b = deal
    return sum(
        (g.scores_a - g.scores_b) if g.entry_a == first else (g.scores_b - g.scores_a) for g in (a, b)
    )


def tables(dom: Node) -> list[tuple[str, list[Node]]]:
    """Each pairing's heading text (its first entry) and its rows, in page order."""
    out = []
    for table in dom.find_all("table", class_="games"):
        heading = table.find("th", class_="swing").text
        out.append((heading, [r for r in table.find_all("tr") if "data-game" in r.attrs]))
    return out


def test_games_page_shows_each_deals_swing_and_sorts_by_it(site, tmp_path: Path) -> None:
    standings, out = site
    games = {g.game_id: g for g in standings.games}
    listed = dom_of(tmp_path, out / "games.html")
    listed_order = []
    for heading, rows in tables(listed):
        first = heading.removeprefix("Swing for ")
        assert first in {games[r.attrs["data-game"]].entry_a for r in rows} | {
            games[r.attrs["data-game"]].entry_b for r in rows
        }
        for row in rows:
            g = games[row.attrs["data-game"]]
            swing = expected_swing(standings, g, first)
            assert row.attrs["data-swing"] == str(swing)
            assert row.find("td", class_="swing").text == f"{swing:+d}"
        listed_order.append([r.attrs["data-game"] for r in rows])
    assert any(int(r.attrs["data-swing"]) != 0 for _, rows in tables(listed) for r in rows)
    for fragment, sign in (("#sort=swing", 1), ("#sort=-swing", -1)):
        dom = dom_of(tmp_path, out / "games.html", fragment)
        for (heading, rows), before in zip(tables(dom), listed_order, strict=True):
            ids = [r.attrs["data-game"] for r in rows]
            assert sorted(ids) == sorted(before), "the same games, reordered"
            swings = [sign * int(r.attrs["data-swing"]) for r in rows]
            assert swings == sorted(swings), (fragment, heading, swings)
            clusters = [r.attrs["data-cluster"] for r in rows]
            assert all(clusters[i] == clusters[i + 1] for i in range(0, len(clusters), 2)), "a deal's games stay together"
        th = dom.find("th", class_="swing")
        assert th.attrs["aria-sort"] == ("ascending" if sign == 1 else "descending")
        assert "sortable" in th.classes, "the script ran (the CSP admits it by its hash)"


def test_pair_page_states_the_swing(site, tmp_path: Path) -> None:
    standings, out = site
    left, right = standings.games[0], standings.games[1]
    assert left.cluster == right.cluster
    dom = dom_of(tmp_path, out / pair_page(left.cluster))
    line = dom.find("p", class_="swing")
    swing = expected_swing(standings, left, left.entry_a)
    assert line.attrs["data-swing"] == str(swing) and line.attrs["data-entry"] == left.entry_a
    assert f"{abs(swing)}" in line.text and ("gained" if swing >= 0 else "lost") in line.text
