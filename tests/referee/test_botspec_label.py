"""A ``--bot`` spec's label: the entry name ``arena sprt`` rates (docs/writing-a-bot.md, "Names: one rule")."""

from __future__ import annotations

import pytest

from arena.referee.botspec import parse_bot_spec


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        ("cmd:python example_bots/random/bot.py", "random"),  # a bot.py: its folder
        ("cmd:python mybot.py --seed 3", "mybot"),  # another script: its file
        ("cmd:node example_bots/node/bot.js", "node"),  # bot.<ext> in a folder too
        ("cmd:python -m arena_sdk.bots hard --worlds 12", "bots-hard"),  # not "12"
        ("cmd:python -m mybot", "mybot"),
        ("cmd:./run --depth 3", "run"),  # not the option's number
        ("cmd:mybot --level 2.5", "mybot"),
        ("docker:team-a:2", "team-a:2"),
        ("builtin:hard", "builtin-hard"),
    ],
)
def test_a_spec_is_labelled_by_what_names_the_bot(spec: str, label: str) -> None:
    assert parse_bot_spec(spec).label == label
