"""The time columns next to each entry's faults: wall and CPU time per decision, the platform's share.

With them an author who lost games on time can tell "my bot was slow" (CPU
per decision near the wall time) from "my bot waited" (wall time well above
CPU) from "the machine was busy" (the referee's stalls, never charged).
"""

from __future__ import annotations

from arena.publish.model import EntryTiming

#: (key, header, what it means) of each time column, in order.
TIME_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("wall", "ms/decision", "mean time charged to the bot per decision (answer received minus request sent)"),
    ("max", "max ms", "the longest decision"),
    ("cpu", "CPU ms/decision", "the bot's CPU time per decision, where measured (container cgroup or process)"),
    ("referee", "referee µs/decision", "the referee's own CPU time per decision of this entry"),
    ("lag", "stalls ms", "the referee's own stalls during this entry's decisions, total (never charged)"),
    ("offturn", "off-turn CPU ms/game", "CPU the bot used while not asked (thinking on others' turns), per game, where measured"),
)


def time_cells(timing: EntryTiming | None) -> list[tuple[str, str]]:
    """``(key, text)`` per time column; "–" where there is no figure (no stored times, CPU not measured)."""
    if timing is None:
        return [(key, "–") for key, _, _ in TIME_COLUMNS]
    values = {
        "wall": _fmt(timing.wall_ms_per_decision, 1),
        "max": _fmt(1000 * timing.max_s, 0),
        "cpu": _fmt(timing.cpu_ms_per_decision, 1),
        "referee": _fmt(timing.ref_us_per_decision, 0),
        "lag": _fmt(1000 * timing.lag_s, 0),
        "offturn": _fmt(timing.offturn_cpu_ms_per_game, 0),
    }
    return [(key, values[key]) for key, _, _ in TIME_COLUMNS]


def _fmt(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"
