"""The [submissions] build keys of ladder.toml (issue 36): written by the template, read, bad values one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.ladder.config import CONFIG_NAME, load_ladder_config, template
from arena.sandbox.build_run import BuildLimits
from arena.tournament.config import ConfigError


def write(directory: Path, *lines: str) -> Path:
    """A ladder directory whose template has ``key = value`` lines of [submissions] replaced."""
    directory.mkdir(exist_ok=True)
    text = template("t", "pagat", {})
    for line in lines:
        key = line.split("=", 1)[0].strip()
        kept = [row for row in text.splitlines() if not row.startswith(f"{key} = ")]
        at = kept.index("[submissions]") + 1
        text = "\n".join([*kept[:at], line, *kept[at:]]) + "\n"
    (directory / CONFIG_NAME).write_text(text)
    return directory


def test_the_template_writes_every_build_key_and_each_is_read(tmp_path: Path):
    text = template("t", "pagat", {})
    for key in ("build_timeout", "build_memory", "build_cpus", "max_image_size", "builders"):
        assert f"\n{key} = " in text, key
    config = load_ladder_config(write(tmp_path / "d"))
    assert config.submissions.build_limits == BuildLimits(timeout_s=600.0, memory=1 << 30, cpus=1.0, image_bytes=2 << 30)
    assert config.submissions.builders == 2
    changed = load_ladder_config(write(tmp_path / "e", "build_timeout = 40", 'build_memory = "512m"', "build_cpus = 0.5",
                                       'max_image_size = "1g"', "builders = 3"))  # fmt: skip
    assert changed.submissions.build_limits == BuildLimits(timeout_s=40.0, memory=512 << 20, cpus=0.5, image_bytes=1 << 30)
    assert changed.submissions.builders == 3


@pytest.mark.parametrize(
    "line, says",
    [
        ("build_timeout = 0", "build_timeout must be 1 to 86400"),
        ("build_timeout = nan", "build_timeout must be 1 to 86400"),
        ('build_timeout = "long"', "build_timeout must be"),
        ('build_memory = "lots"', "build_memory: expected a positive size"),
        ('build_memory = "1m"', "build_memory must be at least 32 MiB"),
        ("build_cpus = 0", "build_cpus must be 0.01 to 256"),
        ("build_cpus = inf", "build_cpus must be 0.01 to 256"),
        ("max_image_size = true", "max_image_size must be"),
        ('max_image_size = "10m"', "max_image_size must be at least 64 MiB"),
        ("builders = 0", "builders must be 1 to 16"),
        ("builders = 1.5", "builders must be a whole number"),
    ],
)
def test_a_bad_build_value_is_one_line(tmp_path: Path, line: str, says: str):
    with pytest.raises(ConfigError) as refused:
        load_ladder_config(write(tmp_path / "d", line))
    message = str(refused.value)
    assert says in message and "\n" not in message and message.startswith("[submissions]"), message
