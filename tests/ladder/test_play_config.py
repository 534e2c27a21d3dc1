"""The [play] keys of ladder.toml (practice tables): written by the template, read, bad values one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.ladder.config import CONFIG_NAME, PlaySettings, load_ladder_config, template
from arena.tournament.config import ConfigError


def write(directory: Path, *lines: str, drop_section: bool = False) -> Path:
    """A ladder directory whose template has ``key = value`` lines of [play] replaced (or no [play] at all)."""
    directory.mkdir(exist_ok=True)
    text = template("t", "pagat", {})
    if drop_section:
        text = text[: text.index("\n[play]")] + "\n"
    for line in lines:
        key = line.split("=", 1)[0].strip()
        kept = [row for row in text.splitlines() if not row.startswith(f"{key} = ")]
        at = next(i for i, row in enumerate(kept) if row.startswith("[play]")) + 1
        text = "\n".join([*kept[:at], line, *kept[at:]]) + "\n"
    (directory / CONFIG_NAME).write_text(text)
    return directory


def test_the_template_writes_every_play_key_with_a_comment_and_each_is_read(tmp_path: Path):
    text = template("t", "pagat", {})
    for key in ("enabled", "tables", "per_team_per_day"):
        line = next(row for row in text.splitlines() if row.startswith(f"{key} = "))
        assert "#" in line, line
    assert load_ladder_config(write(tmp_path / "d")).play == PlaySettings(enabled=True, tables=2, per_team_per_day=10)
    changed = load_ladder_config(write(tmp_path / "e", "enabled = false", "tables = 5", "per_team_per_day = 0"))
    assert changed.play == PlaySettings(enabled=False, tables=5, per_team_per_day=0)
    # A ladder.toml from before [play]: the defaults.
    assert load_ladder_config(write(tmp_path / "f", drop_section=True)).play == PlaySettings()


@pytest.mark.parametrize(
    "line, says",
    [
        ('enabled = "yes"', "enabled must be"),
        ("tables = 0", "tables must be 1 to 64"),
        ("tables = 2.5", "tables must be a whole number"),
        ("per_team_per_day = -1", "per_team_per_day must be 0 to 10000"),
        ("seats = 3", "seats"),
    ],
)
def test_a_bad_play_value_is_one_line(tmp_path: Path, line: str, says: str):
    with pytest.raises(ConfigError) as refused:
        load_ladder_config(write(tmp_path / "d", line))
    message = str(refused.value)
    assert says in message and "\n" not in message, message
