"""The referee and SDK bots run on gRPC's polling transport (arena_sdk.transport).

gRPC's own tracer tells which transport moved the bytes: the EventEngine
endpoint logs from ``posix_endpoint.cc``, the polling I/O manager from
``tcp_posix.cc``.  A real match is played with that tracer on, and the
referee's output and every bot's log are read.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena_sdk.transport import EXPERIMENTS_ENV, TESTED_RELEASES, TUNED_EXPERIMENTS, prefer_polling_transport

REPO = Path(__file__).resolve().parents[2]
RANDOM = f"cmd:{sys.executable} {REPO / 'example_bots' / 'random' / 'bot.py'}"
#: The source files gRPC's tracer names for each transport.
POLLING = "tcp_posix.cc"
EVENT_ENGINE = "posix_endpoint.cc"


def test_sets_the_experiments_only_when_nobody_did():
    environ: dict[str, str] = {}
    assert prefer_polling_transport(environ) is True
    assert environ == {EXPERIMENTS_ENV: TUNED_EXPERIMENTS}
    assert prefer_polling_transport(environ) is False  # once is enough
    mine = {EXPERIMENTS_ENV: "-some_experiment"}
    assert prefer_polling_transport(mine) is False and mine[EXPERIMENTS_ENV] == "-some_experiment"
    empty = {EXPERIMENTS_ENV: ""}  # the documented way to keep gRPC's defaults
    assert prefer_polling_transport(empty) is False and empty[EXPERIMENTS_ENV] == ""


def test_only_for_the_grpc_releases_whose_experiments_these_are():
    import grpc

    from arena_sdk.transport import installed_grpc_release

    assert installed_grpc_release() == tuple(int(x) for x in grpc.__version__.split(".")[:2])
    assert installed_grpc_release() in TESTED_RELEASES, "a new grpcio: measure it, then add it (or not)"
    other: dict[str, str] = {}
    assert prefer_polling_transport(other, release=(1, 99)) is False and other == {}
    assert prefer_polling_transport(other, release=(1, 85)) is True


def _clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "200", **extra}


def _traced_match(tmp_path: Path, **extra: str) -> tuple[str, list[str]]:
    """Play one short match with gRPC's transport tracer on: (the referee's stderr, the bots' logs)."""
    out = tmp_path / "out"
    env = _clean_env(tmp_path, GRPC_TRACE="tcp,event_engine_endpoint", GRPC_VERBOSITY="debug", **extra)
    result = subprocess.run(
        [sys.executable, "-m", "arena", "match", "run", "--bot", RANDOM, "--bot", RANDOM,
         "--games", "1", "--set", "max_hands=1", "--seed", "transport", "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    logs = [(out / "logs" / f"seat{s}.log").read_text(errors="replace") for s in range(4)]
    return result.stderr, logs


def test_the_referee_and_every_bot_use_the_polling_transport(tmp_path):
    referee, bots = _traced_match(tmp_path)
    for who, text in [("referee", referee)] + [(f"seat {s}", log) for s, log in enumerate(bots)]:
        assert POLLING in text, f"{who}: no polling-transport trace"
        assert EVENT_ENGINE not in text, f"{who}: its messages went through the EventEngine endpoint"
        assert "Unknown experiment" not in text, f"{who}: gRPC does not know {TUNED_EXPERIMENTS}"


def test_an_empty_setting_keeps_grpcs_own_transport(tmp_path):
    # The opt-out, and the proof that the check above can fail.
    referee, bots = _traced_match(tmp_path, **{EXPERIMENTS_ENV: ""})
    for text in [referee, *bots]:
        assert EVENT_ENGINE in text and POLLING not in text


@pytest.mark.parametrize("module", ["arena_sdk.client", "arena.referee"])
def test_a_client_or_the_referee_sets_it_where_it_starts(module, tmp_path):
    code = f"import os, {module}, grpc; print(os.environ.get({EXPERIMENTS_ENV!r}))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_clean_env(tmp_path), timeout=60,
        cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == TUNED_EXPERIMENTS


@pytest.mark.parametrize("module", ["arena_sdk", "arena_sdk.engine"])
def test_importing_the_sdk_or_its_engine_changes_nothing(module, tmp_path):
    """The rules are pure: only a client or a server chooses gRPC's transport (issue 22)."""
    code = f"import os, {module}; print(os.environ.get({EXPERIMENTS_ENV!r}))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_clean_env(tmp_path), timeout=60,
        cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "None"


def test_an_unknown_experiment_is_what_gets_reported(tmp_path):
    """gRPC names an experiment it does not know on stderr: what the match test looks for."""
    code = "import grpc; grpc.insecure_channel('unix:/nonexistent').close()"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        env=_clean_env(tmp_path, **{EXPERIMENTS_ENV: "-no_such_experiment_here"}),
    )  # fmt: skip
    assert "Unknown experiment" in result.stderr, result.stderr


def test_a_tournaments_table_processes_and_bots_use_it_too(tmp_path):
    """Tables run in processes forked from a forkserver: the setting reaches them and their bots."""
    bot = f"cmd:{sys.executable} {REPO / 'example_bots' / 'random' / 'bot.py'}"
    (tmp_path / "t.toml").write_text(
        f'[tournament]\nname = "tr"\nseed = "transport"\ndeals_per_pairing = 1\nconcurrency = 2\noutput = "out"\n\n'
        f'[rules]\npreset = "pagat"\nset = {{ max_hands = 1 }}\n\n'
        f'[[entry]]\nname = "a"\nbot = "{bot}"\n\n[[entry]]\nname = "b"\nbot = "{bot}"\n'
    )
    env = _clean_env(tmp_path, GRPC_TRACE="tcp,event_engine_endpoint", GRPC_VERBOSITY="debug")
    result = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "run", "t.toml", "--no-show"],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    logs = sorted((tmp_path / "out" / "logs").rglob("*.log"))
    assert len(logs) >= 8, logs  # two tables of four seats
    for text in [result.stderr] + [p.read_text(errors="replace") for p in logs]:
        assert POLLING in text and EVENT_ENGINE not in text
