"""``arena bot build`` and ``arena bot check``: bot images."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import console, fail, print_json
from arena.match import TimeControl
from arena.referee.botspec import BotSpec, BotSpecError
from arena.referee.local_match import MatchConfig, run_match
from arena.sandbox.build import DEFAULT_BASE_IMAGE, BuildError, build_image
from arena.sandbox.docker import DockerUnavailable, ImageNotFound, docker_client, image_id, image_volumes
from arena_sdk.engine import resolve_ruleset

app = typer.Typer(help="Build and check bot images.", no_args_is_help=True)

RANDOM_BOT = Path(__file__).resolve().parents[2] / "example_bots" / "random" / "bot.py"


@app.command("build")
def build(
    directory: Annotated[Path, typer.Argument(help="The bot's directory: a Dockerfile and its files.")],
    tag: Annotated[str | None, typer.Option(help="Tag for the image, e.g. mybot:1.")] = None,
    base_image: Annotated[
        str, typer.Option("--base-image", help="Base image (build argument BASE_IMAGE); env ARENA_BASE_IMAGE.")
    ] = DEFAULT_BASE_IMAGE,
    as_json: Annotated[bool, typer.Option("--json", help="Print the image ID as JSON.")] = False,
) -> None:
    """Build DIRECTORY into an image offline and print its image ID.

    The SDK wheel and its dependencies are copied into the build context and
    installed with --no-index; the build has no network.  There is no
    registry, so the image ID (not a repo digest) identifies the image.
    """
    try:
        built = build_image(
            directory,
            tag=tag,
            base_image=base_image,
            on_line=None if as_json else lambda line: console.print(f"[dim]{line}[/]", highlight=False),
        )
    except (BuildError, DockerUnavailable) as exc:
        fail(str(exc).replace("[", r"\["))
    if as_json:
        print_json({"image_id": built.image_id, "tag": built.tag})
    else:
        console.print(built.image_id, highlight=False)


@app.command("check")
def check(
    image: Annotated[str, typer.Argument(help="The image to check.")],
    timeout: Annotated[float, typer.Option(help="Seconds the bot gets to join.")] = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
) -> None:
    """Start IMAGE, check its handshake, and play a short game against the random bot.

    Passes when every seat of the image joins and its side plays the game
    without a strike or forfeit.  Exits 0 on pass, 1 on fail.  Also reports
    the image's VOLUME paths: seats get an empty read-only directory there.
    """
    try:
        client = docker_client()
    except DockerUnavailable as exc:
        fail(str(exc))
    try:
        image_id(client, image)
        volumes = image_volumes(client, image)
    except ImageNotFound as exc:
        fail(str(exc))
    finally:
        client.close()
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
        logs = {p.name: p.read_text(errors="replace")[-2000:] for p in (Path(tmp) / "logs").glob("*.log")}
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
    }
    if as_json:
        print_json(verdict)
    elif problems:
        console.print(f"[red]FAIL[/] {image}: " + "; ".join(problems), soft_wrap=True)
        for name, text in logs.items():
            if name in ("seat0.log", "seat2.log") and text.strip():
                console.print(f"[dim]--- {name} (tail)\n{text}[/]", highlight=False, soft_wrap=True)
    else:
        console.print(f"[green]PASS[/] {image}: bot {mine.name!r} joined and played a game ({game.ending})", soft_wrap=True)
    if volumes and not as_json:
        console.print(
            f"note: the image declares VOLUME {', '.join(volumes)}: seats get an empty read-only "
            "directory there, not a volume (write to /tmp)", soft_wrap=True, highlight=False,
        )  # fmt: skip
    raise typer.Exit(0 if not problems else 1)
