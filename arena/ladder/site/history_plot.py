"""A team's rating history as an inline SVG plot (no script: the pages' policy allows none).

One line per version, Elo against the time of each refit, with its 95% band;
colours from a fixed palette by version number.  Versions and numbers are
the team's, but the only text in the plot is numbers and the version labels,
escaped.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from markupsafe import Markup, escape

WIDTH, HEIGHT, PAD = 640, 240, 40
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def history_svg(rows: Sequence[tuple[str, str, int, float, float, float]]) -> Markup:
    """``rows``: (entry, at, pairs, elo, low, high), oldest first; an empty history gives an empty string."""
    if not rows:
        return Markup("")
    times = [datetime.datetime.fromisoformat(r[1]).timestamp() for r in rows]
    t0, t1 = min(times), max(times)
    lo = min(r[4] for r in rows)
    hi = max(r[5] for r in rows)
    if hi - lo < 1:
        lo, hi = lo - 50, hi + 50

    def x(t: float) -> float:
        return PAD + (WIDTH - 2 * PAD) * ((t - t0) / (t1 - t0) if t1 > t0 else 0.5)

    def y(e: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (e - lo) / (hi - lo)

    by_entry: dict[str, list[tuple[float, float, float, float]]] = {}
    for r, t in zip(rows, times, strict=True):
        by_entry.setdefault(r[0], []).append((t, r[3], r[4], r[5]))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="history" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="rating history">',
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" stroke="#888"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#888"/>',
        f'<text x="4" y="{y(hi):.1f}" font-size="11">{hi:.0f}</text>',
        f'<text x="4" y="{y(lo):.1f}" font-size="11">{lo:.0f}</text>',
    ]
    for k, (entry, points) in enumerate(sorted(by_entry.items(), key=lambda kv: kv[1][0][0])):
        colour = PALETTE[k % len(PALETTE)]
        band = [f"{x(t):.1f},{y(h):.1f}" for t, _, _, h in points] + [f"{x(t):.1f},{y(lw):.1f}" for t, _, lw, _ in reversed(points)]
        parts.append(f'<polygon points="{" ".join(band)}" fill="{colour}" fill-opacity="0.15" stroke="none"/>')
        line = " ".join(f"{x(t):.1f},{y(e):.1f}" for t, e, _, _ in points)
        parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2" class="version-line"/>')
        last_t, last_e = points[-1][0], points[-1][1]
        parts.append(
            f'<text x="{min(x(last_t) + 4, WIDTH - PAD):.1f}" y="{y(last_e):.1f}" font-size="11" fill="{colour}">'
            f"{escape(entry)}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # built from numbers and escaped names only


__all__ = ["history_svg"]
