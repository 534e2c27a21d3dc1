"""A ladder directory with a calendar, and a clock the test moves (the loop asks it for the phase)."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

from arena.ladder.calendar import iso
from arena.ladder.config import load_ladder_config


class MovableClock:
    """A clock the test sets; the loop calls it like ``datetime.now``."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now

    def __call__(self) -> datetime.datetime:
        return self.now


#: The section each key the tests set is in (``resolution`` is in [matchmaking] too).
SECTION = {"opens": "schedule", "deadline": "schedule", "final_until": "schedule", "choose_from": "final",
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
