"""``#step=N`` opens the step the page shows as "step N" (issue 26: it was one further on)."""

from __future__ import annotations

from pathlib import Path

from chromium_run import chromium
from publish_dom import Node, parse
from replay_records import record

from arena.publish.steps import game_steps
from arena.publish.viewer import standalone_html


def opened_at(tmp: Path, page: Path, fragment: str) -> Node:
    dom = parse(chromium(tmp, "--dump-dom", f"{page.as_uri()}#{fragment}").stdout)
    return dom.find("div", class_="viewer")


def test_step_n_in_the_address_is_the_step_shown_as_n(tmp_path: Path) -> None:
    rec = record("pagat", 11, names=("alpha", "beta"))
    data = game_steps(rec)
    page = tmp_path / "game.html"
    page.write_text(standalone_html(data), encoding="utf-8")
    total = len(data["steps"])
    for shown in (1, 5, total):
        viewer = opened_at(tmp_path, page, f"step={shown}")
        assert viewer.attrs["data-step"] == str(shown - 1)
        position = viewer.find("span", class_="position").text
        assert f"step {shown} / {total}" in position, position
    # Out of range: the first and the last step, as the buttons would.
    assert opened_at(tmp_path, page, "step=0").attrs["data-step"] == "0"
    assert opened_at(tmp_path, page, f"step={total + 9}").attrs["data-step"] == str(total - 1)
