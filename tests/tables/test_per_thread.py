"""Per-thread SQLite connections are closed when their thread ends (thread pools start new threads all the time)."""

from __future__ import annotations

import gc
import os
import threading
from pathlib import Path

from arena.ladder.site.queries import PerThread as SitePerThread
from arena.ladder.store import LadderStore
from arena.results.store import ResultsStore


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def in_threads(work, count: int = 60) -> None:  # type: ignore[no-untyped-def]
    for _ in range(count):  # one after the other: each thread ends before the next starts
        t = threading.Thread(target=work)
        t.start()
        t.join()
    gc.collect()


def test_a_thread_that_ends_gives_its_connections_back(tmp_path: Path):
    """The finding (a review): 200 short-lived threads took the process from 12 to 812 open descriptors."""
    results = ResultsStore(tmp_path / "results.sqlite")
    ladder = LadderStore(tmp_path / "ladder.sqlite")
    site = SitePerThread(lambda: LadderStore(tmp_path / "ladder.sqlite"), LadderStore.close)
    before = open_descriptors()

    def request() -> None:  # what a pool thread does for one page
        results.finished_ids()
        ladder.meta()
        site.teams()

    in_threads(request)
    assert open_descriptors() <= before + 6, "connections of ended threads are still open"
    assert results._connections.open_count == 1 and ladder._connections.open_count == 1, "only this thread's"
    request()  # this thread's own still work, and close() closes them
    results.close()
    ladder.close()
    site.close_all()
    assert open_descriptors() <= before
