"""Per-seat time figures of a game: wall time, the bot's CPU time, the referee's own share.

Both from a live game (:class:`~arena.match.loop.SeatStats`) and from a
stored record (its decisions' ``ms``, ``cpu_ms``, ``ref_us`` and ``lag_ms``, and
``meta.offturn``: the CPU and wall time each seat spent while not asked),
so the match summary and ``arena replay --json`` say the same thing
(docs/record-format.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena_sdk.engine import SEAT_NAMES, seat_name, team_of


def stats_timing(players: int, stats: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """``{SEAT: figures}`` from a game's per-seat statistics."""
    return {
        seat_name(players, s): _figures(
            st.decisions, st.think_s * 1000, st.max_s * 1000,
            st.cpu_s * 1000 if st.cpu_measured else None, st.ref_s * 1e6, st.lag_s * 1000, st.timeouts,
            (st.offturn_cpu_s * 1000, st.offturn_s * 1000) if st.offturn_measured else None,
        )  # fmt: skip
        for s, st in enumerate(stats)
    }


def record_timing(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{SEAT: figures}`` from a version-2 record's decisions (a version-1 record has none: ``{}``)."""
    offturn = _offturn(record)
    return {
        seat: _action_figures(actions, offturn.get(seat)) for seat, actions in _timed_actions(record).items()
    }


def _offturn(record: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """``{SEAT: (cpu_ms, ms)}`` from the record's ``meta.offturn`` (absent before round 4: ``{}``)."""
    meta = record.get("meta")
    found = meta.get("offturn") if isinstance(meta, dict) else None
    if not isinstance(found, dict):
        return {}
    out: dict[str, tuple[float, float]] = {}
    for seat, figures in found.items():
        if isinstance(figures, dict):
            cpu, ms = _number(figures.get("cpu_ms")), _number(figures.get("ms"))
            if cpu is not None and ms is not None:
                out[str(seat)] = (cpu, ms)
    return out


def team_timing(record: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Figures per team (team 0 first) from a record, with ``cpu_decisions``: how many had a CPU time.

    None for a team none of whose decisions were timed (a version-1 record,
    or a side that forfeited before its first answer).
    """
    players = (record.get("ruleset") or {}).get("players")
    names = SEAT_NAMES.get(players, ()) if isinstance(players, int) else ()
    per_team: list[list[dict[str, Any]]] = [[], []]
    offturn: list[tuple[float, float] | None] = [None, None]
    seat_offturn = _offturn(record)
    for seat, actions in _timed_actions(record).items():
        if seat in names:
            team = team_of(len(names), names.index(seat))
            per_team[team].extend(actions)
            if seat in seat_offturn:
                cpu, ms = offturn[team] or (0.0, 0.0)
                offturn[team] = (cpu + seat_offturn[seat][0], ms + seat_offturn[seat][1])
    out: list[dict[str, Any] | None] = []
    for team, actions in enumerate(per_team):
        if not actions:
            out.append(None)
            continue
        figures = _action_figures(actions, offturn[team])
        figures["cpu_decisions"] = sum(_number(a.get("cpu_ms")) is not None for a in actions)
        out.append(figures)
    return out[0], out[1]


def _timed_actions(record: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each seat's decisions that carry a wall time (``ms``)."""
    seats: dict[str, list[dict[str, Any]]] = {}
    for hand in record.get("hands", []):
        for action in hand.get("actions", []):
            if _number(action.get("ms")) is not None:
                seats.setdefault(str(action.get("seat")), []).append(action)
    return seats


def _action_figures(actions: list[dict[str, Any]], offturn: tuple[float, float] | None = None) -> dict[str, Any]:
    ms = [_number(a["ms"]) or 0.0 for a in actions]
    cpu = [x for x in (_number(a.get("cpu_ms")) for a in actions) if x is not None]
    return _figures(
        len(actions), sum(ms), max(ms), sum(cpu) if cpu else None,
        sum(_number(a.get("ref_us")) or 0.0 for a in actions),
        sum(_number(a.get("lag_ms")) or 0.0 for a in actions),
        sum(a.get("default") == "timeout" for a in actions), offturn,
    )  # fmt: skip


def _number(value: Any) -> float | None:
    """A finite, sane figure from a record, or None (records may come from anywhere)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value) if -1e15 < value < 1e15 else float("nan")
    return value if value == value else None


def _figures(
    decisions: int, ms: float, max_ms: float, cpu_ms: float | None, ref_us: float, lag_ms: float, timeouts: int,
    offturn: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The figures of one seat; ``offturn``: its ``(cpu_ms, ms)`` while not asked (None: not measured)."""
    return {
        "decisions": decisions,
        "ms": round(ms, 3),
        "max_ms": round(max_ms, 3),
        "cpu_ms": None if cpu_ms is None else round(cpu_ms, 3),
        "ref_us": int(ref_us),
        "lag_ms": round(lag_ms, 3),
        "timeouts": timeouts,
        "offturn_cpu_ms": None if offturn is None else round(offturn[0], 3),
        "offturn_ms": None if offturn is None else round(offturn[1], 3),
    }
