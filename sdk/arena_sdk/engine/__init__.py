"""The Spades rules engine: pure, standard library only, no I/O, no clock.

Start a game with :meth:`GameState.new` from a :class:`Ruleset`
(:func:`resolve_ruleset`) and a seed; ask :attr:`GameState.decision` and
:attr:`GameState.to_move` what is due, :meth:`GameState.legal_actions` what may
be done, :meth:`GameState.apply` to do it, :meth:`GameState.view` for what one
seat may know, and :attr:`GameState.result` / :attr:`GameState.hand_results`
for the outcome.
"""

from arena_sdk.engine.actions import action_from_json, action_to_json, parse_decision
from arena_sdk.engine.cards import CARDS, Card, Suit, cards_of, mask_of, parse_card, parse_cards
from arena_sdk.engine.errors import IllegalActionError, MalformedInputError, RulesError
from arena_sdk.engine.record import (
    RECORD_FORMAT,
    RECORD_VERSION,
    RecordError,
    ReplayReport,
    game_result_to_json,
    hand_result_to_json,
    record_from_state,
    replay_record,
    stopped_result,
)
from arena_sdk.engine.ruleset import PRESETS, Ruleset, parse_overrides, resolve_ruleset
from arena_sdk.engine.scoring import TeamHandScore, game_ending, score_team
from arena_sdk.engine.seats import (
    SEAT_NAMES,
    TEAM_NAMES,
    parse_seat,
    seat_name,
    team_members,
    team_name,
    team_of,
)
from arena_sdk.engine.state import (
    ActionEntry,
    Decision,
    GameResult,
    GameState,
    HandResult,
    SeatView,
    Trick,
)

ENGINE_VERSION = "1.0.0"

__all__ = [
    "CARDS", "ENGINE_VERSION", "PRESETS", "RECORD_FORMAT", "RECORD_VERSION",
    "RecordError", "ReplayReport", "game_result_to_json", "hand_result_to_json",
    "record_from_state", "replay_record", "stopped_result", "SEAT_NAMES", "TEAM_NAMES",
    "ActionEntry", "Card", "Decision", "GameResult", "GameState", "HandResult",
    "IllegalActionError", "MalformedInputError", "Ruleset", "RulesError", "SeatView",
    "Suit", "TeamHandScore", "Trick",
    "action_from_json", "action_to_json", "cards_of", "game_ending", "mask_of",
    "parse_card", "parse_cards", "parse_decision", "parse_overrides", "parse_seat",
    "resolve_ruleset", "score_team", "seat_name", "team_members", "team_name", "team_of",
]  # fmt: skip
