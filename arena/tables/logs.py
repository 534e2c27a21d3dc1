"""The bots' logs: fresh directories for a table played again, and a remote table's logs written where a local one's go."""

from __future__ import annotations

import itertools
from pathlib import Path


def write_logs(directory: Path, logs: dict[str, bytes]) -> None:
    """Write the logs a remote table returned into ``directory``.

    File names only: a worker names no paths (``../x.log`` is ``x.log``). A
    failure to write is swallowed: logs are a courtesy, the results are what
    must not be lost.
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in logs.items():
            (directory / Path(name).name).write_bytes(data)
    except OSError:
        pass


def new_log_dirs(logs: Path, name: str, tables: tuple[int, ...]) -> str:
    """``name``, or ``name-2``, ``name-3``...: the first whose tables' log directories (``NAME-tN`` in ``logs``)
    are all new, made here.

    A pair played again writes its bots' logs beside the stored games' logs, never over them.
    """
    logs.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        candidate = name if n == 1 else f"{name}-{n}"
        made: list[Path] = []
        try:
            for table in tables:
                folder = logs / f"{candidate}-t{table}"
                folder.mkdir()
                made.append(folder)
        except FileExistsError:
            for folder in made:
                folder.rmdir()
            continue
        return candidate
    raise AssertionError("unreachable")


__all__ = ["new_log_dirs", "write_logs"]
