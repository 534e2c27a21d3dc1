"""Game records for the replay viewer's tests, made with the engine.

Random legal decisions (blind nil taken often, so the two-player draw, blind nil
and exchange all happen), then the referee's version-2 fields: bot names (hostile
ones too), decision times, a default move with its strike, events, and optionally a
forfeit that stops the game mid-hand.
"""

from __future__ import annotations

import random
from typing import Any

from arena_sdk.engine import (
    Decision,
    GameState,
    game_result_to_json,
    record_from_state,
    resolve_ruleset,
    seat_name,
    stopped_result,
    team_name,
)

HOSTILE_NAME = '</script><script>document.title="pwned"</script><img src=x onerror=alert(1)>'
HOSTILE_VERSION = '"><b id="injected">bold</b>&amp;'


def play(preset: str, seed: int, *, max_hands: int = 3, stop_after: int | None = None,
         overrides: dict[str, str] | None = None) -> GameState:  # fmt: skip
    """A game of random legal decisions (``stop_after``: only that many decisions)."""
    rules = resolve_ruleset(preset, {"max_hands": str(max_hands), **(overrides or {})})
    state = GameState.new(rules, seed)
    rng = random.Random(seed)
    done = 0
    while not state.is_over and (stop_after is None or done < stop_after):
        kind = state.decision
        if kind is Decision.BLIND_NIL:
            action: Any = rng.random() < 0.35
        elif kind is Decision.EXCHANGE:
            hand = [c for c in range(52) if state.hands[state.to_move] >> c & 1]
            action = tuple(rng.sample(hand, rng.randint(0, 3)))
        else:
            action = rng.choice(state.legal_actions())
        state.apply(action)
        done += 1
    return state


def record(preset: str, seed: int, *, names: tuple[str, str] = ("alpha", "beta"),
           forfeit: bool = False, **kw: Any) -> dict[str, Any]:  # fmt: skip
    """A version-2 record as the referee would write it."""
    stop = None
    if forfeit:
        full = play(preset, seed, **kw)
        stop = len(full.history) // 2
    state = play(preset, seed, stop_after=stop, **kw)
    n = state.players
    rec = record_from_state(state, game_id=f"{preset}-{seed}{'-forfeit' if forfeit else ''}")
    rng = random.Random(seed * 7 + 1)
    request = 0
    default_done = False
    for hand in rec["hands"]:
        for action in hand["actions"]:
            request += 1
            action["ms"] = round(rng.uniform(0.3, 40.0), 3)
            action["request_id"] = request
            if not default_done and action["kind"] == "bid":
                action["default"] = "timeout"
                action["answer"] = "(no answer)"
                default_done = True
    rec["match_id"] = "m-test"
    rec["seats"] = {
        seat_name(n, s): {"name": names[s % 2], "version": "1.0" if s % 2 == 0 else HOSTILE_VERSION}
        for s in range(n)
    }
    rec["strikes"] = {seat_name(n, s): 0 for s in range(n)}
    first_default = next(
        a for h in rec["hands"] for a in h["actions"] if a.get("default")
    )
    rec["strikes"][first_default["seat"]] = 1
    rec["events"] = [
        {"seat": seat_name(n, 1), "code": "stale_answer", "detail": "answered twice",
         "request_id": 3},  # fmt: skip
    ]
    if forfeit:
        loser = 1
        result = stopped_result(state, "forfeit:timeout", {loser})
        rec["result"] = {
            **game_result_to_json(n, result),
            "forfeit": {"teams": [team_name(n, loser)], "seat": seat_name(n, 1),
                        "reason": "timeout", "detail": "no answer within the hard cap", "decision": 7},  # fmt: skip
        }
    return rec


#: One sample per preset (two-player twice: its blind nil, draw and exchange matter most).
SAMPLES = [
    ("pagat", 11, {}),
    ("wikipedia", 12, {}),
    ("cards4", 13, {}),
    ("two-player", 14, {}),
    ("two-player", 15, {"forfeit": True}),
]
