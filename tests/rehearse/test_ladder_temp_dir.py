"""The ladder server's temp directory is its own: what a killed server's tables left there goes at the next start.

Found by ``arena ladder rehearse``: after ``kill -9`` of the server's process
group during a pair (its tables killed too, as the OOM killer or ``systemctl
kill`` does), the match's socket directory (``arena-*``), its logs directory
(``arena-logs-*``) and multiprocessing's ``pymp-*`` stayed in ``/tmp`` for
ever, one set per kill.  Now the server and its tables use
``arena-ladder-<id>-<pid>`` in the temp directory; a start removes those of
the same ladder whose process is gone, the server's exit removes its own.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from arena.rehearse.server import LadderProcess


def _dead_pid() -> int:
    pid = 4_000_000  # above the usual pid_max: never a live process here
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        pid += 1


def test_a_start_removes_what_a_killed_servers_tables_left_and_a_stop_removes_its_own(
    tmp_path: Path,
):
    ladder = LadderProcess(tmp_path / "lad")
    try:
        ladder.init({}, base_image="arena-no-such-base:none", max_hands=2)  # nothing is built here
        with sqlite3.connect(ladder.directory / "ladder.sqlite") as db:
            ladder_id = db.execute("SELECT value FROM meta WHERE key='ladder_id'").fetchone()[0]
        # What a kill -9 of the whole group left: a dead server's directory with its tables' files.
        left = ladder.sys_tmp / f"arena-ladder-{ladder_id}-{_dead_pid()}"
        (left / "arena-k2j3h4g5" / "seat-0").mkdir(parents=True)
        (left / "arena-logs-x1y2z3" / "L0000003-t1").mkdir(parents=True)
        (left / "pymp-abcdef").mkdir()
        other = (
            ladder.sys_tmp / "arena-ladder-0000ffff-1"
        )  # another ladder's (pid 1 is alive): not ours to remove
        other.mkdir()
        ladder.start()
        assert not left.exists(), "the next start removed what the killed server's tables left"
        assert other.is_dir(), "another ladder's directory is kept"
        assert ladder.process is not None
        mine = ladder.sys_tmp / f"arena-ladder-{ladder_id}-{ladder.process.pid}"
        assert mine.is_dir(), sorted(p.name for p in ladder.sys_tmp.iterdir())
        assert ladder.stop() == 0, ladder.tail()
        assert sorted(p.name for p in ladder.sys_tmp.iterdir()) == [other.name], (
            "a stop removes its own"
        )
    finally:
        if ladder.running:
            ladder.kill()
        ladder.remove_temp_dir()
