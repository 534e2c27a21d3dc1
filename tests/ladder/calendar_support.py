"""A ladder directory with a calendar, and a clock the test moves (the loop asks it for the phase)."""

from __future__ import annotations

import datetime
import re
import sqlite3
from pathlib import Path

from arena.ladder.course.calendar import iso
from arena.ladder.config import load_ladder_config


class MovableClock:
    """A clock the test sets; the loop calls it like ``datetime.now``."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now

    def __call__(self) -> datetime.datetime:
        return self.now


#: The section each key the tests set is in (``resolution`` is in [matchmaking] too).
SECTION = {"opens": "schedule", "deadline": "schedule", "final_until": "schedule", "after_deadline": "schedule",
           "choose_from": "final",
           "los": "final", "resolution": "final", "bands": "grades", "missing": "grades"}  # fmt: skip


def set_keys(directory: Path, **values: object) -> None:
    """Replace ``key = ...`` lines of ``ladder.toml``'s calendar sections (times as ISO text, the rest as TOML)."""
    toml = directory / "ladder.toml"
    text = toml.read_text()
    for key, value in values.items():
        if isinstance(value, datetime.datetime):
            value = f'"{iso(value)}"'
        elif isinstance(value, str):
            value = f'"{value}"'
        head = text.index(f"[{SECTION[key]}]")
        body, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text[head:], count=1)
        text = text[:head] + body
        assert n == 1, key
    toml.write_text(text)
    load_ladder_config(directory)  # a bad edit fails here, not in the code under test


def frozen_ladder(directory: Path, rounds: int = 12, **keys: object):  # type: ignore[no-untyped-def]
    """A ladder whose final table is frozen: alpha beats beta and gamma, who split every pair (a tie).

    Teams alpha, beta, gamma (final versions ``@1``) and delta (no version: no place). The deadline
    and final_until are an hour or two past on the real clock: the loop, made once, freezes it.
    """
    from site_support import SyntheticLadder
    from standings_support import pair

    from arena.ladder.service import LadderService, open_results
    from arena.tables.players import LocalTables

    real = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    lad = SyntheticLadder(directory)
    set_keys(directory, deadline=real - 2 * datetime.timedelta(hours=1), final_until=real - datetime.timedelta(hours=1),
             resolution=400.0, **keys)  # fmt: skip
    for team in ("alpha", "beta", "gamma", "delta"):
        lad.add_team(team)
        if team != "delta":
            lad.add_version(team)
    with sqlite3.connect(lad.config.ladder_path) as db:  # they became active before the deadline
        db.execute("UPDATE versions SET activated=?", (iso(real - 3 * datetime.timedelta(hours=1)),))
    seq = 0
    for _ in range(rounds):
        for a, b, wins in (("alpha@1", "beta@1", 2), ("alpha@1", "gamma@1", 2), ("beta@1", "gamma@1", 1)):
            seq += 1
            for g in pair(seq, a, b, wins):
                lad.results.record_game(g)
    lad.config = load_ladder_config(directory)
    results = open_results(lad.config, lad.store.meta()["ladder_id"])
    LadderService(lad.config, lad.store, results, LocalTables()).close()  # the final_until freeze happens at its start
    results.close()
    return lad
