"""Error bars as inline SVG (no scripts, no external resources): the geometry here, the
markup in ``templates/macros.html`` (``errorbar``)."""

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


@dataclass(frozen=True)
class ErrorBar:
    """One row's bar: the rating and its 95% interval (Elo) and where they are drawn (pixels)."""

    elo: float
    lower: float
    upper: float
    x_elo: float
    x_lower: float
    x_upper: float
    x_mean: float
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def mid(self) -> float:
        """The bar's vertical centre."""
        return self.height / 2


def error_bar(scale: Scale, elo: float, lower: float, upper: float, mean: float) -> ErrorBar:
    """The bar of the 95% interval ``lower``..``upper`` and the rating ``elo`` on ``scale``."""
    # float(): the template prints the numbers with str(), which for a NumPy scalar is not
    # the plain repr a scraper reads back.
    elo, lower, upper = float(elo), float(lower), float(upper)
    return ErrorBar(elo, lower, upper, scale.x(elo), scale.x(lower), scale.x(upper), scale.x(mean))
