"""Collector tuning is process-wide and happens once (issue #16.10), not at every table."""

from __future__ import annotations

import gc

from referee_support import arun, running_referee


class Garbage:
    """Objects a finished table leaves behind."""

    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_starting_more_referees_freezes_nothing_more(sock_dir) -> None:
    async def start_and_stop(name: str) -> None:
        async with running_referee(f"unix:{sock_dir}/{name}.sock"):
            pass

    arun(start_and_stop("first"))
    frozen = gc.get_freeze_count()
    for i in range(3):
        leftovers = [Garbage() for _ in range(200)]  # a table's garbage
        del leftovers
        arun(start_and_stop(f"table{i}"))
    assert gc.get_freeze_count() <= frozen, "a later table froze objects for good"
    assert gc.get_threshold()[0] >= 20_000
