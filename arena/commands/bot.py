"""``arena bot build`` and ``arena bot check``: bot images."""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import console, fail, print_json
from arena.commands.match import start_seconds
from arena.commands.preflight import EXIT_PLATFORM, start_problem
from arena.text import safe_text
from arena.match import TimeControl
from arena.referee.botspec import BotSpec, BotSpecError
from arena.referee.local_match import MatchConfig, MatchReport, run_match
from arena.sandbox.bot_dir import MAX_BYTES_ENV, MAX_FILES_ENV, BotDirError, DirLimits, human_size, parse_size
from arena.sandbox.build import DEFAULT_BASE_IMAGE, DEFAULT_BOT_BASE, BuildError, build_image, ensure_bot_base
from arena.sandbox.docker import (
    DockerUnavailable, ImageNotFound, SeatStartError, docker_client, image_id, image_volumes,
)  # fmt: skip
from arena.sandbox.dockerfile_policy import image_config_warnings
from arena.sandbox.preflight import preflight_run, prune_preflight
from arena_sdk.engine import resolve_ruleset

app = typer.Typer(help="Build and check bot images.", no_args_is_help=True)

RANDOM_BOT = Path(__file__).resolve().parents[2] / "example_bots" / "random" / "bot.py"


BaseImageOption = Annotated[
    str, typer.Option("--base-image", help="Base Python image (build argument BASE_IMAGE); env ARENA_BASE_IMAGE.")
]
BotBaseOption = Annotated[
    str, typer.Option("--bot-base", help="Tag of the bot base image (FROM ${BOT_BASE}); env ARENA_BOT_BASE.")
]


def _progress_line(as_json: bool) -> Callable[[str], None] | None:
    return None if as_json else lambda line: console.print(f"[dim]{safe_text(line)}[/]", highlight=False)


@app.command("build")
def build(
    directory: Annotated[
        Path, typer.Argument(help="The bot's directory: bot.py (and requirements.txt, wheels/), or a Dockerfile.")
    ],
    tag: Annotated[str | None, typer.Option(help="Tag for the image, e.g. mybot:1.")] = None,
    base_image: BaseImageOption = DEFAULT_BASE_IMAGE,
    bot_base: BotBaseOption = DEFAULT_BOT_BASE,
    as_json: Annotated[bool, typer.Option("--json", help="Print the image ID as JSON.")] = False,
    max_bytes: Annotated[
        str | None,
        typer.Option(
            "--max-bytes",
            help=f"Cap on the directory's files, e.g. 512m (default {human_size(DirLimits().max_bytes)}; env {MAX_BYTES_ENV}).",
        ),
    ] = None,
    max_files: Annotated[
        int | None,
        typer.Option(
            "--max-files",
            min=1,
            help=f"Cap on its files and directories (default {DirLimits().max_files}; env {MAX_FILES_ENV}).",
        ),
    ] = None,
) -> None:
    """Build DIRECTORY into an image offline and print its image ID.

    A directory with just bot.py is built with the default Dockerfile on the
    bot base image (made first if needed); requirements.txt, if present, is
    installed from the wheels in DIRECTORY/wheels/.  A Dockerfile of your own
    can start FROM ${BOT_BASE}.  The build has no network; there is no
    registry, so the image ID identifies the image.  The directory may hold
    only regular files and directories (no links, devices, FIFOs or sockets),
    and a Dockerfile may not fetch URLs or read other images: see docs/packaging.md.
    """
    limits = _dir_limits(max_bytes, max_files)
    try:
        built = build_image(
            directory, tag=tag, base_image=base_image, bot_base=bot_base, on_line=_progress_line(as_json), limits=limits
        )
    except (BuildError, DockerUnavailable) as exc:
        fail(str(exc))
    if as_json:
        print_json({"image_id": built.image_id, "tag": built.tag})
    else:
        console.print(built.image_id, highlight=False)


def _dir_limits(max_bytes: str | None, max_files: int | None) -> DirLimits:
    """The caps on the bot's directory: the environment's (or the defaults), then the options."""
    try:
        limits = DirLimits.from_env()
    except BotDirError as exc:
        fail(str(exc))
    if max_bytes is not None:
        try:
            limits = dataclasses.replace(limits, max_bytes=parse_size(max_bytes))
        except ValueError as exc:
            fail(f"--max-bytes: {exc}")
    if max_files is not None:
        limits = dataclasses.replace(limits, max_files=max_files)
    return limits


@app.command("base")
def base(
    base_image: BaseImageOption = DEFAULT_BASE_IMAGE,
    bot_base: BotBaseOption = DEFAULT_BOT_BASE,
    as_json: Annotated[bool, typer.Option("--json", help="Print the image ID as JSON.")] = False,
) -> None:
    """Build the bot base image (arena-bot-base) if it is missing or out of date; print its ID.

    It holds the arena SDK in /venv, runs as a non-root user and starts
    /bot/bot.py: a Dockerfile of your own needs only FROM, COPY and your
    files.  `arena bot build` makes it on demand too.
    """
    try:
        image = ensure_bot_base(base_image=base_image, tag=bot_base, on_line=_progress_line(as_json))
    except (BuildError, DockerUnavailable) as exc:
        fail(str(exc))
    if as_json:
        print_json({"image_id": image, "tag": bot_base})
    else:
        console.print(f"{image}  {safe_text(bot_base)}", highlight=False)


#: How a game ended, in words (``arena bot check`` plays a one-hand game, so usually the hand limit).
ENDINGS_IN_WORDS = {
    "target": "a side reached the target score",
    "floor": "a side fell to the losing floor",
    "max_hands": "ended after its one hand, as a check game does",
}


def ending_in_words(ending: str) -> str:
    """A game's ``ending`` code as a phrase; unknown codes (forfeits, voids) as they are."""
    return ENDINGS_IN_WORDS.get(ending, ending)


@app.command("check")
def check(
    image: Annotated[str, typer.Argument(help="The image to check.")],
    timeout: Annotated[float, typer.Option(help="Seconds the bot gets to join.")] = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
) -> None:
    """Start IMAGE, check its handshake, and play a short game against the random bot.

    Passes when every seat of the image joins and its side plays the game
    without a strike or forfeit.  Exits 0 on pass, 1 on fail.  Also warns
    about the image's HEALTHCHECK, VOLUME, STOPSIGNAL and ONBUILD settings
    (arena bot build refuses them): seats get an empty read-only directory
    at a VOLUME path.
    """
    start_seconds(timeout)
    try:
        client = docker_client()
    except DockerUnavailable as exc:
        fail(str(exc))
    run = preflight_run()  # this check's own label: its preflight container is pruned by it
    try:
        image_id(client, image)
        volumes = image_volumes(client, image)
        warnings = image_config_warnings(client.images.get(image).attrs.get("Config"))
        cannot_start = start_problem(client, image, run)  # started once before the game (issue 24, item 5)
    except ImageNotFound as exc:
        fail(str(exc))
    finally:
        prune_preflight(client, run)
        client.close()
    if cannot_start is not None:
        if as_json:
            print_json({"image": image, "pass": False, "bot": None, "problems": [cannot_start], "ending": None,
                        "volumes": volumes, "warnings": warnings})  # fmt: skip
        else:
            console.print(f"[red]FAIL[/] {safe_text(image)}: {safe_text(cannot_start)}", soft_wrap=True, highlight=False)
        raise typer.Exit(1)
    report, logs = _check_game(image, timeout)
    game = report.games[0]
    mine = report.totals[0]
    problems = []
    if game.forfeit is not None and game.forfeit["seat"] in mine.seats:
        problems.append(f"forfeit:{game.forfeit['reason']}: {game.forfeit['detail']}")
    if mine.strikes:
        problems.append(f"{mine.strikes} strike(s)")
    if game.void is not None:
        problems.append(f"the game was void: {game.void['detail']}")
    verdict = {
        "image": image,
        "pass": not problems,
        "bot": mine.name,
        "problems": problems,
        "ending": game.ending,
        "volumes": volumes,
        "warnings": warnings,
    }
    if as_json:
        print_json(verdict)
    elif problems:
        console.print(f"[red]FAIL[/] {safe_text(image)}: " + safe_text("; ".join(problems)), soft_wrap=True)
        for name, text in logs.items():
            if name in ("seat0.log", "seat2.log") and text.strip():
                console.print(f"[dim]--- {name} (tail)\n{safe_text(text, keep_newlines=True)}[/]", highlight=False, soft_wrap=True)
    else:
        console.print(f"[green]PASS[/] {safe_text(image)}: bot {safe_text(repr(mine.name))} joined and played a game ({ending_in_words(game.ending)})", soft_wrap=True)
    if not as_json:
        for warning in warnings:
            console.print(f"warning: {safe_text(warning)}", soft_wrap=True, highlight=False, markup=False)
    raise typer.Exit(0 if not problems else 1)


def _check_game(image: str, timeout: float) -> tuple[MatchReport, dict[str, str]]:
    """The check's one-hand game of IMAGE against the random bot, and the tail of each seat's log."""
    with tempfile.TemporaryDirectory(prefix="arena-check-") as tmp:
        config = MatchConfig(
            bots=(BotSpec("docker", image), BotSpec("cmd", f"python {RANDOM_BOT}")),
            rules=resolve_ruleset("pagat", {"max_hands": "1"}),
            games=1,
            seed="check",
            time_control=TimeControl(move_s=1.0, bank_s=10.0, hard_cap_s=30.0),
            out_dir=Path(tmp),
            match_id="check",
            start_timeout=timeout,
        )
        try:
            report = asyncio.run(run_match(config))
        except BotSpecError as exc:
            fail(str(exc))
        except SeatStartError as exc:  # the platform (the Docker engine) failed: no verdict on the image
            fail(str(exc), EXIT_PLATFORM)
        logs = {p.name: p.read_text(errors="replace")[-2000:] for p in (Path(tmp) / "logs").glob("*.log")}
    return report, logs
