"""From an uploaded bot directory to a ranked version: build offline, validate, activate.

Everything a team uploads is hostile input.  The archive was unpacked on arrival
(:mod:`arena.ladder.site.uploads`) by :func:`arena.sandbox.bot_dir.extract_tar` (regular files and directories only:
no links, devices, ``..`` or absolute names; size and file-count caps), built
by :func:`arena.sandbox.build.build_image` (offline, the Dockerfile policy of
:mod:`arena.sandbox.dockerfile_policy`: only ``FROM`` the bot base, no URL
sources, no other images), and validated the way Kaggle validates an
episode: the new image plays a short game against itself in the sandbox
(every seat must join and play without a strike or forfeit).  Only then does
the version become its team's active one; a failed build or validation is
kept with its log (the team sees it) and changes nothing else.

Every build is bounded (``[submissions] build_timeout``, ``build_memory``,
``build_cpus``, ``max_image_size``: :mod:`arena.sandbox.build_run`) and its log
kept as a bounded tail.  The validation game's containers carry the ladder's
run label (a restart's prune finds them after a kill) and its record is kept
under ``DIR/validation/v<version id>/`` for the team to download.

:func:`build_and_validate` touches no store: it returns a
:class:`BuildOutcome` that the ladder's coordinator applies (it also counts
the attempts: a build interrupted by a killed server is built again when the
server starts, :data:`MAX_BUILD_ATTEMPTS` times at most, then it is marked failed).
It may run in several worker threads at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from arena_sdk.engine import seat_name

from arena.ladder.common.table_settings import TableSettings
from arena.ladder.versions.settings import SubmissionLimits
from arena.ladder.versions.lifecycle import DISABLED, FAILED, SUSPENDED
from arena.ladder.common.paths import source_dir, validation_dir
from arena.ladder.versions.store import Version
from arena.match import GameOutcome, MatchSpec, game_seeds
from arena.match.output import reproduce_command, struck_decisions, write_record
from arena.referee.botspec import BotSpec, BotSpecError, seat_assignment
from arena.referee.local_match import play_seated
from arena.sandbox.bot_dir import BotDirError, DirLimits
from arena.sandbox.build import LOG_KEEP_CHARS, BuildError, BuildInterrupted, build_image
from arena.sandbox.build_run import LogTail
from arena.sandbox.docker import RUN_LABEL, DockerUnavailable, SeatStartError
from arena.sandbox.engine_probe import engine_starts
from arena.sandbox.tree import remove_tree
from arena.tables.containers import prune_run

#: Times a version's build is started before it is marked failed (a server killed mid-build retries it).
MAX_BUILD_ATTEMPTS = 2
#: How often a validation game looks at its cancel flag (seconds).
CANCEL_POLL_S = 0.2
#: The most of one seat's log a validation log shows.
SEAT_LOG_CHARS = 4000
#: The most of a reason shown (one line).
REASON_CHARS = 300


class BuildSettings(TableSettings, Protocol):
    """What a build and its validation read of the ladder's configuration (a ``LadderConfig`` is one)."""

    @property
    def submissions(self) -> SubmissionLimits: ...


@dataclasses.dataclass(frozen=True)
class BuildOutcome:
    """What building and validating a version gave; the coordinator writes it to the store."""

    passed: bool
    """Built and validated: the coordinator activates it."""
    image_id: str | None
    build_log: str
    """The build's log, its tail only (at most about :data:`LOG_KEEP_CHARS`)."""
    validation_log: str
    """The validation game's summary and its seats' logs (bounded)."""
    reason: str | None
    """One line for a failed one ("build timed out after 40 s", "validation: forfeit:crash at seat 1 ...")."""
    validation_record: str | None
    """The kept validation game record, its path relative to the ladder directory."""


class EngineDown(Exception):
    """No Docker engine answered the build or its validation: the platform's outage, not the version's fault."""


class BuildCancelled(Exception):
    """``cancel`` was set during the build or the validation: the coordinator queues the version again."""


def dir_limits(config: BuildSettings) -> DirLimits:
    """The caps on an upload's unpacked directory (bytes, files; nesting: the default)."""
    return DirLimits(max_bytes=config.submissions.max_bytes, max_files=config.submissions.max_files)


def image_repository(ladder_id: str) -> str:
    """The repository of this ladder's images (every version's tag is in it, and nothing else's)."""
    return f"arena-ladder-{ladder_id}"


def image_tag(config: BuildSettings, version: Version, ladder_id: str) -> str:
    """The version's image tag: this ladder's, the version's id (team names may not be valid tags)."""
    return f"{image_repository(ladder_id)}:v{version.id}"


#: Statuses whose version can never play again: ``arena ladder clean`` removes their images.
SPENT = frozenset({FAILED, DISABLED, SUSPENDED})
_VERSION_TAG = re.compile(r"v(\d+)")


def ladder_images(client: Any, ladder_id: str) -> dict[str, int | None]:
    """This ladder's image tags on the engine, each with its version's id (None: a tag of no version)."""
    repository = image_repository(ladder_id)
    found: dict[str, int | None] = {}
    for image in client.images.list(name=repository):
        for tag in image.tags:
            name, _, suffix = tag.rpartition(":")
            if name == repository:  # only this ladder's (another ladder's id is another repository)
                number = _VERSION_TAG.fullmatch(suffix)
                found[tag] = int(number[1]) if number else None
    return found


@dataclasses.dataclass(frozen=True)
class Removal:
    """What :func:`remove_images` did: the tags removed, and those kept with why."""

    removed: tuple[str, ...]
    kept: tuple[tuple[str, str], ...]


def remove_images(client: Any, tags: list[str]) -> Removal:
    """Remove ``tags`` (the image goes with its last tag), never by force: one a container uses stays, with why."""
    import docker.errors

    removed, kept = [], []
    for tag in tags:
        try:
            client.api.remove_image(tag, noprune=False)
        except docker.errors.NotFound:
            continue  # removed meanwhile
        except docker.errors.APIError as exc:
            kept.append((tag, _one_line(str(exc.explanation or exc))))
            continue
        removed.append(tag)
    return Removal(tuple(removed), tuple(kept))


def _tail(text: str) -> str:
    return text if len(text) <= LOG_KEEP_CHARS else "[... earlier lines cut]\n" + text[-LOG_KEEP_CHARS:]


def _one_line(text: str) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= REASON_CHARS else line[:REASON_CHARS] + "..."


def build_and_validate(
    config: BuildSettings,
    version: Version,
    *,
    ladder_id: str,
    run_id: str,
    on_phase: Callable[[str, Mapping[str, Any]], None],
    cancel: threading.Event,
    client: Any = None,
) -> BuildOutcome:
    """Build ``version``'s image under the ladder's build limits, then play its validation game.

    Blocking (Docker's SDK is synchronous): run it in a worker thread.  It
    writes no store: ``on_phase("validating", {"image_id", "build_log"})`` is
    called (from this thread) when the build succeeded and the validation
    starts, and the outcome is returned.  Raises :class:`BuildCancelled` once
    ``cancel`` is set (the build's step containers and the validation's
    containers removed first, within a few seconds).
    """
    log = LogTail(LOG_KEEP_CHARS)
    try:
        built = build_image(
            source_dir(config, version), tag=image_tag(config, version, ladder_id),
            base_image=config.submissions.base_image, client=client, on_line=lambda line: log.write(line + "\n"),
            limits=dir_limits(config), build_limits=config.submissions.build_limits, cancel=cancel,
            scratch=config.directory / "tmp",  # emptied when the server starts (a kill mid-build leaves nothing)
            run_labels={RUN_LABEL: run_id},  # a server killed mid-build: its next start prunes the build's holder
        )  # fmt: skip
    except BuildInterrupted as exc:
        if exc.reason == "cancelled":
            raise BuildCancelled(str(exc)) from None
        if exc.reason == "timeout" and not _engine_well(config, run_id):  # a step the engine never started
            raise EngineDown(f"the engine could not start the build's steps: {exc}") from None
        log.write(f"{exc}\n")
        return BuildOutcome(False, None, log.text(), "", _one_line(str(exc)), None)
    except DockerUnavailable as exc:
        raise EngineDown(str(exc)) from None
    except (BuildError, BotDirError) as exc:
        if isinstance(exc, BuildError) and not _engine_well(config, run_id):  # the engine's failure, not a step's
            raise EngineDown(f"the engine went away during the build: {exc}") from None
        log.write(f"build failed: {exc}\n")
        return BuildOutcome(False, None, log.text(), "", _one_line(f"build failed: {exc}"), None)
    if cancel.is_set():
        raise BuildCancelled("cancelled after the build")
    log.write(f"built image {built.image_id}\n")
    build_log = log.text()
    on_phase("validating", {"image_id": built.image_id, "build_log": build_log})
    result = validate(config, built.image_id, version, run_id=run_id, cancel=cancel)
    return BuildOutcome(
        passed=result.passed, image_id=built.image_id, build_log=build_log, validation_log=result.log,
        reason=result.reason, validation_record=result.record,
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Validation:
    """The outcome of a validation game."""

    passed: bool
    log: str
    reason: str | None
    record: str | None
    """The game's record, relative to the ladder directory (None if no game was played)."""


#: Times a validation game is played when the platform failed it (a seat the engine could not start, a void
#: game) while the engine starts containers again at once; an engine that cannot waits (EngineDown) instead.
PLATFORM_TRIES = 2


class _PlatformFault(Exception):
    """The validation game failed by the platform's fault, not the image's."""


def validate(config: BuildSettings, image: str, version: Version, *, run_id: str, cancel: threading.Event) -> Validation:
    """Play a short game of ``image`` against itself in the sandbox, its containers under ``run_id``.

    The record goes to ``DIR/validation/v<version id>/`` (:func:`arena.ladder.common.paths.validation_dir`).  Raises :class:`BuildCancelled`
    when ``cancel`` is set (the game's containers removed).  A game the platform failed (a seat the engine
    could not start, a void) is never charged to the team: :class:`EngineDown` while the engine cannot start
    a container (the version is validated again once it can), else the game is played again; a platform
    that fails it :data:`PLATFORM_TRIES` times is reported as such, for the organiser to validate it again.
    """
    last: _PlatformFault | None = None
    for _try in range(PLATFORM_TRIES):
        try:
            return _validation_game(config, image, version, run_id=run_id, cancel=cancel)
        except _PlatformFault as fault:
            why = engine_starts(config.submissions.base_image, labels={RUN_LABEL: run_id})
            if why is not None:
                raise EngineDown(f"{fault}; {why}") from None
            last = fault
    text = (
        f"validation could not be played: the platform failed it {PLATFORM_TRIES} times ({last}); this is not "
        f"your bot's fault, and the organiser can validate it again (arena ladder admin revalidate DIR {version.entry})"
    )
    return Validation(False, text + "\n", _one_line(text), None)


def _validation_game(config: BuildSettings, image: str, version: Version, *, run_id: str, cancel: threading.Event) -> Validation:
    """One validation game (see :func:`validate`); :class:`_PlatformFault` when the platform failed it."""
    entry = version.entry
    rules = dataclasses.replace(config.rules, max_hands=config.submissions.validation_hands)
    match_id = f"validate-v{version.id}"
    # The ladder's whole time control (strikes and off-turn limits included): a version passes under the
    # rules it will be rated under.
    spec = MatchSpec(match_id=match_id, rules=rules, deal_seeds=tuple(game_seeds(f"validate-{entry}", 1)),
                     time_control=config.time_control)  # fmt: skip
    spec_bots = (BotSpec("docker", image), BotSpec("docker", image))
    out_dir = validation_dir(config.directory, version.id)
    saved: list[Path] = []

    def on_game_end(game: GameOutcome) -> None:
        saved.append(write_record(out_dir, game))

    (config.directory / "tmp").mkdir(parents=True, exist_ok=True)
    logs_dir = Path(tempfile.mkdtemp(prefix="arena-validate-", dir=config.directory / "tmp"))
    try:
        seat_bots = [spec_bots[b] for b in seat_assignment(rules.players, len(spec_bots))]
        try:
            hosted = asyncio.run(_until_cancelled(play_seated(
                spec, seat_bots, log_dir=logs_dir, limits=config.limits, start_timeout=config.start_timeout,
                on_game_end=on_game_end, labels={RUN_LABEL: run_id},
            ), cancel))  # fmt: skip
        except (asyncio.CancelledError, BuildCancelled):
            raise BuildCancelled("cancelled during the validation game") from None
        except DockerUnavailable as exc:
            raise EngineDown(str(exc)) from None
        except SeatStartError as exc:  # the engine could not start a seat (a wedged engine does this)
            raise _PlatformFault(f"a seat could not be started: {_one_line(str(exc))}") from None
        except BotSpecError as exc:
            return Validation(False, f"validation could not start: {exc}\n", _one_line(f"validation could not start: {exc}"), None)
        except Exception as exc:  # noqa: BLE001 - an image that breaks the platform is the image's problem here
            if not _engine_well(config, run_id):  # unless the engine itself went away meanwhile
                raise EngineDown(f"the engine went away during the validation: {exc}") from None
            why = f"validation failed to run: {type(exc).__name__}: {exc}"
            return Validation(False, why + "\n", _one_line(why), None)
        finally:
            prune_run(run_id, match_id)  # what the game's own clean-up did not remove (a cancel, a fault)
        logs = "".join(
            f"--- {p.name}\n{_read_tail(p)}\n" for p in sorted(logs_dir.glob("*.log"))
        )
    finally:
        remove_tree(logs_dir, ignore_errors=True)
    game = hosted.outcome.games[0]
    if game.void is not None:  # the platform's by definition (docs/architecture.md section 5)
        raise _PlatformFault(f"the game was void: {_one_line(str(game.void.get('detail', '')))}")
    record = str(saved[0].relative_to(config.directory)) if saved else None
    return _verdict(config, game, entry, record, logs)


def _verdict(config: BuildSettings, game: GameOutcome, entry: str, record: str | None, logs: str) -> Validation:
    """A played validation game's verdict: passed without a strike or forfeit, else what went wrong."""
    problems = []
    if game.forfeit is not None:
        problems.append(f"forfeit:{game.forfeit['reason']} at seat {game.forfeit['seat']}: {game.forfeit.get('detail', '')}")
    strikes = sum(st.strikes for st in game.stats)
    if strikes:
        problems.append(f"{strikes} strike(s)")
    head = (
        f"validation: a game of {entry} against itself ({config.submissions.validation_hands} hands): "
        + ("passed" if not problems else "FAILED: " + "; ".join(problems))
        + f" (ending {game.ending})\n"
    )
    if record is not None:
        head += f"the game's record: {record} (download it from your team's page)\n"
        head += "".join(f"reproduce: {line}\n" for line in _reproduce_lines(config, game, Path(record).name))
    reason = None if not problems else _one_line("validation: " + "; ".join(problems))
    return Validation(not problems, _tail(head + logs), reason, record)


def _engine_well(config: BuildSettings, run_id: str) -> bool:
    """Whether the engine starts a container now (a failure it caused is the platform's, not the team's)."""
    return engine_starts(config.submissions.base_image, labels={RUN_LABEL: run_id}) is None


async def _until_cancelled(work: Any, cancel: threading.Event) -> Any:
    """Run ``work``; cancel it (its clean-up runs) as soon as ``cancel`` is set."""
    task = asyncio.ensure_future(work)
    while not task.done():
        if cancel.is_set():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            raise BuildCancelled("cancelled")
        await asyncio.wait({task}, timeout=CANCEL_POLL_S)
    return task.result()


def _read_tail(path: Path) -> str:
    """The end of a seat's log (read from its end: a log can be large)."""
    with path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - SEAT_LOG_CHARS * 4))
        return f.read().decode("utf-8", "replace")[-SEAT_LOG_CHARS:]


def _reproduce_lines(config: BuildSettings, game: GameOutcome, record_name: str) -> list[str]:
    """Commands that ask the team's bot (``bot.py``) a struck or lost decision again, on the downloaded record."""
    tc = config.time_control
    clock = (round(tc.move_s * 1000), round(tc.bank_s * 1000), round(tc.hard_cap_s * 1000))
    found = [(st.seat, st.decision) for st in struck_decisions(game.record)]
    forfeit = game.forfeit or {}
    if "decision" in forfeit and forfeit.get("reason") not in ("timeout", "illegal"):
        seat = forfeit["seat"]
        found.append((seat if isinstance(seat, str) else seat_name(config.rules.players, int(seat)), forfeit["decision"]))
    return [reproduce_command("bot.py", record_name, str(seat), int(decision), clock) for seat, decision in found[:4]]


__all__ = [
    "MAX_BUILD_ATTEMPTS", "SPENT", "BuildCancelled", "EngineDown", "BuildOutcome", "Removal", "Validation", "build_and_validate",
    "dir_limits", "image_repository", "image_tag", "ladder_images", "remove_images", "source_dir",
    "validate",
]
