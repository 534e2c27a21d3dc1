"""The comparison, readable: the person's hand and the bot's replay trick by trick, and the swing explained.

From a finished hand (:func:`arena.play.views.hand_json`) and its replay with a
bot in the person's seat (:func:`arena.play.compare.compare_job`):

- :func:`trick_rows`: each trick of both, side by side (the person's card,
  the bot's, who won each);
- :func:`first_divergence`: where the two first part: the bid, or the first
  trick where the cards differ (after it, the other seats play differently too);
- :func:`swing_parts` and :func:`swing_lines`: the swing (the bot's margin less
  the person's) split by where it came from: the contract, bags, nil and the
  bag penalty, each a difference of margins, so the parts add up to the swing.
"""

from __future__ import annotations

from typing import Any

from arena_sdk.engine import team_of

#: The parts of a hand's points, as :func:`arena.play.compare.team_breakdown` names them.
PARTS = (("contract", "contract_points"), ("bags", "bag_points"), ("nil", "nil"), ("penalty", "penalty_points"))
PART_WORDS = {"contract": "Contract", "bags": "Bags", "nil": "Nil", "penalty": "Bag penalty"}


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def _row_side(players: int, seat: int, trick: dict[str, Any]) -> dict[str, Any]:
    cards = trick["cards"]
    return {
        "card": cards[(seat - trick["leader"]) % players] if len(cards) == players else None,
        "leader": trick["leader"],
        "cards": cards,
        "winner": trick["winner"],
        "won": team_of(players, trick["winner"]) == team_of(players, seat),
    }


def trick_rows(players: int, seat: int, yours: list[dict[str, Any]], bots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The two hands' tricks side by side: ``{"number", "yours": {...}, "bot": {...}}`` per trick."""
    rows = []
    for i in range(max(len(yours), len(bots))):
        row: dict[str, Any] = {"number": i + 1}
        if i < len(yours):
            row["yours"] = _row_side(players, seat, yours[i])
        if i < len(bots):
            row["bot"] = _row_side(players, seat, bots[i])
        rows.append(row)
    return rows


def first_divergence(hand: dict[str, Any], comparison: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Where the bot first did otherwise: ``{"at": "bid"|"trick"|None, ...}``."""
    you = hand["you"]
    if (you["bid"], you["blind"]) != (comparison["bid"], comparison["blind"]):
        return {"at": "bid", "yours": you["bid"], "bot": comparison["bid"]}
    for row in rows:
        mine, bots = row.get("yours"), row.get("bot")
        if mine is None or bots is None or mine["card"] != bots["card"]:
            return {"at": "trick", "trick": row["number"], "yours": mine and mine["card"], "bot": bots and bots["card"]}
    return {"at": None}


def _part(team: dict[str, Any], key: str) -> int:
    return sum(n["points"] for n in team["nil"]) if key == "nil" else int(team[key])


def swing_parts(players: int, seat: int, yours: list[dict[str, Any]], bots: list[dict[str, Any]]) -> dict[str, int]:
    """The swing by part: for each, the bot's margin in it less the person's (they add up to the swing)."""
    side = team_of(players, seat)

    def margin(teams: list[dict[str, Any]], key: str) -> int:
        return _part(teams[side], key) - _part(teams[1 - side], key)

    return {name: margin(bots, key) - margin(yours, key) for name, key in PARTS}


def _contract_words(team: dict[str, Any]) -> str:
    if not team["contract"]:
        return "no contract"
    how = "made" if team["made"] else "set"
    return f"{how} ({team['tricks']} of {team['contract']}, {_signed(team['contract_points'])})"


def _nil_words(team: dict[str, Any]) -> str:
    if not team["nil"]:
        return "no nil"
    return ", ".join(f"{n['kind'].replace('_', ' ')} {'made' if n['made'] else 'failed'} ({_signed(n['points'])})"
                     for n in team["nil"])  # fmt: skip


def _side_words(part: str, team: dict[str, Any]) -> str:
    if part == "contract":
        return _contract_words(team)
    if part == "bags":
        return f"{team['bags']} bag{'s' if team['bags'] != 1 else ''}"
    if part == "nil":
        return _nil_words(team)
    return _signed(team["penalty_points"]) if team["penalty_points"] else "none"


def swing_lines(players: int, seat: int, bot: str, yours: list[dict[str, Any]], bots: list[dict[str, Any]],
                parts: dict[str, int]) -> list[str]:  # fmt: skip
    """One line per part that moved: what each side got there with the person, and with the bot."""
    side = team_of(players, seat)
    lines = []
    for part, _ in PARTS:
        if not parts[part]:
            continue
        said = []
        for who, t in (("your side", side), ("the other side", 1 - side)):
            mine, its = _side_words(part, yours[t]), _side_words(part, bots[t])
            if mine != its:
                said.append(f"{who}: {mine} with you, {its} with {bot}")
        lines.append(f"{PART_WORDS[part]} {_signed(parts[part])}: " + "; ".join(said or ["the same on each side"]))
    return lines


def explained(players: int, seat: int, hand: dict[str, Any], comparison: dict[str, Any]) -> dict[str, Any]:
    """A finished comparison with its rows, its first divergence and its swing explained."""
    rows = trick_rows(players, seat, hand["tricks_played"], comparison.get("hand_tricks", []))
    parts = swing_parts(players, seat, hand["teams"], comparison["teams"])
    name = comparison["bot"].capitalize()
    return {
        **comparison,
        "rows": rows,
        "divergence": first_divergence(hand, comparison, rows),
        "parts": parts,
        "explain": swing_lines(players, seat, name, hand["teams"], comparison["teams"], parts),
    }


__all__ = ["explained", "first_divergence", "swing_lines", "swing_parts", "trick_rows"]
