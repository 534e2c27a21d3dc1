"""The ladder charges CPU time by default (issue 36; docs/time-control.md, "Why the ladder charges CPU time").

`arena ladder init` writes ``clock = "cpu"`` in ``[time]``, a ladder.toml that
says no clock gets the CPU clock too, and ``clock = "wall"`` still chooses the
wall clock.  No Docker: only the files and the parsed configuration.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.ladder.config import CONFIG_NAME, load_ladder_config
from arena.tournament.config import ConfigError


def _init(run_cli, directory: Path) -> str:
    result = run_cli("ladder", "init", str(directory))
    assert result.returncode == 0, result.stderr
    return (directory / CONFIG_NAME).read_text()


def test_ladder_init_writes_and_reads_the_cpu_clock(run_cli, tmp_path: Path) -> None:
    text = _init(run_cli, tmp_path / "lad")
    time_section = text[text.index("[time]") : text.index("[limits]")]
    assert re.search(r'^clock = "cpu"', time_section, re.MULTILINE), time_section
    assert load_ladder_config(tmp_path / "lad").time_control.clock == "cpu"


def test_a_ladder_toml_without_a_clock_gets_the_cpu_clock_and_wall_is_still_chosen(run_cli, tmp_path: Path) -> None:
    directory = tmp_path / "lad"
    text = _init(run_cli, directory)
    config_path = directory / CONFIG_NAME
    config_path.write_text(re.sub(r'^clock = "cpu".*$', "", text, flags=re.MULTILINE))
    assert load_ladder_config(directory).time_control.clock == "cpu"
    config_path.write_text(re.sub(r'^clock = "cpu".*$', 'clock = "wall"', text, flags=re.MULTILINE))
    assert load_ladder_config(directory).time_control.clock == "wall"
    config_path.write_text(re.sub(r'^clock = "cpu".*$', 'clock = "sundial"', text, flags=re.MULTILINE))
    with pytest.raises(ConfigError, match=r"^\[time\] clock must be one of wall, cpu"):
        load_ladder_config(directory)
