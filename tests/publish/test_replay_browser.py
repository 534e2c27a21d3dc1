"""The replay viewer in a real headless Chromium, opened from file://.

The expected states come from the engine here, independently of the viewer's own
step builder: for every step of a sample game per preset and every seat view, the
page must show that seat's cards as the engine's ``view(seat)`` holds them, and no
face-up card anywhere that the seat could not know.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chromium_run import chromium
from publish_dom import Node, parse
from replay_records import HOSTILE_NAME, HOSTILE_VERSION, SAMPLES, record

from arena.publish.steps import game_steps
from arena.publish.viewer import standalone_html
from arena_sdk.engine import CARDS, GameState, replay_record, seat_name

REPO = Path(__file__).resolve().parents[2]


def names(cards: Any) -> list[str]:
    return sorted(CARDS[int(c)].name for c in cards)


def mask_names(mask: int) -> list[str]:
    return sorted(CARDS[c].name for c in range(52) if mask >> c & 1)


def table_line(bids: Any, blind: Any, tricks: Any, n: int) -> dict[str, Any]:
    """Each seat's bid, nil badge and tricks as the page should print them."""
    out = {}
    for s in range(n):
        bid = bids[s]
        badge = ["blind nil"] if blind[s] else ["nil"] if bid == 0 else []
        out[seat_name(n, s)] = {
            "bid": "bid –" if bid is None else f"bid {bid}", "badges": badge, "tricks": tricks[s],
        }  # fmt: skip
    return out


def snapshot(state: GameState) -> dict[str, Any]:
    """What each seat may see now (from ``view``), and the true hands."""
    n = state.players
    out: dict[str, Any] = {"all": {}, "scores": [str(s) for s in state.scores]}
    out["bags"] = [str(b) for b in state.bags]
    out["broken"] = "true" if state.spades_broken else "false"
    out["line"] = table_line(state.bids, state.blind, state.tricks_won, n)
    for s in range(n):
        v = state.view(s)
        own = names(v.hand) if v.hand is not None else []
        played = {c.name for t in v.tricks for c in t.cards} | {c.name for _, c in v.current_trick}
        allowed = set(own) | played | {c.name for c in v.seen_discards}
        if v.offered_card is not None:
            allowed.add(v.offered_card.name)
        out[seat_name(n, s)] = {"own": own, "allowed": allowed}
        out["all"][seat_name(n, s)] = mask_names(state.hands[s])
    return out


def hand_end(prev: dict[str, Any], state: GameState) -> dict[str, Any]:
    """Just after a hand's last card: every hand empty, the last trick now seen by all."""
    n = state.players
    last = {c.name for c in state.hand_results[-1].played[-1].cards}
    result = state.hand_results[-1]
    out: dict[str, Any] = {
        "all": {seat_name(n, s): [] for s in range(n)},
        "scores": [str(t.score_after) for t in result.teams],
        "bags": [str(t.bags_after) for t in result.teams],
        "broken": None,  # not checked at a hand's end: the engine has reset it for the next hand
        "line": table_line(result.bids, result.blind, result.tricks, n),
    }
    for s in range(n):
        seat = seat_name(n, s)
        out[seat] = {"own": [], "allowed": prev[seat]["allowed"] | last}
    return out


def expected_steps(rec: dict[str, Any]) -> list[dict[str, Any]]:
    final = replay_record(rec).state
    state = GameState.new(
        final.rules, final.seed, first=final.first_of_game, scores=final.start_scores,
        bags=final.start_bags, decks=final.deck_log,
    )  # fmt: skip
    out = [snapshot(state)]
    for entry in final.history:
        finished = len(state.hand_results)
        state.apply(entry.action)
        if len(state.hand_results) > finished:
            out.append(hand_end(out[-1], state))
            if not state.is_over:
                out.append(snapshot(state))
        else:
            out.append(snapshot(state))
    out.append(out[-1])  # the end step
    return out


def dump(tmp: Path, page: Path, fragment: str = "", *extra: str) -> Node:
    proc = chromium(tmp, *extra, "--dump-dom", page.as_uri() + (f"#{fragment}" if fragment else ""))
    return parse(proc.stdout)


def viewer_of(dom: Node) -> Node:
    return dom.find("div", class_="viewer")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, Path]]:
    out = tmp_path_factory.mktemp("replays")
    result = {}
    for preset, seed, kw in SAMPLES:
        rec = record(preset, seed, names=(HOSTILE_NAME, "beta"), **kw)
        path = out / f"{rec['game_id']}.html"
        path.write_text(standalone_html(game_steps(rec)), encoding="utf-8")
        result[rec["game_id"]] = (rec, path)
    return result


@pytest.mark.parametrize("game", [f"{p}-{s}{'-forfeit' if kw else ''}" for p, s, kw in SAMPLES])
def test_each_seat_sees_exactly_what_the_engine_lets_it_see(pages, tmp_path: Path, game: str):
    rec, page = pages[game]
    dom = dump(tmp_path, page, "audit")
    audit = json.loads(dom.find("pre", id="audit").text)
    expected = expected_steps(rec)
    assert len(audit) == len(expected)
    n = rec["ruleset"]["players"]
    seats = [seat_name(n, s) for s in range(n)]
    checked = 0
    for i, (shown, want) in enumerate(zip(audit, expected, strict=True)):
        all_hands = {s: sorted(c) for s, c in shown["all"]["hands"].items()}
        assert all_hands == want["all"], f"step {i}: all hands"
        assert shown["all"]["scores"] == want["scores"], f"step {i}: scores"
        assert shown["all"]["bags"] == want["bags"], f"step {i}: bags"
        if want["broken"] is not None:
            assert shown["all"]["broken"] == want["broken"], f"step {i}: spades broken"
        for seat, line in want["line"].items():
            got = shown["all"]["seats"][seat]
            assert got["bid"] == line["bid"], f"step {i} {seat}: bid"
            assert got["tricks"].endswith(f"tricks {line['tricks']}"), f"step {i} {seat}: tricks"
            nil_badges = [b for b in got["badges"] if b in ("nil", "blind nil")]
            assert nil_badges == line["badges"], f"step {i} {seat}: nil badge"
        for seat in seats:
            view = shown[seat]
            assert sorted(view["hands"][seat]) == want[seat]["own"], f"step {i} {seat}: own hand"
            for other in seats:
                if other != seat:
                    assert view["hands"][other] == [], f"step {i} {seat} sees {other}'s hand"
            hidden = set(view["faces"]) - want[seat]["allowed"]
            assert not hidden, f"step {i}: {seat} is shown cards it cannot know: {hidden}"
            checked += 1
    assert checked == len(expected) * n


def test_the_samples_hold_nil_and_blind_nil_bids(pages):
    """So the badge checks above meet both kinds of nil (else they would check nothing)."""
    kinds = set()
    for rec, _ in pages.values():
        for hand in replay_record(rec).state.hand_results:
            kinds |= {"blind" if b else "nil" for bid, b in zip(hand.bids, hand.blind) if bid == 0}
    assert kinds == {"nil", "blind"}


def test_stepping_forward_and_back(pages, tmp_path: Path):
    rec, page = pages["pagat-11"]
    data = game_steps(rec)
    first_card = data["hands"][0]["tricks"][0]
    cases = {
        "next,next,prev": 1,
        "key:ArrowRight,key:ArrowRight,key:ArrowRight,key:ArrowLeft": 2,
        "next-trick": first_card,
        "next-trick,next-trick": data["hands"][0]["tricks"][1],
        "next-trick,next-trick,prev-trick": first_card,
        "key:ArrowDown": first_card,
        "next-hand": data["hands"][1]["step"],
        "key:PageDown,key:PageUp": 0,
        "key:End,key:Home,next": 1,
        "last,prev": len(data["steps"]) - 2,
        "prev": 0,
        "last,next": len(data["steps"]) - 1,
    }
    dom = dump(tmp_path, page, "runs=" + "|".join(cases))
    assert json.loads(dom.find("pre", id="runs").text) == list(cases.values())
    # Jumping to a hand from the address, as the hand selector does.
    assert viewer_of(dump(tmp_path, page, "hand=2")).attrs["data-step"] == str(data["hands"][1]["step"])


def test_trick_scores_and_breakdown_at_a_hand_end(pages, tmp_path: Path):
    rec, page = pages["pagat-11"]
    state = replay_record(rec).state
    hand = state.hand_results[0]
    data = game_steps(rec)
    end = data["hands"][1]["step"] - 1  # the step of hand 1's last card
    dom = dump(tmp_path, page, f"step={end + 1}")
    trick = dom.find("div", class_="trick").find_all("div", class_="played")
    last = hand.played[-1]
    assert [p.find("span", class_="card").attrs["data-card"] for p in trick] == [c.name for c in last.cards]
    winner = [p for p in trick if "winner" in p.classes]
    assert [w.attrs["data-seat"] for w in winner] == [seat_name(4, last.winner)]
    assert [p.attrs["data-seat"] for p in trick if "leader" in p.classes] == [seat_name(4, last.leader)]
    scores = {tr.attrs["data-team"]: tr.find("td", class_="score").text
              for tr in dom.find("table", class_="scores").find_all("tr") if "data-team" in tr.attrs}  # fmt: skip
    assert scores == {"NS": str(hand.teams[0].score_after), "EW": str(hand.teams[1].score_after)}
    rows = {tr.attrs["data-row"]: tr for tr in dom.find("table", class_="breakdown").find_all("tr")
            if "data-row" in tr.attrs}  # fmt: skip
    assert {"contract", "nil", "bags", "penalties", "score"} <= set(rows)
    cells = rows["score"].find_all("td")
    assert cells[1].text == f"{hand.teams[0].score_before} → {hand.teams[0].score_after}"
    # One card back: the trick is not complete, no breakdown yet, the hand not over.
    dom = dump(tmp_path, page, f"step={end + 1}&do=prev")
    assert len(dom.find("div", class_="trick").find_all("div", class_="played")) == 3
    assert not dom.find_all("table", class_="breakdown")


def test_marks_decision_times_and_forfeit(pages, tmp_path: Path):
    rec, page = pages["two-player-15-forfeit"]
    data = game_steps(rec)
    steps = data["steps"]
    default_step = next(i for i, s in enumerate(steps) if s.get("a") and s["a"].get("def"))
    dom = dump(tmp_path, page, f"step={default_step + 1}")
    marks = [m.attrs["data-mark"] for m in dom.find_all("div", class_="mark")]
    assert "timeout" in marks
    action = dom.find("div", class_="action")
    assert " ms" in action.find("span", class_="time").text
    dom = dump(tmp_path, page, "do=last")
    marks = {m.attrs["data-mark"]: m.text for m in dom.find_all("div", class_="mark")}
    assert "forfeit" in marks and "no answer within the hard cap" in marks["forfeit"]
    assert "at the seat's decision 7" in marks["forfeit"]
    assert "forfeit:timeout" in dom.find("p", class_="end").text
    # The stale answer (request 3) is marked at its decision.
    ev_step = next(i for i, s in enumerate(steps) if any(m[0] == "event" for m in s.get("e") or []))
    dom = dump(tmp_path, page, f"step={ev_step + 1}")
    assert any("stale_answer" in m.text for m in dom.find_all("div", class_="mark"))


def test_cpu_time_is_shown_when_the_record_has_it(pages, tmp_path: Path):
    """Records may carry ``cpu_ms`` per decision: the step data keeps it and the page shows it."""
    rec, _ = pages["pagat-11"]
    data = game_steps(rec)
    step = next(i for i, s in enumerate(data["steps"]) if s.get("a"))
    data["steps"][step]["a"]["cpu"] = 12.5  # as game_steps writes a record's cpu_ms
    page = tmp_path / "cpu.html"
    page.write_text(standalone_html(data), encoding="utf-8")
    dom = dump(tmp_path, page, f"step={step + 1}")
    assert "cpu 12.5 ms" in dom.find("div", class_="action").text


def test_play_pause(pages, tmp_path: Path):
    _, page = pages["pagat-11"]
    dom = dump(tmp_path, page, "do=play", "--virtual-time-budget=5000")
    viewer = viewer_of(dom)
    assert viewer.attrs["data-playing"] == "true" and int(viewer.attrs["data-step"]) >= 3
    dom = dump(tmp_path, page, "do=play,play", "--virtual-time-budget=5000")
    assert viewer_of(dom).attrs["data-step"] == "0"


def test_hostile_names_are_text(pages, tmp_path: Path):
    _, page = pages["two-player-14"]
    dom = dump(tmp_path, page, "seat=A")
    assert dom.find("title").text == "Replay of two-player-14"
    assert not dom.find_all("img") and not dom.find_all("b", id="injected")
    bots = [n.text for n in dom.find_all("span", class_="bot-name")]
    assert HOSTILE_NAME in bots
    assert HOSTILE_VERSION in [n.text for n in dom.find_all("span", class_="version")]
    # Only the page's own two scripts: the data block and the viewer.
    assert len(dom.find_all("script")) == 2


def test_standalone_page_loads_nothing(pages):
    _, page = pages["pagat-11"]
    text = page.read_text()
    assert "<link" not in text and "<script src" not in text and "http://" not in text
    assert "https://" not in text and "@import" not in text
    assert "default-src 'none'" in text


#: Set to True (locally) to refresh the viewer screenshots in docs/ from this test.
SAVE_DOCS_SCREENSHOTS = False


@pytest.mark.parametrize(
    ("name", "preset", "seed", "fragment", "size"),
    [
        ("replay-all.png", "pagat", 11, "hand=2&do=next-trick,next-trick,next-trick,next,next", "1300,660"),
        ("replay-seat.png", "pagat", 11, "hand=2&do=next-trick,next-trick,next-trick,next,next&seat=N", "1300,660"),
        ("replay-two-player.png", "two-player", 14, "step=10&seat=B", "1300,600"),
    ],
)
def test_screenshots(tmp_path: Path, name: str, preset: str, seed: int, fragment: str, size: str):
    rec = record(preset, seed, names=("heuristic", "greedy"))
    for seat in rec["seats"].values():
        seat["version"] = "1.0"
    page = tmp_path / "game.html"
    page.write_text(standalone_html(game_steps(rec)), encoding="utf-8")
    shot = tmp_path / name
    chromium(tmp_path, "--hide-scrollbars", f"--screenshot={shot}", f"--window-size={size}",
             page.as_uri() + "#" + fragment)  # fmt: skip
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    if SAVE_DOCS_SCREENSHOTS:
        (REPO / "docs" / name).write_bytes(data)
