"""Unpacking an upload: the one step of a submission the web site does itself (the build is the loop's)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from arena.sandbox.bot_dir import DirLimits, extract_tar


class _Limits(Protocol):
    @property
    def max_bytes(self) -> int: ...
    @property
    def max_files(self) -> int: ...


class _HasSubmissions(Protocol):
    @property
    def submissions(self) -> _Limits: ...


def unpack(config: _HasSubmissions, archive: Path, dest: Path) -> None:
    """Unpack an upload into ``dest`` (new); :class:`BotDirError` (one line) if it breaks a rule."""
    limits = DirLimits(max_bytes=config.submissions.max_bytes, max_files=config.submissions.max_files)
    extract_tar(archive, dest, limits)


__all__ = ["unpack"]
