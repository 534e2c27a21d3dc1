"""Sizes as people read them: the ladder prints its limits in MiB, never as raw bytes."""

from __future__ import annotations

MIB = 1024 * 1024


def mib(size: int) -> str:
    """``33554432`` → ``32 MiB``; a size that is not whole MiB keeps one decimal (``1.5 MiB``)."""
    value = size / MIB
    if value == int(value):
        return f"{int(value)} MiB"
    return f"{value:.1f} MiB" if value >= 0.1 else f"{size / 1024:.0f} KiB"


__all__ = ["MIB", "mib"]
