"""The table's pieces without a browser: the true view, the game's length, the opening bid, the
comparison explained, the statistics file."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from arena_sdk.engine import resolve_ruleset
from arena_sdk.wire import arena_pb2 as pb

from arena.play.explain import explained, first_divergence, swing_parts, trick_rows
from arena.play.seat import HandEnd
from arena.play.stats import PlayStats, StatsError, check_person, summarise
from arena.play.views import game_length, opening_bid, table_view_json, totals_json


def _team(name: str, contract: int, tricks: int, points: int, *, bags: int = 0, nil: list | None = None,
          penalty: int = 0) -> dict:  # fmt: skip
    nil = nil or []
    made = tricks >= contract
    contract_points = (10 if made else -10) * contract
    return {"name": name, "contract": contract, "tricks": tricks, "made": made, "contract_points": contract_points,
            "bags": bags, "bag_points": bags, "nil": nil, "penalty_points": penalty, "points": points,
            "score_before": 0, "score_after": points, "bags_before": 0, "bags_after": bags}  # fmt: skip


def test_a_finished_hand_shows_no_card_left_and_every_trick() -> None:
    view = pb.SeatView(seat=2, hand_number=3, hand=["SA"], bids=[2, 3, 4, 1], tricks_won=[3, 3, 3, 3],
                       scores=[100, 50], bags=[1, 2])  # fmt: skip
    for i in range(12):
        view.tricks.add(leader=0, cards=["C2", "C3", "C4", "C5"], winner=0)
    names = ["N", "E", "S", "W"]
    hand = HandEnd(3, 1, {"tricks": dict(zip(names, [4, 3, 3, 3])), "bids": dict(zip(names, [2, 3, 4, 1]))},
                   [(0, ["C2", "C3", "C4", "C5"])] * 12 + [(1, ["D2", "D3", "SA", "D5"])], (180, 20), (3, 4),
                   winners=(0,) * 12 + (2,))  # fmt: skip
    shown = table_view_json(view, [hand], None)
    assert shown["hand"] == [] and shown["hand_over"] and len(shown["tricks"]) == 13
    assert shown["tricks"][-1] == {"leader": 1, "cards": ["D2", "D3", "SA", "D5"], "winner": 2}
    assert shown["tricks_won"] == [4, 3, 3, 3]
    # The scores are the hand's end's, not the hand's start's.
    assert totals_json(view, [hand], None) == {"scores": [180, 20], "bags": [3, 4]}
    # Mid-hand, a card just played leaves the hand for the table.
    playing = table_view_json(view, [], (2, "SA"))
    assert playing["hand"] == [] and playing["current_trick"][-1] == {"seat": 2, "card": "SA"}
    assert totals_json(view, [], None) == {"scores": [100, 50], "bags": [1, 2]}


def test_the_game_length_is_the_real_one() -> None:
    assert game_length(resolve_ruleset("pagat", {})) == "first to 500"
    assert game_length(resolve_ruleset("pagat", {"max_hands": "3"})) == "3 hands, or first to 500"
    assert game_length(resolve_ruleset("pagat", {"max_hands": "1"})) == "1 hand, or first to 500"
    assert game_length(resolve_ruleset("pagat", {"max_hands": "40"})) == "first to 500, at most 40 hands"


def test_the_bid_focus_starts_on_the_hands_count_never_on_nil() -> None:
    legal = tuple(str(b) for b in range(14))
    weak = pb.SeatView(seat=2, hand=["C2", "C3", "C4", "D2", "D3", "D4", "H2", "H3", "H4", "H5", "S2", "S3", "D5"], bids=[-1] * 4)
    strong = pb.SeatView(seat=2, hand=["SA", "SK", "SQ", "SJ", "ST", "S9", "HA", "DA", "CA", "HK", "DK", "CK", "S8"], bids=[-1] * 4)
    assert opening_bid(weak, legal) == "1"
    assert int(opening_bid(strong, legal)) >= 8
    assert opening_bid(weak, ("0", "4", "5")) == "4"
    assert opening_bid(weak, ("0",)) is None


def test_the_swing_is_split_by_where_it_came_from() -> None:
    seat, players = 2, 4  # S: side NS, team 0
    yours = [_team("NS", 7, 5, -70), _team("EW", 5, 8, 53, bags=3)]
    bots = [_team("NS", 7, 7, 70), _team("EW", 5, 6, 51, bags=1)]
    parts = swing_parts(players, seat, yours, bots)
    swing = (70 - 51) - (-70 - 53)
    assert sum(parts.values()) == swing and parts["contract"] == 140 and parts["bags"] == 2
    nil_yours = [_team("NS", 4, 4, 140, nil=[{"seat": 2, "kind": "nil", "made": True, "points": 100}]), _team("EW", 5, 9, 54, bags=4)]
    nil_bots = [_team("NS", 4, 5, -59, bags=1, nil=[{"seat": 2, "kind": "nil", "made": False, "points": -100}]), _team("EW", 5, 8, 53, bags=3)]
    parts = swing_parts(players, seat, nil_yours, nil_bots)
    assert parts["nil"] == -200 and sum(parts.values()) == (-59 - 53) - (140 - 54)
    hand = {"you": {"bid": 0, "blind": False, "side_points": 140, "other_points": 54}, "teams": nil_yours,
            "tricks_played": [{"leader": 0, "cards": ["C2", "C3", "C4", "C5"], "winner": 3}]}  # fmt: skip
    comparison = {"bot": "hard", "bid": 0, "blind": False, "teams": nil_bots, "margin": -112,
                  "hand_tricks": [{"leader": 0, "cards": ["C2", "C3", "CA", "C5"], "winner": 2}]}  # fmt: skip
    shown = explained(players, seat, hand, comparison)
    assert shown["divergence"] == {"at": "trick", "trick": 1, "yours": "C4", "bot": "CA"}
    assert shown["rows"][0]["bot"]["won"] and not shown["rows"][0]["yours"]["won"]
    lines = shown["explain"]
    assert "Nil -200: your side: nil made (+100) with you, nil failed (-100) with Hard" in lines
    assert not any(line.startswith("Contract") for line in lines)  # the same contract points either way
    assert first_divergence({"you": {"bid": 3, "blind": False}}, {"bid": 4, "blind": False}, []) == {"at": "bid", "yours": 3, "bot": 4}
    assert trick_rows(players, seat, [], []) == []


def test_statistics_are_kept_per_person_counted_once_and_a_bad_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "stats.json"
    alice = PlayStats(path, "alice")
    hand = {"bid": 3, "blind": False, "tricks": 3, "made": True, "bags": 1, "points": 61, "other_points": 40,
            "players": 4, "assisted": False}  # fmt: skip
    alice.add_hand("g1", 1, hand)
    alice.add_hand("g1", 1, hand)  # the same hand again: counted once
    alice.add_swing("g1", 1, 20)
    alice.add_hand("g1", 2, {**hand, "bid": 0, "tricks": 0, "assisted": True})
    alice.add_hand("g1", 3, {**hand, "bid": 4, "tricks": 2, "made": False, "bags": 0})
    alice.add_game("g1", {"won": True, "ending": "target", "assisted": True})
    bob = PlayStats(path, "bob")
    bob.add_hand("g2", 1, hand)
    summary = PlayStats(path, "alice").summary()
    assert summary["hands"] == 3 and summary["games"] == 1 and summary["won"] == 1
    assert summary["bids"] == 2 and summary["exact_bids"] == 1 and summary["bid_accuracy"] == 0.5 and summary["off_by"] == 1
    assert summary["nils"] == 1 and summary["nil_success"] == 1.0
    assert summary["swing_vs_hard"] == 20 and summary["swing_hands"] == 1 and summary["assisted_hands"] == 1
    assert summarise("bob", json.loads(path.read_text())["people"]["bob"])["hands"] == 1
    # Two tables writing at once lose nothing (each update re-reads the file under its lock).
    threads = [threading.Thread(target=lambda k=k: PlayStats(path, "carol").add_hand("g3", k, hand)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert PlayStats(path, "carol").summary()["hands"] == 8
    # A file that is not ours: said, and never overwritten.
    path.write_text("{not json")
    with pytest.raises(StatsError, match="not JSON"):
        PlayStats(path, "alice")
    assert path.read_text() == "{not json"
    with pytest.raises(StatsError, match="--player"):
        check_person("")
