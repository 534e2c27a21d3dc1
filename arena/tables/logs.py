"""The bots' logs of a table that ran elsewhere (a Dask worker): written where a local table's go."""

from __future__ import annotations

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


__all__ = ["write_logs"]
