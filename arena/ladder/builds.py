"""From an uploaded archive to a ranked version: unpack, build offline, validate, activate.

Everything a team uploads is hostile input.  The archive is unpacked by
:func:`arena.sandbox.bot_dir.extract_tar` (regular files and directories only:
no links, devices, ``..`` or absolute names; size and file-count caps), built
by :func:`arena.sandbox.build.build_image` (offline, the Dockerfile policy of
:mod:`arena.sandbox.dockerfile_policy`: only ``FROM`` the bot base, no URL
sources, no other images), and validated the way Kaggle validates an
episode: the new image plays a short game against itself in the sandbox
(every seat must join and play without a strike or forfeit).  Only then does
the version become its team's active one; a failed build or validation is
kept with its log (the team sees it) and changes nothing else.

A build interrupted by a killed server is built again when the server starts
(:data:`MAX_ATTEMPTS` times at most, then it is marked failed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.ladder.config import LadderConfig
from arena.ladder.store import ACTIVE, BUILDING, FAILED, VALIDATING, LadderStore, Version
from arena.match import TimeControl
from arena.referee.botspec import BotSpec, BotSpecError
from arena.referee.local_match import MatchConfig, run_match
from arena.sandbox.bot_dir import BotDirError, DirLimits, extract_tar
from arena.sandbox.build import BuildError, build_image
from arena.sandbox.docker import DockerUnavailable

#: Times a version's build is started before it is marked failed (a server killed mid-build retries it).
MAX_ATTEMPTS = 2
#: The most of a build's or a validation's log kept for the team to read.
LOG_KEEP_CHARS = 64 * 1024


def source_dir(config: LadderConfig, version: Version) -> Path:
    """Where a version's unpacked bot directory is kept (what it was built from)."""
    return config.directory / "submissions" / version.team / str(version.number)


def unpack(config: LadderConfig, archive: Path, dest: Path) -> None:
    """Unpack an upload into ``dest`` (new); :class:`BotDirError` (one line) if it breaks a rule."""
    limits = DirLimits(max_bytes=config.submissions.max_bytes, max_files=config.submissions.max_files)
    extract_tar(archive, dest, limits)


def image_tag(config: LadderConfig, version: Version, ladder_id: str) -> str:
    """The version's image tag: this ladder's, the version's id (team names may not be valid tags)."""
    return f"arena-ladder-{ladder_id}:v{version.id}"


def _tail(text: str) -> str:
    return text if len(text) <= LOG_KEEP_CHARS else "[... earlier lines cut]\n" + text[-LOG_KEEP_CHARS:]


def build_and_validate(
    config: LadderConfig,
    store: LadderStore,
    version: Version,
    ladder_id: str,
    ratings: Callable[[], dict[str, tuple[float, float, float, int]]],
    client: Any = None,
) -> str:
    """Build ``version``, validate it, and activate it; returns its final status (``active`` or ``failed``).

    Blocking (Docker's SDK is synchronous): the server runs it in a worker thread.
    """
    attempts = version.attempts + 1
    if attempts > MAX_ATTEMPTS:
        store.set_status(version.id, FAILED, build_log=_tail(version.build_log + f"\nbuild given up after {MAX_ATTEMPTS} attempts (the server stopped during each)\n"))
        return FAILED
    store.set_status(version.id, BUILDING, attempts=attempts)
    lines: list[str] = []
    source = source_dir(config, version)
    limits = DirLimits(max_bytes=config.submissions.max_bytes, max_files=config.submissions.max_files)
    try:
        built = build_image(
            source, tag=image_tag(config, version, ladder_id), base_image=config.submissions.base_image,
            client=client, on_line=lines.append, limits=limits,
        )
    except (BuildError, BotDirError, DockerUnavailable) as exc:
        store.set_status(version.id, FAILED, build_log=_tail("\n".join(lines) + f"\nbuild failed: {exc}\n"))
        return FAILED
    build_log = _tail("\n".join(lines) + f"\nbuilt image {built.image_id}\n")
    store.set_status(version.id, VALIDATING, image_id=built.image_id, build_log=build_log)
    passed, validation_log = validate(config, built.image_id, version.entry)
    if not passed:
        store.set_status(version.id, FAILED, validation_log=_tail(validation_log))
        return FAILED
    store.set_status(version.id, VALIDATING, validation_log=_tail(validation_log))
    store.activate(version, ratings())
    return ACTIVE


def validate(config: LadderConfig, image: str, entry: str) -> tuple[bool, str]:
    """Play a short game of ``image`` against itself in the sandbox; (passed, log)."""
    rules = dataclasses.replace(config.rules, max_hands=config.submissions.validation_hands)
    tc = config.time_control
    with tempfile.TemporaryDirectory(prefix="arena-validate-") as tmp:
        match = MatchConfig(
            bots=(BotSpec("docker", image), BotSpec("docker", image)),
            rules=rules,
            games=1,
            seed=f"validate-{entry}",
            time_control=TimeControl(move_s=tc.move_s, bank_s=tc.bank_s, hard_cap_s=tc.hard_cap_s, clock=tc.clock),
            out_dir=Path(tmp),
            match_id=f"validate-{entry}",
            start_timeout=config.start_timeout,
            limits=config.limits,
        )
        try:
            report = asyncio.run(run_match(match))
        except (BotSpecError, DockerUnavailable) as exc:
            return False, f"validation could not start: {exc}\n"
        except Exception as exc:  # noqa: BLE001 - an image that breaks the platform is the image's problem here
            return False, f"validation failed to run: {type(exc).__name__}: {exc}\n"
        logs = "".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}\n" for p in sorted((Path(tmp) / "logs").glob("*.log"))
        )
    game = report.games[0]
    problems = []
    if game.forfeit is not None:
        problems.append(f"forfeit:{game.forfeit['reason']} at seat {game.forfeit['seat']}: {game.forfeit.get('detail', '')}")
    strikes = sum(t.strikes for t in report.totals)
    if strikes:
        problems.append(f"{strikes} strike(s)")
    if game.void is not None:
        problems.append(f"the game was void: {game.void.get('detail', '')}")
    head = (
        f"validation: a game of {entry} against itself ({config.submissions.validation_hands} hands): "
        + ("passed" if not problems else "FAILED: " + "; ".join(problems))
        + f" (ending {game.ending})\n"
    )
    return not problems, head + logs


def remove_source(config: LadderConfig, version: Version) -> None:
    shutil.rmtree(source_dir(config, version), ignore_errors=True)


__all__ = ["MAX_ATTEMPTS", "build_and_validate", "image_tag", "source_dir", "unpack", "validate"]
