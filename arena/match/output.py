"""Writing a match's results: one record per game and a summary, as files."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.match.loop import GameOutcome


@dataclasses.dataclass(frozen=True)
class StruckDecision:
    """A decision where the referee played the default move: which, why, and the bot's note."""

    seat: str
    decision: int
    """0-based among the seat's own decisions in the game (``--decision K`` of the reproduce command)."""
    code: str
    """``timeout``, ``illegal``, ``malformed`` or ``offturn`` (CPU used while not asked)."""
    reason: str
    """The referee's reason ("" in records written before reasons were kept)."""
    note: str
    answer: str
    """What the bot sent, in short ("" for nothing)."""

    def describe(self) -> str:
        """``seat N, decision K: code (reason; note: ...)``."""
        why = [x for x in (self.reason, f"sent {self.answer}" if self.answer not in ("", "no action") else "",
                           f"its note: {self.note}" if self.note else "") if x]  # fmt: skip
        return f"seat {self.seat}, decision {self.decision}: {self.code}" + (f" ({'; '.join(why)})" if why else "")


def struck_decisions(record: Mapping[str, Any]) -> list[StruckDecision]:
    """The record's struck decisions, in play order.

    The index is the entry's ``decision`` where the referee recorded it, else
    counted from the actions (the seat's earlier entries in the game).
    """
    out: list[StruckDecision] = []
    seen: dict[str, int] = {}
    for hand in record.get("hands") or []:
        actions = hand.get("actions") if isinstance(hand, Mapping) else None
        for action in actions if isinstance(actions, list) else []:
            if not isinstance(action, Mapping):
                continue
            seat = str(action.get("seat", "?"))
            k = seen.get(seat, 0)
            seen[seat] = k + 1
            if not action.get("default"):
                continue
            recorded = action.get("decision")
            index = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else k
            out.append(StruckDecision(
                seat, index, str(action["default"]), str(action.get("reason") or ""),
                str(action.get("note") or ""), str(action.get("answer") or ""),
            ))  # fmt: skip
    return out


def reproduce_command(
    bot: str, record: Path | str, seat: str, decision: int, clock_ms: tuple[int, int, int] | None = None
) -> str:
    """The command that asks ``bot`` (``path/bot.py[:Class]`` or a tier) that decision of the record again."""
    argv = ["python", "-m", "arena_sdk.testing", bot, "--replay", str(record), "--seat", seat]
    argv += ["--decision", str(decision)]
    if clock_ms is not None and clock_ms != (1000, 30_000, 60_000):  # the command's default
        argv += ["--time-control", ",".join(str(x) for x in clock_ms)]
    return shlex.join(argv)


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


class StagedFile:
    """A file written in full under a temporary name of its own beside ``path``: not in place until :meth:`publish`.

    The temporary name is unique (two writers of the same file never share
    one), so each writer's file is whole and the one put in place is one
    writer's, never a mix; :meth:`discard` removes it when it was not published.
    """

    def __init__(self, path: Path, temporary: Path, durable: bool) -> None:
        self.path = path
        self.temporary = temporary
        self.durable = durable
        self.published = False

    def publish(self) -> None:
        """Put the file in place (atomically; ``durable``: its directory entry on the disk too)."""
        os.replace(self.temporary, self.path)
        self.published = True
        if self.durable:
            fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def discard(self) -> None:
        """Remove the temporary file if it was not put in place."""
        if not self.published:
            self.temporary.unlink(missing_ok=True)


def stage_file(path: Path, text: str, *, durable: bool = False) -> StagedFile:
    """Write ``text`` under a unique temporary name beside ``path`` (``durable``: fsynced); a failure leaves nothing."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        with open(fd, "w") as f:
            f.write(text)
            if durable:
                f.flush()
                os.fsync(f.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return StagedFile(path, temporary, durable)


#: The names :func:`stage_file` gives its temporary files: ``<name>.<pid>-<12 hex>.tmp``.
STAGED_PATTERN = "*.*-*.tmp"


def remove_staged_leftovers(directory: Path) -> int:
    """Remove the temporary files a killed writer left in ``directory`` (not below it); how many.

    Only the directory's one runner may call this, holding its lock
    (:mod:`arena.tables.runlock`): a live writer's file would go too.
    """
    removed = 0
    if not directory.is_dir():
        return 0
    for path in directory.glob(STAGED_PATTERN):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed += 1
    return removed


def stage_record(out_dir: Path, game: GameOutcome, *, durable: bool = False) -> StagedFile:
    """A game's record written beside its place (:func:`record_path`), put there by :meth:`StagedFile.publish`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return stage_file(record_path(out_dir, game), record_text(game.record) + "\n", durable=durable)


def _write_atomically(path: Path, text: str, *, durable: bool = False) -> None:
    """Write ``text`` to ``path`` through a temporary file of its own; a failed write (disk full) leaves nothing.

    ``durable``: fsync the file before the rename and the directory after it
    (a rename alone may reach the disk before the file's content does).
    """
    staged = stage_file(path, text, durable=durable)
    try:
        staged.publish()
    finally:
        staged.discard()


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(path, json.dumps(data, indent=2) + "\n")
