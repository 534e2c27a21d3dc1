"""The viewer marks a struck decision with its index and the referee's reason (issue 26).

A record as the referee writes it (the strike entry carries ``decision`` and
``reason``, see tests/cli/test_strike_reproduce.py for the referee's side),
opened in headless Chromium at the step of that decision: the page names the
seat's decision K, the one ``python -m arena_sdk.testing ... --decision K``
asks again, and says why the answer was struck.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chromium_run import chromium
from publish_dom import parse
from replay_records import record

from arena.publish.steps import game_steps
from arena.publish.viewer import standalone_html

REASON = "E does not hold C2"


def _struck_record() -> tuple[dict[str, Any], int]:
    """A record with E's decision 5 struck as illegal; returns it and that action's index in the game."""
    rec = record("pagat", 11, names=("alpha", "beta"))
    actions = [a for h in rec["hands"] for a in h["actions"]]
    for a in actions:  # only the one strike of this test
        for key in ("default", "answer", "decision", "reason"):
            a.pop(key, None)
    mine = [i for i, a in enumerate(actions) if a["seat"] == "E"]
    index = mine[5]
    actions[index].update(default="illegal", answer="card C2", decision=5, reason=REASON)
    rec["strikes"]["E"] = 1
    return rec, index


def test_the_struck_decision_is_named_at_its_step_with_the_reason(tmp_path: Path) -> None:
    rec, _ = _struck_record()
    data = game_steps(rec)
    # The step whose mark is the strike (steps are deltas: a step without "e" keeps none).
    struck = [i for i, st in enumerate(data["steps"]) if any(m[0] == "strike" for m in st.get("e") or [])]
    assert len(struck) == 1, struck
    page = tmp_path / "game.html"
    page.write_text(standalone_html(data), encoding="utf-8")
    dom = parse(chromium(tmp_path, "--dump-dom", f"{page.as_uri()}#step={struck[0] + 1}").stdout)
    viewer = dom.find("div", class_="viewer")
    marks = [m.text for m in viewer.find_all("div", class_="mark") if m.attrs.get("data-mark") == "strike"]
    assert len(marks) == 1, viewer.text
    assert "decision 5" in marks[0] and REASON in marks[0], marks[0]
    assert "E" in marks[0]
