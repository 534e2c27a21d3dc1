"""Build a bot (or referee) image offline.

A bot's directory needs only ``bot.py``: without a Dockerfile it is built with
:data:`DEFAULT_DOCKERFILE`, ``FROM`` the *bot base image* (``arena-bot-base``:
the base Python image with arena-sdk in ``/venv``, a non-root user and
``/bot/bot.py`` as the entry point).  An optional ``requirements.txt`` is
installed from the wheels the author puts in ``wheels/`` (``--no-index``).
A custom Dockerfile can start ``FROM ${BOT_BASE}`` in three lines; the bot base
is built (or rebuilt when the SDK changes) on demand.  See docs/packaging.md.

Older-style Dockerfiles that install the SDK themselves still work: the build
context gets ``wheels/`` with the arena-sdk and arena wheels and every
dependency, so they install with ``pip install --no-index``.  Every build runs
with ``network_mode="none"``.  The base Python image is a build argument
(``BASE_IMAGE``); with no registry reachable it must already be on the engine
(``scripts/docker-setup.sh`` makes ``arena-base:bookworm`` with debootstrap).

The directory and its Dockerfile are hostile input.  The directory is
checked and copied by :mod:`arena.sandbox.bot_dir` (no links, devices, FIFOs
or sockets; size and file caps; normalised modes) and the Dockerfile must pass
:mod:`arena.sandbox.dockerfile_policy` (only the bot base or the base Python
image, no URL sources, no ``--from`` but its own stages, ...).  Both happen
before anything is sent to Docker; a refusal is a :class:`BuildError` naming
the path or the line, and leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.sandbox.bot_dir import (
    BotDirError,
    DirLimits,
    check_bot_dir,
    copy_bot_dir,
    read_regular_file,
)
from arena.sandbox.build_failure import explain_failure
from arena.sandbox.build_network import build_network
from arena.sandbox.build_run import BuildLimits, BuildStopped, image_size, run_build
from arena.sandbox.docker import LABEL, docker_client, env_labels
from arena.sandbox.dockerfile_policy import MAX_DOCKERFILE_CHARS, DockerfileError, check_dockerfile
from arena.sandbox.tree import remove_tree

DEFAULT_BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "python:3.11-slim")
#: The bot base image's repository (``ARENA_BOT_BASE`` overrides it, e.g. to keep test builds
#: apart).  A repository alone is tagged with the fingerprint of the SDK sources and base image
#: (:func:`bot_base_tag`), so checkouts sharing an engine never retag each other's base.
DEFAULT_BOT_BASE = os.environ.get("ARENA_BOT_BASE", "arena-bot-base")
BUILD_LABEL = "arena.built"
#: Label of the bot base image: a hash of the SDK sources and the base image it was built from.
BOT_BASE_LABEL = "arena.bot-base"

#: The bot base image: arena-sdk in /venv, a non-root user, /bot/bot.py as the entry point.
BOT_BASE_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE} AS build
COPY wheels/ /wheels/
RUN python3 -m venv /venv \\
 && PIP_DISABLE_PIP_VERSION_CHECK=1 /venv/bin/pip install --no-cache-dir --no-index --find-links /wheels arena-sdk

FROM ${BASE_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /venv /venv
WORKDIR /bot
USER 10001
ENTRYPOINT ["/venv/bin/python", "/bot/bot.py"]
"""

#: What ``arena bot build`` uses for a directory without a Dockerfile.
DEFAULT_DOCKERFILE = """\
# The default Dockerfile of `arena bot build`: the bot's directory on the bot base image.
ARG BOT_BASE=arena-bot-base
FROM ${BOT_BASE}
USER root
COPY . /bot/
# requirements.txt (optional) is installed offline from the wheels the author put in wheels/.
RUN cd /bot \\
 && if [ -f requirements.txt ]; then \\
      /venv/bin/pip install --no-cache-dir --no-index --find-links wheels -r requirements.txt; \\
    fi \\
 && rm -rf wheels Dockerfile && chmod -R a+rX /bot
USER 10001
"""
#: Where the source distributions live, relative to this file (a checkout).
REPO = Path(__file__).resolve().parents[2]


class BuildError(ArenaError, RuntimeError):
    """A build that cannot start or failed; the message says why (with the log's tail)."""


class BuildInterrupted(BuildError):
    """The build was stopped before it ended: ``reason`` is ``timeout``, ``disk`` or ``cancelled``.

    Its message is one line ("build timed out after 40 s"); its step containers are removed.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


#: The most of a build's log kept (its tail), however much it prints.
LOG_KEEP_CHARS = 64 * 1024


@dataclasses.dataclass(frozen=True)
class BuiltImage:
    """The result of a build: the image ID (no registry, so no repo digest), its tag, its log's tail."""

    image_id: str
    tag: str | None
    log: str


def wheel_dir() -> Path:
    """Where wheels are built: one cache per machine, one folder per version of the sources."""
    return Path(os.environ.get("ARENA_WHEEL_CACHE", Path.home() / ".cache" / "arena" / "wheels"))


#: Folders of other source versions older than this are removed from the cache.
STALE_WHEELS_S = 24 * 3600.0


def build_wheels(cache: Path) -> list[Path]:
    """Wheels of arena-sdk, arena and all their dependencies, from ``cache`` or built into it.

    Each version of the sources (their hash) has its own folder, built in a
    private staging folder and renamed into place when complete: two checkouts
    (or two processes of one test run) building at once never delete or
    half-write the wheels the other is copying.  Dependencies come from the
    package index through pip's cache.
    """
    sources = [REPO / "sdk", REPO]
    if not all((s / "pyproject.toml").exists() for s in sources):
        raise BuildError(f"cannot find the arena sources to package (looked in {REPO})")
    fingerprint = _source_fingerprint()
    dest = cache / fingerprint[:24]
    if (dest / COMPLETE_MARK).exists():
        with contextlib.suppress(OSError):
            os.utime(dest)  # in use: not stale for another checkout's clean-up
        return sorted(dest.glob("*.whl"))  # this checkout's wheels are already there
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=cache))
    try:
        _pip_wheel(sources, staging)
        (staging / COMPLETE_MARK).write_text(fingerprint)
        try:
            staging.rename(dest)
        except OSError:
            if not (dest / COMPLETE_MARK).exists():  # not "another process finished first"
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _remove_stale(cache, keep=dest)
    return sorted(dest.glob("*.whl"))


#: The file that marks a cache folder as complete (written last, before the rename).
COMPLETE_MARK = "sources.sha256"


def _pip_wheel(sources: list[Path], dest: Path) -> None:
    """The wheels of ``sources`` and their dependencies, and a pure-Python wheel of the SDK beside them.

    The SDK's wheel is built with its compiled core (``arena_sdk.engine._core``,
    Cython, with this machine's C compiler) for this interpreter's CPython
    version, so a bot image whose ``python3`` is the same minor version (the
    base image's; Debian bookworm's is 3.11) installs it with no compiler in
    the image.  Any other Python takes the pure wheel (``py3-none-any``,
    ``ARENA_SDK_PURE_BUILD=1``): pip prefers the compiled one where it fits.
    """
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(dest), *map(str, sources)]
    _run_pip(command, os.environ)
    pure = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(dest), str(sources[0])]
    _run_pip(pure, {**os.environ, "ARENA_SDK_PURE_BUILD": "1"})


def _run_pip(command: list[str], env: Mapping[str, str]) -> None:
    proc = subprocess.run(command, capture_output=True, text=True, env=dict(env))
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-15:])
        raise BuildError(f"could not build the wheels for the image:\n{tail}")


def _remove_stale(cache: Path, keep: Path) -> None:
    """Remove other source versions' folders (and the old flat layout's files) not used for a day."""
    cutoff = time.time() - STALE_WHEELS_S
    for entry in cache.iterdir():
        if entry == keep:
            continue
        with contextlib.suppress(OSError):  # another process may be removing it too
            if entry.lstat().st_mtime >= cutoff:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink()


def _source_fingerprint(*, sdk_only: bool = False) -> str:
    """A hash of everything that goes into the arena and arena-sdk wheels (or the SDK's alone)."""
    digest = hashlib.sha256()
    sdk = REPO / "sdk"
    files = [sdk / "pyproject.toml", sdk / "setup.py"]
    files += sorted(p for pattern in ("*.py", "*.pyx", "*.h") for p in (sdk / "arena_sdk").rglob(pattern))
    if not sdk_only:
        files += [REPO / "pyproject.toml", REPO / "README.md", *sorted((REPO / "arena").rglob("*.py"))]
    for path in files:
        if path.exists():
            digest.update(str(path.relative_to(REPO)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def prepare_context(source: Path, context: Path, wheels: list[Path], limits: DirLimits | None = None) -> None:
    """Copy the bot directory safely (:func:`~arena.sandbox.bot_dir.copy_bot_dir`) and the wheels into ``context``.

    ``context`` must not exist yet.  Raises :class:`BuildError` for a refused directory.
    """
    try:
        copy_bot_dir(source, context, limits)
    except BotDirError as exc:
        raise BuildError(str(exc)) from None
    target = context / "wheels"
    if target.exists() and not target.is_dir():
        raise BuildError(f"{source}/wheels is a file: it must be a directory of wheels")
    target.mkdir(exist_ok=True)
    for wheel in wheels:
        shutil.copy2(wheel, target / wheel.name)


def uses_bot_base(dockerfile: str) -> bool:
    """Whether a Dockerfile starts a stage from the bot base (``FROM ${BOT_BASE}``, ``ARG BOT_BASE`` declared).

    A Dockerfile the policy refuses counts when a ``FROM`` line names ``${BOT_BASE}``
    (such a file is built only as a trusted one: see :func:`build_image`).
    """
    try:
        return "BOT_BASE" in check_dockerfile(dockerfile).base_args
    except DockerfileError:
        return bool(re.search(r"^\s*FROM\s+\$\{?BOT_BASE\b", dockerfile, re.MULTILINE | re.IGNORECASE))


def _check_base_image(client: Any, base_image: str) -> Any:
    """The base Python image (an engine image: nothing can be pulled), or a BuildError."""
    import docker.errors

    try:
        return client.images.get(base_image)
    except docker.errors.ImageNotFound:
        raise BuildError(
            f"base image {base_image!r} is not on this Docker engine and no registry is reachable; "
            f"run scripts/docker-setup.sh (it makes arena-base:bookworm) or pass --base-image"
        ) from None


def bot_base_tag(tag: str, fingerprint: str) -> str:
    """The tag the bot base is kept under: ``REPO:<first 16 hex of fingerprint>`` for a repository
    alone; a tag with its own ``:TAG`` (or ``@digest``) as given (its owner chose it)."""
    if "@" in tag or ":" in tag.rsplit("/", 1)[-1]:
        return tag
    return f"{tag}:{fingerprint[:16]}"


def ensure_bot_base(
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    tag: str = DEFAULT_BOT_BASE,
    client: Any = None,
    on_line: Callable[[str], None] | None = None,
    build_limits: BuildLimits | None = None,
    cancel: threading.Event | None = None,
) -> str:
    """The bot base image's ID, built first if missing or made from other SDK sources or base.

    The image carries a label with a hash of this checkout's SDK sources and
    the base image's ID; when that differs, it is rebuilt (so a changed SDK
    reaches every bot built afterwards; server-side changes do not rebuild it).
    ``tag`` is a repository (the image is tagged with that hash: two checkouts
    with different SDK sources on one engine each keep their own base, and
    neither rebuilds the other's) or a full ``REPO:TAG`` to keep it under.

    One thread makes it while builds in the others wait for it.  ``build_limits``
    and ``cancel`` bound this as they bound a team's build (:func:`build_image`
    passes its own): past its timeout, or once ``cancel`` is set, it raises
    :class:`BuildInterrupted`, whether it is making the base (its step
    containers removed) or waiting for another thread to make it (the wait
    counts against the timeout).
    """
    client = client or docker_client()
    limits = build_limits or BuildLimits()
    waited = _wait_for_bot_base(limits.timeout_s, cancel)
    given = limits.timeout_s
    try:
        if given is not None:
            limits = dataclasses.replace(limits, timeout_s=max(BOT_BASE_POLL_S, given - waited))
        try:
            return _ensure_bot_base(client, base_image, tag, on_line, limits, cancel)
        except BuildInterrupted as exc:
            # The build's own timeout is named (the wait before it counted against it: 2.99999 s is no one's setting).
            said = f"build timed out after {given:g} s" if exc.reason == "timeout" and given is not None else str(exc)
            raise BuildInterrupted(exc.reason, f"{said} (making the bot base image)") from None
    finally:
        _BOT_BASE_LOCK.release()


#: Held while the bot base is looked at or made (builds run in several threads).
_BOT_BASE_LOCK = threading.Lock()
#: How often a build waiting for the bot base looks at its cancel and its timeout (seconds).
BOT_BASE_POLL_S = 0.2


def _wait_for_bot_base(timeout_s: float | None, cancel: threading.Event | None) -> float:
    """Take the bot base's lock; the seconds waited.  :class:`BuildInterrupted` past ``timeout_s`` or on ``cancel``."""
    started = time.monotonic()
    while True:
        if cancel is not None and cancel.is_set():
            raise BuildInterrupted("cancelled", "build cancelled while it waited for the bot base image")
        waited = time.monotonic() - started
        if timeout_s is not None and waited >= timeout_s:
            raise BuildInterrupted("timeout", f"build timed out after {timeout_s:g} s waiting for the bot base image")
        if _BOT_BASE_LOCK.acquire(timeout=BOT_BASE_POLL_S):
            if cancel is not None and cancel.is_set():  # set while it got the lock: nothing is made
                _BOT_BASE_LOCK.release()
                raise BuildInterrupted("cancelled", "build cancelled while it waited for the bot base image")
            return time.monotonic() - started


def _ensure_bot_base(
    client: Any, base_image: str, tag: str, on_line: Callable[[str], None] | None, limits: BuildLimits,
    cancel: threading.Event | None,
) -> str:  # fmt: skip
    base = _check_base_image(client, base_image)
    fingerprint = hashlib.sha256(f"{_source_fingerprint(sdk_only=True)}/{base.id}".encode()).hexdigest()
    tag = bot_base_tag(tag, fingerprint)
    import docker.errors

    try:
        existing = client.images.get(tag)
        if (existing.labels or {}).get(BOT_BASE_LABEL) == fingerprint:
            return str(existing.id)
    except docker.errors.ImageNotFound:
        pass
    wheels = build_wheels(wheel_dir())
    with tempfile.TemporaryDirectory(prefix="arena-bot-base-") as tmp:
        context = Path(tmp)
        (context / "Dockerfile").write_text(BOT_BASE_DOCKERFILE)
        (context / "wheels").mkdir()
        for wheel in wheels:
            shutil.copy2(wheel, context / "wheels" / wheel.name)
        built = _docker_build(
            client, context, tag=tag, what="the bot base image", on_line=on_line,
            buildargs={"BASE_IMAGE": base_image}, holder_image=str(base.id),
            labels={LABEL: "1", BUILD_LABEL: "arena-bot-base", BOT_BASE_LABEL: fingerprint},
            limits=limits, cancel=cancel,
        )  # fmt: skip
    return built.image_id


def build_image(
    source: Path,
    *,
    tag: str | None = None,
    base_image: str = DEFAULT_BASE_IMAGE,
    bot_base: str = DEFAULT_BOT_BASE,
    client: Any = None,
    on_line: Callable[[str], None] | None = None,
    limits: DirLimits | None = None,
    trusted: bool = False,
    build_limits: BuildLimits | None = None,
    cancel: threading.Event | None = None,
    scratch: Path | None = None,
    run_labels: Mapping[str, str] | None = None,
    shown_as: str | None = None,
) -> BuiltImage:
    """Build the image of the bot in ``source`` offline; returns its ID.

    ``shown_as`` names the bot's directory in error messages (default: its
    path; a ladder says "your upload": a team never sees the server's paths).
    A failed step's message names the step, the reason when it is a known
    one (offline pip, the network) and its last lines
    (:func:`arena.sandbox.build_failure.explain_failure`).

    The build context is copied into a new directory under ``scratch`` (the
    system's temporary directory by default; a server passes one of its own,
    which it empties when it starts: a kill -9 mid-build leaves nothing behind).
``run_labels`` go on the build's network holder (a server's ``arena.run``):
the run's next start prune removes the holder of a build killed with it.

    Without a Dockerfile, ``source`` needs ``bot.py`` and is built with
    :data:`DEFAULT_DOCKERFILE` on the bot base image ``bot_base`` (made first
    if needed).  A Dockerfile that starts ``FROM ${BOT_BASE}`` gets it too.

    ``source`` is checked and copied under ``limits`` (default
    :meth:`DirLimits.from_env`) and its Dockerfile must pass the policy of
    :mod:`arena.sandbox.dockerfile_policy`, unless ``trusted``: the
    organiser's own Dockerfiles (test images that declare a ``VOLUME`` on
    purpose); the directory checks apply to those too.

    ``build_limits`` bound the build (time, memory, CPU, disk:
    :mod:`arena.sandbox.build_run`); past one, or once ``cancel`` is set, it
    stops with :class:`BuildInterrupted`.  Safe to call from several threads
    at once, on one client or several (each build has its own connection;
    the bot base is made once).
    """
    source = source.resolve()
    what = shown_as or str(source)
    if not source.is_dir():
        raise BuildError(f"{what} is not a directory")
    text, default, limits = _dockerfile(source, limits, what)
    client = client or docker_client()
    base = _check_base_image(client, base_image)
    buildargs = _build_args(
        what, text, trusted, client, base, base_image=base_image, bot_base=bot_base, on_line=on_line,
        build_limits=build_limits, cancel=cancel,
    )  # fmt: skip
    if scratch is not None:
        scratch.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="arena-build-", dir=scratch)
    try:
        context = Path(tmp) / "context"
        if default:  # the bot base has the SDK: only the author's files (and wheels) go in
            try:
                copy_bot_dir(source, context, limits)
            except BotDirError as exc:
                raise BuildError(str(exc)) from None
        else:
            prepare_context(source, context, build_wheels(wheel_dir()), limits)
        (context / "Dockerfile").write_text(text)  # the text checked above, whatever the directory holds now
        built = _docker_build(
            client, context, tag=tag, what=what, on_line=on_line, buildargs=buildargs,
            holder_image=str(base.id), labels={**env_labels(), LABEL: "1", BUILD_LABEL: source.name},
            limits=build_limits, cancel=cancel, run_labels=run_labels,
        )  # fmt: skip
    finally:
        remove_tree(tmp, ignore_errors=True)  # a copy of a submission: never removed recursively
    return built


def _dockerfile(source: Path, limits: DirLimits | None, what: str) -> tuple[str, bool, DirLimits]:
    """The bot directory checked under ``limits`` (default: from the environment), its Dockerfile's text,
    whether that is the default one (it has none), and the limits; ``what`` names the directory in errors."""
    try:
        limits = limits or DirLimits.from_env()
        check_bot_dir(source, limits)  # before anything reaches Docker: a refusal costs a few lstat calls
        # The Dockerfile is read once, never through a link, and this exact text is what the build uses.
        raw = read_regular_file(source, "Dockerfile", MAX_DOCKERFILE_CHARS)
    except BotDirError as exc:
        raise BuildError(str(exc)) from None
    default = raw is None
    if default and not (source / "bot.py").is_file():
        raise BuildError(
            f"{what} has no Dockerfile and no bot.py: a bot directory needs at least bot.py "
            f"(built with the default Dockerfile), or a Dockerfile (see docs/packaging.md)"
        )
    try:
        text = DEFAULT_DOCKERFILE if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BuildError(f"{what}: its Dockerfile is not UTF-8 text") from None
    return text, default, limits


def _build_args(
    what: str, text: str, trusted: bool, client: Any, base: Any, *, base_image: str, bot_base: str,
    on_line: Callable[[str], None] | None, build_limits: BuildLimits | None, cancel: threading.Event | None,
) -> dict[str, str]:  # fmt: skip
    """The Dockerfile's policy checked (unless ``trusted``) and the build arguments it declares."""
    if trusted:
        wanted = {name for name in ("BASE_IMAGE", "BOT_BASE") if name in text}
    else:
        try:
            wanted = check_dockerfile(text).declared_args
        except DockerfileError as exc:
            raise BuildError(f"{what}: the Dockerfile policy refuses it: {exc} (see docs/packaging.md)") from None
    buildargs = {"BASE_IMAGE": str(base.id)} if "BASE_IMAGE" in wanted else {}  # only those it declares (no warning)
    if "BOT_BASE" in wanted:  # each holds an image the organiser chose; the bot base made under this build's bounds
        buildargs["BOT_BASE"] = ensure_bot_base(base_image=base_image, tag=bot_base, client=client, on_line=on_line,
                                                build_limits=build_limits, cancel=cancel)  # fmt: skip
    return buildargs


def _docker_build(
    client: Any,
    context: Path,
    *,
    tag: str | None,
    what: str,
    buildargs: dict[str, str],
    labels: dict[str, str],
    on_line: Callable[[str], None] | None,
    holder_image: str,
    limits: BuildLimits | None = None,
    cancel: threading.Event | None = None,
    run_labels: Mapping[str, str] | None = None,
) -> BuiltImage:
    """Run one offline build of ``context`` under ``limits``; a failure raises BuildError with the log's tail.

    The steps run in the network namespace of a holder container of ``holder_image`` (the build's
    base), which has no network endpoint (:mod:`arena.sandbox.build_network`).

    The build stopped by its timeout, its disk cap or ``cancel`` raises
    :class:`BuildInterrupted` (its step containers removed); an image over
    ``limits.image_bytes`` is removed and refused.
    """
    limits = limits or BuildLimits()
    try:
        with build_network(
            client, holder_image, on_note=on_line, timeout_s=limits.timeout_s, labels=run_labels
        ) as network_mode:
            result = run_build(
                client, context, tag=tag, buildargs=buildargs, labels=labels, limits=limits,
                keep_chars=LOG_KEEP_CHARS, on_line=on_line, cancel=cancel, network_mode=network_mode,
            )  # fmt: skip
    except BuildStopped as exc:
        raise BuildInterrupted(exc.reason, str(exc)) from None
    log = result.log
    if result.error is not None or result.image_id is None:
        raise BuildError(explain_failure(log.lines(200), result.error or "no image produced", what=what))
    if limits.image_bytes is not None:
        size = image_size(client, result.image_id)
        if size > limits.image_bytes:
            _remove_refused_image(client, tag or result.image_id)
            raise BuildError(
                f"the image of {what} is {human_size_mib(size)}, over the cap of {human_size_mib(limits.image_bytes)}"
            )
    return BuiltImage(image_id=result.image_id, tag=tag, log=log.text())


def human_size_mib(n: int) -> str:
    """``n`` bytes in MiB, for messages."""
    return f"{n / 2**20:.0f} MiB"


def _remove_refused_image(client: Any, name: str) -> None:
    """Remove the tag (or untagged image) of a refused build; never by force (an identical image may be in use)."""
    with contextlib.suppress(Exception):
        client.api.remove_image(name, noprune=False)
