"""Writing a match's results: one record per game and a summary, as files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.match.loop import GameOutcome


def record_path(out_dir: Path, game: GameOutcome) -> Path:
    """Where a game's record goes."""
    return out_dir / f"{game.game_id}.json"


def write_record(out_dir: Path, game: GameOutcome) -> Path:
    """Write a game's record atomically (a crash leaves no half-written record)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = record_path(out_dir, game)
    _write_atomically(path, json.dumps(game.record, indent=1) + "\n")
    return path


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file; a failed write (disk full) leaves nothing."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(path, json.dumps(data, indent=2) + "\n")
