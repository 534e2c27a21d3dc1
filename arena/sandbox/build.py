"""Build a bot (or referee) image offline.

The build context is the bot's directory plus ``wheels/``: the arena-sdk and
arena wheels and every dependency, so the Dockerfile installs with
``pip install --no-index`` and the build runs with ``network_mode="none"``.
The base image is a build argument (``BASE_IMAGE``); with no registry
reachable it must already be on the engine (``scripts/docker-setup.sh`` makes
``arena-base:bookworm`` with debootstrap).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.sandbox.docker import LABEL, docker_client

DEFAULT_BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "python:3.11-slim")
BUILD_LABEL = "arena.built"
#: Where the source distributions live, relative to this file (a checkout).
REPO = Path(__file__).resolve().parents[2]


class BuildError(RuntimeError):
    """A build that cannot start or failed; the message says why (with the log's tail)."""


@dataclasses.dataclass(frozen=True)
class BuiltImage:
    """The result of a build: the image ID (no registry, so no repo digest) and its tag."""

    image_id: str
    tag: str | None
    log: list[str]


def wheel_dir() -> Path:
    """Where wheels are built: one cache per machine, rebuilt when the sources change."""
    return Path(os.environ.get("ARENA_WHEEL_CACHE", Path.home() / ".cache" / "arena" / "wheels"))


def build_wheels(dest: Path) -> list[Path]:
    """Wheels of arena-sdk, arena and all their dependencies into ``dest``.

    Dependencies come from the package index through pip's cache; the two
    local distributions are always rebuilt so the image has this checkout's code.
    """
    sources = [REPO / "sdk", REPO]
    if not all((s / "pyproject.toml").exists() for s in sources):
        raise BuildError(f"cannot find the arena sources to package (looked in {REPO})")
    dest.mkdir(parents=True, exist_ok=True)
    stamp = dest / "sources.sha256"
    fingerprint = _source_fingerprint()
    if stamp.exists() and stamp.read_text() == fingerprint and list(dest.glob("arena*.whl")):
        return sorted(dest.glob("*.whl"))  # this checkout's wheels are already there
    for old in dest.glob("arena*.whl"):
        old.unlink()
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(dest), *map(str, sources)]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-15:])
        raise BuildError(f"could not build the wheels for the image:\n{tail}")
    stamp.write_text(fingerprint)
    return sorted(dest.glob("*.whl"))


def _source_fingerprint() -> str:
    """A hash of everything that goes into the arena and arena-sdk wheels."""
    digest = hashlib.sha256()
    files = [REPO / "pyproject.toml", REPO / "sdk" / "pyproject.toml", REPO / "README.md"]
    files += sorted((REPO / "arena").rglob("*.py")) + sorted((REPO / "sdk" / "arena_sdk").rglob("*.py"))
    for path in files:
        if path.exists():
            digest.update(str(path.relative_to(REPO)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def prepare_context(source: Path, context: Path, wheels: list[Path]) -> None:
    """Copy the bot directory and the wheels into a fresh build context."""
    shutil.copytree(source, context, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".git"))
    target = context / "wheels"
    target.mkdir(exist_ok=True)
    for wheel in wheels:
        shutil.copy2(wheel, target / wheel.name)


def build_image(
    source: Path,
    *,
    tag: str | None = None,
    base_image: str = DEFAULT_BASE_IMAGE,
    client: Any = None,
    on_line: Callable[[str], None] | None = None,
) -> BuiltImage:
    """Build the image of the bot in ``source`` offline; returns its ID."""
    source = source.resolve()
    if not source.is_dir():
        raise BuildError(f"{source} is not a directory")
    dockerfile = source / "Dockerfile"
    if not dockerfile.is_file():
        raise BuildError(f"{source} has no Dockerfile (see example_bots/random/Dockerfile)")
    client = client or docker_client()
    import docker.errors

    try:
        client.images.get(base_image)
    except docker.errors.ImageNotFound:
        raise BuildError(
            f"base image {base_image!r} is not on this Docker engine and no registry is reachable; "
            f"run scripts/docker-setup.sh (it makes arena-base:bookworm) or pass --base-image"
        ) from None
    wheels = build_wheels(wheel_dir())
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix="arena-build-") as tmp:
        context = Path(tmp) / "context"
        prepare_context(source, context, wheels)
        image_id = None
        error = None
        try:
            stream = client.api.build(
                path=str(context),
                tag=tag,
                buildargs={"BASE_IMAGE": base_image},
                network_mode="none",
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
                labels={LABEL: "1", BUILD_LABEL: source.name},
            )
            for chunk in stream:
                if "stream" in chunk:
                    for line in chunk["stream"].splitlines():
                        if line.strip():
                            log.append(line)
                            if on_line is not None:
                                on_line(line)
                if "error" in chunk:
                    error = chunk["error"].strip()
                if "aux" in chunk and "ID" in chunk["aux"]:
                    image_id = chunk["aux"]["ID"]
        except docker.errors.APIError as exc:
            error = str(exc.explanation or exc)
    if error is not None or image_id is None:
        tail = "\n".join(log[-12:])
        raise BuildError(f"docker build of {source} failed: {error or 'no image produced'}\n{tail}".rstrip())
    return BuiltImage(image_id=image_id, tag=tag, log=log)
