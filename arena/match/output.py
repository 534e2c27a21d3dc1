"""Writing a match's results: one record per game and a summary, as files."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.match.loop import GameOutcome


def record_path(out_dir: Path, game: GameOutcome) -> Path:
    """Where a game's record goes."""
    return out_dir / f"{game.game_id}.json"


def write_record(out_dir: Path, game: GameOutcome, *, durable: bool = False) -> Path:
    """Write a game's record atomically (a crash leaves no half-written record).

    ``durable``: the record (and its directory entry) is on the disk when this
    returns, so a results row written next can never point at an empty file
    after a power loss.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    path = record_path(out_dir, game)
    _write_atomically(path, record_text(game.record) + "\n", durable=durable)
    return path


#: Containers at this depth or deeper go on one line: an action, a team's hand score.
#: (The record is depth 0, its hands list 1, a hand 2, its actions list 3, an action 4.)
ONE_LINE_DEPTH = 4
_one_line = json.JSONEncoder(separators=(", ", ": ")).encode


def record_text(record: Mapping[str, Any]) -> str:
    """A record as JSON that reads well and is quick to write: one line per action.

    Each key of the record, of a hand and of the result gets a line of its
    own; anything deeper, or holding no object or list, is one line (written by
    the json module's C encoder: ``json.dumps(indent=...)`` runs in Python and
    costs several times as much, for a file of one line per card and key).
    Parses to the same value as ``json.dumps(record)``.
    """
    return _layout(record, 0, "")


def _layout(value: Any, depth: int, pad: str) -> str:
    if depth >= ONE_LINE_DEPTH or not _holds_containers(value):
        return _one_line(value)
    inner = pad + " "
    if isinstance(value, dict):
        members = [f"{inner}{_key(k)}: {_layout(v, depth + 1, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + pad + "}"
    items = [inner + _layout(v, depth + 1, inner) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def _holds_containers(value: Any) -> bool:
    if isinstance(value, dict):
        return any(isinstance(v, (dict, list, tuple)) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, (dict, list, tuple)) for v in value)
    return False


def _key(key: Any) -> str:
    """An object key as JSON text, converted the way ``json.dumps`` converts it."""
    if isinstance(key, str):
        return _one_line(key)
    return _one_line(next(iter(json.loads(json.dumps({key: 0})))))


def _write_atomically(path: Path, text: str, *, durable: bool = False) -> None:
    """Write ``text`` to ``path`` through a temporary file; a failed write (disk full) leaves nothing.

    ``durable``: fsync the file before the rename and the directory after it
    (a rename alone may reach the disk before the file's content does).
    """
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        with tmp.open("w") as f:
            f.write(text)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(path, json.dumps(data, indent=2) + "\n")
