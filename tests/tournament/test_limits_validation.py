"""A tournament file's ``[limits]`` (issue 9, item 8): parseable, finite, in range, or exit 2.

``memory = "abc"``, ``cpus = 1e300``, ``tmpfs = "zzz"``, ``log_bytes = -1`` and
inf/nan used to be accepted and void every game (Docker refused each seat's
container).  Now ``arena tournament run`` refuses the file with one line naming
the key before it writes anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import one_clean_line, tournament_file
from tournament_support import BOTS, arena

from arena.tournament.config import ConfigError, load_config

#: The [rules] of the tournament files here: one hand (short).
RULES = "set = { max_hands = 1 }"
RANDOM = f"cmd:{sys.executable} {BOTS / 'random' / 'bot.py'}"

ABSURD = [
    ('memory = "abc"', "memory"),
    ('memory = "256mb"', "memory"),  # docker-py reads it, the static /proc files did not
    ('memory = "1k"', "memory"),  # below Docker's minimum
    ('memory = "99999999999999999999999999g"', "memory"),
    ('memory = ""', "memory"),
    ("cpus = 1e300", "cpus"),
    ("cpus = inf", "cpus"),
    ("cpus = nan", "cpus"),
    ("cpus = 0", "cpus"),
    ("cpus = 0.001", "cpus"),
    ("pids = 1e18", "pids"),  # a float: not a whole number
    ("pids = 1000000000000000000", "pids"),
    ("pids = 0", "pids"),  # 0 is "unlimited" to Docker
    ("pids = -1", "pids"),
    ('tmpfs = "zzz"', "tmpfs"),
    ('tmpfs = "0"', "tmpfs"),  # size 0 is "unlimited" to tmpfs
    ('tmpfs = "1.5m"', "tmpfs"),  # the kernel's size= takes no fraction
    ('tmpfs = "16b"', "tmpfs"),  # ... nor a b unit
    ("log_bytes = -1", "log_bytes"),
    ("log_bytes = 100000000000000", "log_bytes"),
    ("log_bytes = inf", "log_bytes"),  # a float: not a whole number
]


def _refused(tmp_path: Path, limits: str, key: str, bot: str = RANDOM) -> str:
    path = tmp_path / "t.toml"
    path.write_text(tournament_file(bot, name="limits", tournament='output = "out"', rules=RULES, limits=limits))
    result = arena(tmp_path, "tournament", "run", str(path), timeout=120)
    line = one_clean_line(result, f"[limits] {key}")
    assert not (tmp_path / "out").exists()  # refused before anything started
    return line


@pytest.mark.parametrize(("limits", "key"), ABSURD)
def test_absurd_limits_are_refused_with_one_line(tmp_path, limits, key):
    _refused(tmp_path, limits, key)


def test_a_long_refused_value_is_cut_short(tmp_path):
    line = _refused(tmp_path, f"cpus = {10**400}", "cpus")
    assert len(line) < 200


@pytest.mark.parametrize(
    ("limits", "memory", "cpus", "pids", "tmpfs", "log_bytes"),
    [
        ("", "256m", 1.0, 64, "16m", 1 << 20),
        ('memory = " 1.5G "\ncpus = 2\npids = 8\ntmpfs = "1m"\nlog_bytes = 0', "1.5G", 2.0, 8, "1m", 0),
        ('memory = "268435456"\ntmpfs = "4096k"', "268435456", 1.0, 64, "4096k", 1 << 20),
    ],
)
def test_sensible_limits_are_kept(tmp_path, limits, memory, cpus, pids, tmpfs, log_bytes):
    path = tmp_path / "t.toml"
    path.write_text(tournament_file(RANDOM, name="limits", tournament='output = "out"', rules=RULES, limits=limits))
    got = load_config(path).limits
    assert (got.memory, got.cpus, got.pids, got.tmpfs_size, got.log_cap_bytes) == (
        memory, cpus, pids, tmpfs, log_bytes,
    )  # fmt: skip


def test_the_example_file_is_within_the_ranges():
    load_config(Path(__file__).resolve().parents[2] / "tournaments" / "example.toml")


def test_more_cpus_than_the_engine_has_is_refused(tmp_path):
    """Docker refuses a quota above its machine's cores at every start: the file is refused instead."""
    from docker_support import BASE_IMAGE, engine_or_skip

    client = engine_or_skip("the CPU check")
    cores = int(client.info()["NCPU"])
    line = _refused(tmp_path, f"cpus = {cores + 1}", "cpus", bot=f"docker:{BASE_IMAGE}")
    assert f"{cores} CPUs" in line


def test_more_cpus_than_this_engine_has_is_fine_when_the_tables_play_on_a_cluster(tmp_path):
    """A cluster's workers may have more cores: the quota is not held to this machine's engine,
    whether the cluster is named in the file or only on the command line (the flag wins)."""
    from docker_support import BASE_IMAGE, engine_or_skip

    client = engine_or_skip("the CPU check")
    cores = int(client.info()["NCPU"])
    path = tmp_path / "t.toml"
    path.write_text(
        f'[tournament]\nname = "t"\nseed = 1\n[limits]\ncpus = {cores + 1}\n'
        f'[[entry]]\nname = "a"\nbot = "docker:{BASE_IMAGE}"\n'
        f'[[entry]]\nname = "b"\nbot = "docker:{BASE_IMAGE}"\n'
    )
    assert load_config(path, scheduler="tcp://127.0.0.1:8786").limits.cpus == cores + 1
    with pytest.raises(ConfigError, match="CPUs of this machine"):
        load_config(path)
