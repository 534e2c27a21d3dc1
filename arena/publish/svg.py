"""Error bars as inline SVG (no scripts, no external resources)."""

from __future__ import annotations

from dataclasses import dataclass

WIDTH = 260
HEIGHT = 18
PAD = 6


@dataclass(frozen=True)
class Scale:
    """Maps Elo to x pixels, shared by all rows so the bars line up."""

    low: float
    high: float

    @classmethod
    def spanning(cls, values: list[float], mean: float) -> Scale:
        """A scale covering ``values`` and the pool mean, with a margin."""
        low, high = min([*values, mean]), max([*values, mean])
        margin = max((high - low) * 0.05, 10.0)
        return cls(low - margin, high + margin)

    def x(self, elo: float) -> float:
        """Pixel position of ``elo``."""
        return PAD + (elo - self.low) / (self.high - self.low) * (WIDTH - 2 * PAD)


def error_bar(scale: Scale, elo: float, lower: float, upper: float, mean: float) -> str:
    """An SVG of the 95% interval (a bar with end ticks) and the rating (a dot)."""
    x0, x1, xe, xm = scale.x(lower), scale.x(upper), scale.x(elo), scale.x(mean)
    mid = HEIGHT / 2
    return (
        f'<svg class="errorbar" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{lower:.0f} to {upper:.0f}" '
        f'data-lower="{lower!r}" data-upper="{upper!r}" data-elo="{elo!r}">'
        f'<line class="mean" x1="{xm:.1f}" y1="0" x2="{xm:.1f}" y2="{HEIGHT}"/>'
        f'<line class="range" x1="{x0:.1f}" y1="{mid}" x2="{x1:.1f}" y2="{mid}"/>'
        f'<line class="tick" x1="{x0:.1f}" y1="{mid - 4}" x2="{x0:.1f}" y2="{mid + 4}"/>'
        f'<line class="tick" x1="{x1:.1f}" y1="{mid - 4}" x2="{x1:.1f}" y2="{mid + 4}"/>'
        f'<circle class="point" cx="{xe:.1f}" cy="{mid}" r="4"/>'
        "</svg>"
    )
