"""``arena play``'s bad input: one line on stderr and exit 2, before anything starts."""

from __future__ import annotations

import socket

import pytest

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seat", "Q"], "--seat: unknown seat 'Q'; seats are N, E, S, W"),
        (["--rules", "two-player", "--partner", "builtin:easy"], "the two-player game has no partner"),
        (["--opponent", "a", "--opponent", "b", "--opponent", "c"], "a four-player table has two opponents"),
        (["--opponent", "foo"], "bot 'foo' must start with cmd:"),
        (["--time-control", "abc"], "--time-control takes seconds"),
        (["--time-control", "nan"], "--time-control: move time must be"),
        (["--reconnect", "0"], "--reconnect must be more than 0"),
        (["--compare-with", "alphago"], "--compare-with takes one of hard, medium, easy, random"),
        (["--port", "70000"], "--port must be 0 to 65535"),
        (["--set", "max_hands=0"], "max_hands"),
        (["--player", ""], "--player takes 1 to 40 printable characters"),
        (["--json"], "--json goes with --stats"),
    ],
)
def test_bad_options_are_one_line_errors(run_cli, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    done = run_cli("play", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_port_in_use_is_a_one_line_error(run_cli) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("play", "--port", str(port), "--partner", "builtin:easy", "--opponent", "builtin:easy")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot serve the table" in done.stderr and "Traceback" not in done.stderr


def test_a_docker_bot_that_cannot_start_is_a_one_line_error_before_the_table_opens(run_cli) -> None:  # type: ignore[no-untyped-def]
    done = run_cli("play", "--opponent", "docker:arena-play-test-no-such-image:1", "--partner", "builtin:easy")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Your table" not in done.stdout
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Docker" in done.stderr or "arena-play-test-no-such-image" in done.stderr


def test_the_statistics_print_and_a_bad_file_is_said_and_left_alone(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    stats = tmp_path / "stats.json"
    done = run_cli("play", "--stats", "--json", "--stats-file", str(stats), "--player", "ann")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {**json.loads(done.stdout), "person": "ann", "games": 0, "hands": 0}
    assert not stats.exists()  # printing keeps nothing
    stats.write_text("[1, 2")
    done = run_cli("play", "--stats", "--stats-file", str(stats))
    assert done.returncode == 2 and "not JSON" in done.stderr and "Traceback" not in done.stderr
    assert stats.read_text() == "[1, 2"
