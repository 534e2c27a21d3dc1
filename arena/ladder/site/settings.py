"""What the site needs to know of a ladder's settings: its directory, name, seats and upload limits.

:class:`SiteSettings` is read from a :class:`~arena.ladder.config.LadderConfig`
(``serve``) or made directly (tests, a site run apart from the loop): the site
never needs the rest of the configuration, nor the modules that parse it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from arena.ladder.common import paths
from arena.ladder.course.calendar import Calendar


@dataclasses.dataclass(frozen=True)
class UploadLimits:
    """The ``[submissions]`` limits a team's page shows and an upload is held to."""

    max_bytes: int = 32 * 1024 * 1024
    max_files: int = 2000
    daily_quota: int = 20


@dataclasses.dataclass(frozen=True)
class SiteSettings:
    """The ladder as its site sees it."""

    directory: Path
    name: str
    players: int = 4
    submissions: UploadLimits = UploadLimits()
    calendar: Calendar = Calendar()
    """``[schedule]`` and ``[final]``: the phase the site shows and uploads are held to."""

    @property
    def results_path(self) -> Path:
        return paths.results_store(self.directory)

    @property
    def ladder_path(self) -> Path:
        return paths.ladder_store(self.directory)

    @classmethod
    def of(cls, config: Any) -> SiteSettings:
        """The site's part of a ladder's configuration (a ``LadderConfig``, or already settings)."""
        if isinstance(config, SiteSettings):
            return config
        sub = config.submissions
        return cls(
            directory=config.directory, name=config.name, players=config.rules.players,
            submissions=UploadLimits(sub.max_bytes, sub.max_files, sub.daily_quota),
            calendar=getattr(config, "calendar", Calendar()),
        )  # fmt: skip


__all__ = ["SiteSettings", "UploadLimits"]
