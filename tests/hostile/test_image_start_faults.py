"""An image whose own configuration stops every container from starting (issue 24, item 5).

``VOLUME /sys/x`` makes the daemon refuse to start any container of the image
(HTTP 500: the read-only tmpfs the sandbox puts over a VOLUME path cannot be
mounted under ``/sys``).  That is the image's fault, not the platform's: the
seat is charged (a crash, counted toward disqualification), a run checks each
image once before it schedules games ("preflight"), and every command that
meets such an image says so in one clear line, escaped, with no traceback.
No preflight container is left behind, even when its removal fails, and an
image removed between a run's start and its preflight ends ``arena sprt``
in one line.

Each test builds its images from the offline base image (through the random
example bot), runs the real ``arena`` commands on the machine's engine, and
counts only this test run's containers (``tests/docker_support.py``).
"""

from __future__ import annotations

import asyncio
import io
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from docker_support import own_containers

from arena.sandbox.docker import BotStartFailed, DockerProcess, SeatStartError

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
RANDOM_CMD = f"cmd:{sys.executable} {REPO / 'example_bots' / 'random' / 'bot.py'}"
BAD_IMAGE = "arena-volsys:test"
#: The VOLUME path holds an escape sequence that would paint the rest of the line red.
ESCAPE_IMAGE = "arena-volsys-escape:test"
FAST = ["--set", "max_hands=1", "--move-time", "1", "--time-bank", "5"]


def derived_image(docker: Any, base: str, lines: str, tag: str) -> str:
    """``base`` with ``lines`` of Dockerfile on top, built by the engine itself (offline).

    Not through ``arena bot build``, which refuses a ``VOLUME``: an image built
    elsewhere (or a base image) can still carry one.
    """
    dockerfile = f"FROM {base}\n{lines}".encode()
    docker.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, network_mode="none", rm=True, pull=False)
    return tag


@pytest.fixture(scope="module")
def bad(docker: Any, images: Any) -> dict[str, str]:
    """The random bot's image under ``VOLUME /sys/x``, and with an escape sequence in the path."""
    random = images["random"]
    return {
        "random": random,
        "bad": derived_image(docker, random, "VOLUME /sys/x\n", BAD_IMAGE),
        "escape": derived_image(docker, random, 'VOLUME ["/sys/\\u001b[31mx"]\n', ESCAPE_IMAGE),
    }


def arena(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    both = result.stdout + result.stderr
    assert "Traceback" not in both, both[-3000:]


# ---------------------------------------------------------------------- the seat's own fault


def test_a_start_the_image_refuses_is_the_seats_crash_not_a_platform_fault(docker, bad, tmp_path):
    async def start(image: str) -> Any:
        proc = await DockerProcess.start(docker, image, {}, tmp_path, labels={"arena.match": "volsys-unit"})
        await proc.stop(grace=0)
        return proc

    with pytest.raises(BotStartFailed) as caught:
        asyncio.run(start(bad["bad"]))
    assert isinstance(caught.value, OSError)  # the match host charges an OSError to the seat as a crash
    assert "/sys/x" in str(caught.value)
    assert not own_containers(docker, label=["arena.match=volsys-unit"])  # the failed one and the control: gone
    asyncio.run(start(bad["random"]))  # the honest image starts with the same settings


def test_without_a_known_good_image_to_compare_a_refused_start_stays_the_platforms(docker, bad, tmp_path, monkeypatch):
    # No control image on the engine: the fault cannot be pinned on the image, so it is not charged.
    monkeypatch.setenv("ARENA_BASE_IMAGE", "arena-no-such-image:none")
    monkeypatch.setattr("arena.sandbox.docker.CONTROL_IMAGES", ())

    async def start() -> None:
        await DockerProcess.start(docker, bad["bad"], {}, tmp_path, labels={"arena.match": "volsys-unit2"})

    with pytest.raises(SeatStartError):
        asyncio.run(start())
    assert not own_containers(docker, label=["arena.match=volsys-unit2"])


# ---------------------------------------------------------------------- the commands


def test_a_tournament_charges_the_entry_whose_image_cannot_start(bad, tmp_path):
    (tmp_path / "t.toml").write_text(
        "\n".join([
            "[tournament]", 'name = "volsys"', 'seed = "volsys"', "deals_per_pairing = 1", "concurrency = 2",
            'output = "out"', "start_timeout = 60", "",
            "[rules]", 'preset = "pagat"', "set = { max_hands = 1 }", "",
            "[time]", "move = 1.0", "bank = 5.0", "",
            "[faults]", "void_retries = 1", "",
            "[[entry]]", 'name = "honest-a"', f'bot = "docker:{bad["random"]}"', "",
            "[[entry]]", 'name = "honest-b"', f'bot = "{RANDOM_CMD}"', "",
            "[[entry]]", 'name = "volsys"', f'bot = "docker:{bad["bad"]}"', "",
        ])  # fmt: skip
    )
    result = arena(tmp_path, "tournament", "run", "t.toml")
    no_traceback(result)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "could not be played" not in result.stdout, result.stdout
    # Reported once, by name, with the daemon's reason.
    notes = [line for line in result.stderr.splitlines() if "cannot start" in line]
    assert len(notes) == 1 and "volsys" in notes[0] and "/sys/x" in notes[0], result.stderr
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        games = db.execute("SELECT side0, side1, ending, forfeit_entry FROM games").fetchall()
        voids = db.execute("SELECT game_id FROM voids").fetchall()
        disqualified = dict(db.execute("SELECT entry, reason FROM disqualified").fetchall())
    assert len(games) == 6 and not voids  # 3 pairings x 1 deal x 2 tables, none voided
    honest = [g for g in games if "volsys" not in g[:2]]
    assert len(honest) == 2 and all(not g[2].startswith(("forfeit", "void")) for g in honest), honest
    charged = [g for g in games if "volsys" in g[:2]]
    assert all(g[2].startswith("forfeit") and g[3] == "volsys" for g in charged), charged
    assert "volsys" in disqualified and "cannot start" in disqualified["volsys"]
    standings = arena(tmp_path, "ratings", "show", "out")
    no_traceback(standings)


def test_match_run_says_the_image_cannot_start_and_exits_non_zero(bad, tmp_path):
    result = arena(tmp_path, "match", "run", "--bot", f"docker:{bad['bad']}", "--bot", RANDOM_CMD, "--games", "1",
                   *FAST, "--out", "m")  # fmt: skip
    no_traceback(result)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot start" in lines[0] and BAD_IMAGE in lines[0], result.stderr


def test_bot_check_fails_the_image_in_one_line(bad, tmp_path):
    result = arena(tmp_path, "bot", "check", bad["bad"])
    no_traceback(result)
    assert result.returncode == 1
    both = (result.stdout + result.stderr).strip()
    assert "FAIL" in both and "cannot start" in both and "/sys/x" in both, both


def test_sprt_stops_naming_the_candidate_and_accepts_nothing(bad, tmp_path):
    result = arena(tmp_path, "sprt", "--bot", f"docker:{bad['bad']}", "--bot", f"docker:{bad['random']}",
                   "--elo0", "0", "--elo1", "200", "--max-pairs", "2", "--pairs-per-table", "1", *FAST,
                   "--seed", "volsys", "--out", "s")  # fmt: skip
    no_traceback(result)
    assert result.returncode not in (0, 3, 4), result.stdout  # neither hypothesis, nor "inconclusive"
    both = result.stdout + result.stderr
    assert "accepted" not in both, both
    assert "cannot start" in result.stderr and BAD_IMAGE in result.stderr, result.stderr


def test_the_daemons_text_reaches_the_terminal_escaped(bad, tmp_path):
    for args in (
        ["match", "run", "--bot", f"docker:{bad['escape']}", "--bot", RANDOM_CMD, "--games", "1", *FAST, "--out", "m"],
        ["bot", "check", bad["escape"]],
        ["sprt", "--bot", f"docker:{bad['escape']}", "--bot", RANDOM_CMD, "--elo0", "0", "--elo1", "200",
         "--max-pairs", "1", "--pairs-per-table", "1", *FAST, "--seed", "e", "--out", "s"],
    ):  # fmt: skip
        result = arena(tmp_path, *args)
        no_traceback(result)
        both = result.stdout + result.stderr
        assert result.returncode != 0 and "cannot start" in both, both
        assert "\x1b" not in both and "/sys/" in both, repr(both[-2000:])


# ---------------------------------------------------------------------- nothing of a preflight is left behind


def preflight_leftovers(docker: Any) -> list[dict[str, Any]]:
    """This test run's preflight containers (any state): those whose match label is a preflight's."""
    return [c for c in own_containers(docker) if (c.get("Labels") or {}).get("arena.match", "").startswith("preflight")]


def test_a_check_whose_container_removal_fails_leaves_nothing_behind(docker, bad, monkeypatch):
    from arena.commands import preflight as command
    from arena.referee.botspec import BotSpec
    from arena.sandbox.docker import docker_client

    def failing_removal_client() -> Any:
        # Each container's first removal fails (the daemon busy): the retry, or the run's prune, removes it.
        client = docker_client()
        real, calls = client.api.remove_container, set()

        def remove_container(container: Any, **kwargs: Any) -> Any:
            container_id = container if isinstance(container, str) else container["Id"]
            if container_id not in calls:
                calls.add(container_id)
                raise RuntimeError("removal of container failed: device or resource busy")
            return real(container, **kwargs)

        client.api.remove_container = remove_container
        return client

    monkeypatch.setattr(command, "docker_client", failing_removal_client)
    with pytest.raises(typer.Exit) as caught:  # the good image starts; the bad one cannot: exit 2
        command.check_images_start([BotSpec("docker", bad["random"]), BotSpec("docker", bad["bad"])])
    assert caught.value.exit_code == 2
    assert not preflight_leftovers(docker)


def test_bot_check_and_match_run_leave_no_preflight_container(docker, bad, tmp_path):
    for args in (
        ["bot", "check", bad["bad"]],
        ["bot", "check", bad["random"]],
        ["match", "run", "--bot", f"docker:{bad['random']}", "--bot", f"docker:{bad['bad']}", "--games", "1",
         *FAST, "--out", "m"],
    ):  # fmt: skip
        result = arena(tmp_path, *args)
        no_traceback(result)
        assert not preflight_leftovers(docker), args
        assert not own_containers(docker), args  # the game's seats too, once the command is done


def test_sprt_with_an_image_removed_since_it_was_resolved_ends_in_one_line(docker, bad, tmp_path, monkeypatch):
    from arena_sdk.engine import resolve_ruleset

    from arena.match import TimeControl
    from arena.ratings.sprt import Settings
    from arena.referee.botspec import BotSpecError, parse_bot_spec
    from arena.sprt import SprtConfig, run_sprt, runner

    # An image of its own (a label makes it another image), removed right after the run resolved it.
    doomed = derived_image(docker, bad["random"], f'LABEL arena.test.doomed="{tmp_path.name}"\n', "arena-doomed:test")
    resolve = runner.resolve_image_ids

    def resolve_then_remove(specs: Any, client: Any) -> dict[str, str | None]:
        ids = resolve(specs, client)
        docker.images.remove(docker.images.get(doomed).id, force=True)
        return ids

    monkeypatch.setattr(runner, "resolve_image_ids", resolve_then_remove)
    config = SprtConfig(
        new=parse_bot_spec(f"docker:{doomed}"), old=parse_bot_spec(RANDOM_CMD), settings=Settings(0, 200),
        rules=resolve_ruleset("pagat", {"max_hands": "1"}), time_control=TimeControl(), seed="doomed",
        out=tmp_path / "s", max_pairs=1, pairs_per_table=1,
    )  # fmt: skip
    with pytest.raises(BotSpecError) as caught:
        run_sprt(config)
    assert "not found" in str(caught.value)
    assert not (tmp_path / "s" / "results.sqlite").exists()  # stopped before the test's store
