"""Rulesets (presets, overrides, hashes, bad values) and card text/index forms."""

from __future__ import annotations

import pytest

from arena_sdk.engine import (
    CARDS,
    PRESETS,
    Card,
    MalformedInputError,
    Ruleset,
    RulesError,
    cards_of,
    mask_of,
    parse_card,
    parse_overrides,
    resolve_ruleset,
)


def test_presets_match_the_rule_book():
    assert resolve_ruleset() == PRESETS["pagat"]
    w = resolve_ruleset("wikipedia")
    assert (w.lose_floor, w.blind_nil, w.blind_nil_value, w.spade_lead) == (-200, "any", 200, "trumped")
    c = resolve_ruleset("cards4")
    assert (c.blind_nil, c.spade_lead, c.bag_threshold, c.bag_penalty) == ("first-bidder", "trumped", 10, 100)
    t = resolve_ruleset("two-player")
    assert (t.players, t.blind_nil, t.blind_nil_value) == (2, "any", 200)
    p = resolve_ruleset("pagat")
    assert (p.target, p.nil_value, p.failed_nil_tricks, p.spade_lead, p.max_hands) == (
        500, 100, "bags", "broken", 200,
    )  # fmt: skip


def test_hash_is_stable_and_depends_on_options_only():
    # A literal: the hash must not change between runs, machines or releases.
    assert PRESETS["pagat"].hash == "bea6ea7fdf595dfc"
    assert len({r.hash for r in PRESETS.values()}) == 4
    same = resolve_ruleset("pagat", {"lose_floor": "-200", "blind_nil": "any", "spade_lead": "trumped"})
    assert same.hash == PRESETS["wikipedia"].hash
    assert resolve_ruleset("pagat", {"failed_nil_tricks": "contract"}).hash != PRESETS["pagat"].hash


def test_round_trip_through_dict():
    rules = resolve_ruleset("cards4", {"bag_threshold": "7"})
    assert Ruleset.from_dict(rules.to_dict()) == rules


@pytest.mark.parametrize(
    ("preset", "overrides", "message"),
    [
        ("nope", {}, "unknown preset 'nope'"),
        ("pagat", {"colour": "red"}, "unknown option 'colour'"),
        ("pagat", {"target": "0"}, "target=0 is out of range"),
        ("pagat", {"target": "-5"}, "target=-5 is out of range"),
        ("pagat", {"target": "lots"}, "needs a whole number"),
        ("pagat", {"bag_threshold": "0"}, "bag_threshold=0 is out of range"),
        ("pagat", {"nil_value": "-100"}, "nil_value=-100 is out of range"),
        ("pagat", {"blind_nil_value": "-1"}, "blind_nil_value=-1 is out of range"),
        ("pagat", {"lose_floor": "100"}, "lose_floor=100 is out of range"),
        ("pagat", {"spade_lead": "never"}, "spade_lead='never' is not allowed"),
        ("pagat", {"players": "2"}, "players cannot be overridden"),
        ("pagat", {"max_hands": "0"}, "max_hands=0 is out of range"),
    ],
)
def test_bad_rulesets_name_the_problem(preset, overrides, message):
    with pytest.raises(MalformedInputError, match=message.replace("(", r"\(").replace("'", "'")):
        resolve_ruleset(preset, overrides)


def test_override_parsing():
    assert parse_overrides(["failed-nil-tricks=contract", "target= 300"]) == {
        "failed_nil_tricks": "contract",
        "target": " 300",
    }
    assert resolve_ruleset("pagat", parse_overrides(["target= 300"])).target == 300
    assert resolve_ruleset("wikipedia", {"lose_floor": "none"}).lose_floor is None
    with pytest.raises(MalformedInputError, match="key=value"):
        parse_overrides(["target"])


def test_card_forms_round_trip():
    assert len(CARDS) == 52
    for i, card in enumerate(CARDS):
        assert int(card) == i
        assert parse_card(str(card)) is card
        assert parse_card(str(card).lower()) is card
    assert str(Card.SA) == "SA" and f"{Card.HT}" == "HT"
    assert Card.SA.suit.name == "S" and Card.SA.rank == 12 and Card.C2.rank == 0
    assert Card.SA > Card.HA > Card.DA > Card.CA, "canonical order: clubs, diamonds, hearts, spades"
    assert cards_of(mask_of([Card.SA, Card.C2, Card.HT])) == [Card.C2, Card.HT, Card.SA]


@pytest.mark.parametrize("text", ["", "S", "SX", "XA", "S10", "H1", "SAA", 51, None])
def test_malformed_card_text(text):
    with pytest.raises(RulesError) as info:
        parse_card(text)
    assert isinstance(info.value, MalformedInputError)
    assert repr(text) in str(info.value)
