"""Game records: build them from a finished state, check them by replaying.

The format is documented in ``docs/record-format.md``.  A record is plain
JSON-ready data; reading and writing files is the caller's business (this
module does no I/O, like the rest of the engine).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from arena_sdk.engine.actions import action_from_json, action_to_json, parse_decision
from arena_sdk.engine.cards import CARDS, parse_card
from arena_sdk.engine.errors import RulesError
from arena_sdk.engine.ruleset import Ruleset
from arena_sdk.engine.scoring import TeamHandScore
from arena_sdk.engine.seats import parse_seat, parse_team, seat_name, team_name
from arena_sdk.engine.state import GameResult, GameState, HandResult

RECORD_FORMAT = "spades-arena-record"
RECORD_VERSION = 2
#: Versions this engine reads: 1 (engine only) and 2 (adds the referee's fields).
READABLE_VERSIONS = (1, 2)
#: Endings the engine computes; a record may also end ``forfeit:<reason>`` or ``void:<reason>``.
ENGINE_ENDINGS = ("target", "floor", "max_hands")
FORFEIT_REASONS = ("timeout", "illegal", "crash", "disconnect", "protocol")

_TOP_KEYS = {"format", "version", "game_id", "ruleset", "ruleset_hash", "seed", "first",
             "start", "hands", "result", "meta"}  # fmt: skip
_TOP_KEYS_V2 = {"match_id", "seats", "events", "strikes", "bot_seeds"}
_HAND_KEYS = {"number", "first", "deck", "actions", "result"}
_ACTION_KEYS = {"seat", "kind", "action"}
_ACTION_KEYS_V2 = {"ms", "bot_us", "default", "answer", "request_id", "lag_ms", "cpu_ms", "ref_us", "note",
                   "decision", "reason", "assisted"}  # decision, reason: with default (the strike)
#: What an action's ``assisted`` may list: the person had a hint, or the decision was asked again after an undo.
ASSISTS = ("hint", "undo")
_RESULT_KEYS_V2 = {"forfeit", "void"}


class RecordError(RulesError):
    """A record that is malformed or does not replay; ``path`` names the first bad entry."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.detail = message


@dataclasses.dataclass(frozen=True)
class ReplayReport:
    """What a successful replay found."""

    rules: Ruleset
    result: GameResult
    hands: int
    actions: int
    state: GameState


# ---------------------------------------------------------------------- writing


def hand_result_to_json(players: int, hand: HandResult) -> dict[str, Any]:
    """The JSON form of a hand's outcome (seats and teams by name)."""
    names = [seat_name(players, s) for s in range(players)]
    out: dict[str, Any] = {
        "bids": {names[s]: hand.bids[s] for s in range(players)},
        "blind": [names[s] for s in range(players) if hand.blind[s]],
        "tricks": {names[s]: hand.tricks[s] for s in range(players)},
        "teams": {
            team_name(players, t): _team_score_to_json(players, hand.teams[t]) for t in range(2)
        },
    }
    if players == 2:
        out["exchanged"] = {names[s]: hand.exchanged[s] for s in range(players)}
    return out


def _team_score_to_json(players: int, score: TeamHandScore) -> dict[str, Any]:
    data = score.to_dict()
    for nil in data["nil_results"]:
        nil["seat"] = seat_name(players, nil["seat"])
    return data


def game_result_to_json(players: int, result: GameResult) -> dict[str, Any]:
    """The JSON form of a game's result."""
    return {
        "ending": result.ending,
        "winner": None if result.winner is None else team_name(players, result.winner),
        "scores": {team_name(players, t): result.scores[t] for t in range(2)},
        "bags": {team_name(players, t): result.bags[t] for t in range(2)},
        "hands": result.hands,
    }


def record_from_state(
    state: GameState, *, game_id: str | None = None, meta: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A complete record of ``state``'s game so far (decks, actions, scores, result)."""
    n = state.players
    hands: list[dict[str, Any]] = []
    first = state.first_of_game
    for number in range(1, state.hand_number + 1):
        hands.append(
            {
                "number": number,
                "first": seat_name(n, first),
                "deck": [CARDS[c].name for c in state.deck_log[number]],
                "actions": [],
            }
        )
        first = (first + 1) % n
    for entry in state.history:
        hands[entry.hand - 1]["actions"].append(
            {
                "seat": seat_name(n, entry.seat),
                "kind": entry.kind.value,
                "action": action_to_json(entry.kind, entry.action),
            }
        )
    for hand_result in state.hand_results:
        hands[hand_result.number - 1]["result"] = hand_result_to_json(n, hand_result)
    if not state.is_over and not hands[-1]["actions"]:
        hands.pop()  # the next hand has been dealt but nobody acted yet
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "game_id": game_id,
        "ruleset": state.rules.to_dict(),
        "ruleset_hash": state.rules.hash,
        "seed": state.seed,
        "first": seat_name(n, state.first_of_game),
        "start": {
            "scores": {team_name(n, t): state.start_scores[t] for t in range(2)},
            "bags": {team_name(n, t): state.start_bags[t] for t in range(2)},
        },
        "hands": hands,
    }
    if state.result is not None:
        record["result"] = game_result_to_json(n, state.result)
    if meta:
        record["meta"] = dict(meta)
    return record


# ---------------------------------------------------------------------- reading


def _require(data: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in data:
        raise RecordError(path, f"missing field {key!r}")
    return data[key]


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RecordError(path, f"expected an object, got {type(value).__name__}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(path, f"expected a list, got {type(value).__name__}")
    return value


def _no_unknown(data: Mapping[str, Any], allowed: set[str], path: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise RecordError(path, f"unknown field(s): {', '.join(unknown)}")


def _team_pair(players: int, value: Any, path: str) -> list[int]:
    data = _object(value, path)
    out = []
    for t in range(2):
        name = team_name(players, t)
        v = _require(data, name, path)
        if isinstance(v, bool) or not isinstance(v, int):
            raise RecordError(f"{path}.{name}", f"expected a whole number, got {v!r}")
        out.append(v)
    _no_unknown(data, {team_name(players, t) for t in range(2)}, path)
    return out


def _compare(expected: Any, stored: Any, path: str) -> None:
    """Raise at the first place where ``stored`` differs from what replay computed."""
    if isinstance(expected, dict) and isinstance(stored, Mapping):
        for key in expected:
            if key not in stored:
                raise RecordError(f"{path}.{key}", "missing (replay computes "
                                  f"{expected[key]!r})")  # fmt: skip
            _compare(expected[key], stored[key], f"{path}.{key}")
        extra = sorted(set(stored) - set(expected))
        if extra:
            raise RecordError(f"{path}.{extra[0]}", "not a field of this record version")
        return
    if isinstance(expected, list) and isinstance(stored, list) and len(expected) == len(stored):
        for i, (e, s) in enumerate(zip(expected, stored, strict=True)):
            _compare(e, s, f"{path}[{i}]")
        return
    if expected != stored or type(expected) is not type(stored):
        raise RecordError(path, f"record says {stored!r}, replay computes {expected!r}")


def _parse_deck(value: Any, path: str) -> list[int]:
    cards = _list(value, path)
    try:
        deck = [int(parse_card(c)) for c in cards]
    except RulesError as exc:
        raise RecordError(path, str(exc)) from None
    if sorted(deck) != list(range(52)):
        raise RecordError(path, "a deck must hold each of the 52 cards exactly once")
    return deck


def replay_record(record: Any) -> ReplayReport:
    """Re-simulate a record and check every action and every stored score.

    Raises :class:`RecordError` naming the first bad entry (for example
    ``hands[2].actions[14]``).  Hands may omit ``deck`` (the seeded shuffle is
    used) and ``result`` (it is computed); the game ``result`` may be omitted
    too.  Everything that is present must match.
    """
    data = _object(record, "record")
    rules, v2 = _header(data)
    n = rules.players
    state, hands = _start(data, rules)
    stored_result = data.get("result")
    interrupted = _interrupted_ending(stored_result) if v2 else None
    actions = 0
    for i, hand in enumerate(hands):
        path = f"hands[{i}]"
        _no_unknown(hand, _HAND_KEYS, path)
        if state.is_over:
            raise RecordError(path, f"the game was already over after hand {state.hand_number}")
        number = hand.get("number", i + 1)
        if number != state.hand_number:
            raise RecordError(f"{path}.number", f"record says {number!r}, replay is at hand {state.hand_number}")
        if "first" in hand and hand["first"] != state.seat_name(state.first):
            raise RecordError(
                f"{path}.first", f"record says {hand['first']!r}, replay computes {state.seat_name(state.first)!r}"
            )
        for j, entry in enumerate(_list(_require(hand, "actions", path), f"{path}.actions")):
            _replay_action(state, entry, f"{path}.actions[{j}]", number, v2)
            actions += 1
        if not state.is_over and state.hand_number == number:
            if interrupted and i == len(hands) - 1:
                break  # the game stopped inside this hand
            raise RecordError(f"{path}.actions", f"hand {number} ends before all its decisions were taken")
        if "result" in hand:
            computed = hand_result_to_json(n, state.hand_results[i])
            _compare(computed, hand["result"], f"{path}.result")
    if interrupted:
        result = _interrupted_result(state, interrupted, _object(stored_result, "result"))
        _compare(game_result_to_json(n, result), _strip(stored_result, _RESULT_KEYS_V2), "result")
        return ReplayReport(rules=rules, result=result, hands=len(hands), actions=actions, state=state)
    if state.result is None:
        raise RecordError("hands", f"the record ends before the game is over (in hand {state.hand_number})")
    if stored_result is not None:
        _compare(game_result_to_json(n, state.result), stored_result, "result")
    return ReplayReport(rules=rules, result=state.result, hands=len(hands), actions=actions, state=state)


def _header(data: Mapping[str, Any]) -> tuple[Ruleset, bool]:
    """The record's format, version, keys, ruleset and its hash, checked; the ruleset and whether it is version 2."""
    if data.get("format") != RECORD_FORMAT:
        raise RecordError("format", f"expected {RECORD_FORMAT!r}, got {data.get('format')!r}")
    version = data.get("version")
    if version not in READABLE_VERSIONS:
        raise RecordError(
            "version", f"this engine reads versions {READABLE_VERSIONS}, got {version!r}"
        )
    v2 = version == 2
    _no_unknown(data, _TOP_KEYS | (_TOP_KEYS_V2 if v2 else set()), "record")
    try:
        rules = Ruleset.from_dict(_require(data, "ruleset", "record"))
    except RecordError:
        raise
    except RulesError as exc:
        raise RecordError("ruleset", str(exc)) from None
    stored_hash = _require(data, "ruleset_hash", "record")
    if stored_hash != rules.hash:
        raise RecordError("ruleset_hash", f"record says {stored_hash!r}, the ruleset hashes to {rules.hash!r}")
    if "bot_seeds" in data:
        bot_seeds = _object(data["bot_seeds"], "bot_seeds")
        for key, value in bot_seeds.items():
            try:
                parse_seat(rules.players, key)
            except RulesError as exc:
                raise RecordError(f"bot_seeds.{key}", str(exc)) from None
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64:
                raise RecordError(f"bot_seeds.{key}", f"expected a whole number 0 <= seed < 2**64, got {value!r}")
    return rules, v2


def _start(data: Mapping[str, Any], rules: Ruleset) -> tuple[GameState, list[Any]]:
    """The game as it started (seed, first seat, starting scores and bags, recorded decks), and its hands."""
    n = rules.players
    seed = _require(data, "seed", "record")
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise RecordError("seed", f"expected a whole number or text, got {seed!r}")
    try:
        first = parse_seat(n, _require(data, "first", "record"))
    except RecordError:
        raise
    except RulesError as exc:
        raise RecordError("first", str(exc)) from None
    start = _object(data.get("start", {"scores": None, "bags": None}), "start")
    scores = _team_pair(n, start["scores"], "start.scores") if start.get("scores") else None
    bags = _team_pair(n, start["bags"], "start.bags") if start.get("bags") else None
    hands = _list(_require(data, "hands", "record"), "hands")
    decks: dict[int, list[int]] = {}
    for i, hand in enumerate(hands):
        hand = _object(hand, f"hands[{i}]")
        if "deck" in hand:
            decks[i + 1] = _parse_deck(hand["deck"], f"hands[{i}].deck")
    try:
        state = GameState.new(rules, seed, first=first, scores=scores, bags=bags, decks=decks)
    except RulesError as exc:
        raise RecordError("start", str(exc)) from None
    return state, hands


def _replay_action(state: GameState, entry: Any, apath: str, number: int, v2: bool) -> None:
    """Check one recorded action of hand ``number`` against the replay, and apply it."""
    n = state.players
    entry = _object(entry, apath)
    _no_unknown(entry, _ACTION_KEYS | (_ACTION_KEYS_V2 if v2 else set()), apath)
    _check_assisted(entry, f"{apath}.assisted")
    if state.is_over or state.hand_number != number:
        raise RecordError(apath, f"hand {number} is already complete")
    try:
        seat = parse_seat(n, _require(entry, "seat", apath))
        kind = parse_decision(_require(entry, "kind", apath))
    except RecordError:
        raise
    except RulesError as exc:
        raise RecordError(apath, str(exc)) from None
    assert state.decision is not None and state.to_move is not None
    if seat != state.to_move or kind is not state.decision:
        raise RecordError(
            apath,
            f"record has {state.seat_name(seat)} {kind.value}, but it is "
            f"{state.seat_name(state.to_move)}'s turn to {state.decision.value}",
        )
    try:
        state.apply(action_from_json(kind, _require(entry, "action", apath)))
    except RecordError:
        raise
    except RulesError as exc:
        raise RecordError(apath, f"illegal {kind.value} by {state.seat_name(seat)}: {exc}") from None


def record_assists(record: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Who had help in a checked record (unrated play): ``{SEAT: {"hints": n, "undos": n}}``.

    From ``meta.assisted`` where the table counted them (an undo taken back
    again leaves no action of its own), else from the actions' ``assisted``.
    Empty for a game played without help (every rated game).
    """
    meta = record.get("meta")
    counted = meta.get("assisted") if isinstance(meta, Mapping) else None
    if isinstance(counted, Mapping) and counted:
        return {str(seat): {"hints": int(c.get("hints", 0)), "undos": int(c.get("undos", 0))}
                for seat, c in counted.items() if isinstance(c, Mapping)}  # fmt: skip
    found: dict[str, dict[str, int]] = {}
    for hand in record.get("hands", []):
        for action in hand.get("actions", []):
            for kind in action.get("assisted", []):
                seat = found.setdefault(str(action["seat"]), {"hints": 0, "undos": 0})
                seat[kind + "s"] += 1
    return found


def _check_assisted(entry: Mapping[str, Any], path: str) -> None:
    """An action's ``assisted``, if it has one: a non-empty list of distinct kinds of help (:data:`ASSISTS`)."""
    if "assisted" not in entry:
        return
    value = entry["assisted"]
    if not isinstance(value, list) or not value or len(set(map(repr, value))) != len(value) \
            or any(v not in ASSISTS for v in value):  # fmt: skip
        raise RecordError(path, f"expected a list of {' and '.join(map(repr, ASSISTS))} (each once), got {value!r}")


def _strip(data: Mapping[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


def _interrupted_ending(result: Any) -> str | None:
    """``forfeit:...``/``void:...`` when the stored result says the game was stopped."""
    if not isinstance(result, Mapping):
        return None
    ending = result.get("ending")
    if not isinstance(ending, str) or ending in ENGINE_ENDINGS:
        return None
    kind, _, reason = ending.partition(":")
    if kind == "void" and reason:
        return ending
    if kind == "forfeit" and reason in FORFEIT_REASONS:
        return ending
    raise RecordError("result.ending", f"unknown ending {ending!r}")


def stopped_result(state: GameState, ending: str, losing_teams: set[int] | None) -> GameResult:
    """The result of a game stopped by a forfeit (``losing_teams``) or a void (``None``).

    The scores are the totals so far; the winner is the side that did not
    forfeit (none if both did, or the game is void).
    """
    winner: int | None = None
    if losing_teams is not None and len(losing_teams) == 1:
        winner = 1 - next(iter(losing_teams))
    return GameResult(
        ending=ending,
        winner=winner,
        scores=tuple(state.scores),
        bags=tuple(state.bags),
        hands=state.hand_number if state.hand_results or state.history else 0,
    )


def _interrupted_result(state: GameState, ending: str, stored: Mapping[str, Any]) -> GameResult:
    """The result of a game stopped by a forfeit or a void, checked against the record."""
    n = state.players
    losers: set[int] | None = None
    if ending.startswith("forfeit:"):
        forfeit = _object(_require(stored, "forfeit", "result"), "result.forfeit")
        teams = forfeit.get("teams")
        if not isinstance(teams, list) or not teams:
            raise RecordError("result.forfeit.teams", "expected a non-empty list of teams")
        try:
            losers = {parse_team(n, t) for t in teams}
        except RulesError as exc:
            raise RecordError("result.forfeit.teams", str(exc)) from None
    elif "void" not in stored:
        raise RecordError("result", "a void result needs a 'void' object")
    return stopped_result(state, ending, losers)
