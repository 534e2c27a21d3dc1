"""Packaging a bot (issue 14): `arena bot build DIR` with just bot.py, offline requirements,
a three-line Dockerfile on the bot base image, and clear errors.  Real Docker engine.

Everything this file builds carries a tag of its own (the bot base included,
through ``ARENA_BOT_BASE``) and is removed at the end; the engine is shared.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docker_support import BASE_IMAGE, engine_or_skip

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
RUN = f"{os.getpid()}"
BOT_BASE = f"arena-bot-base:test-{RUN}"


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    """The engine; removes every image this module tagged (bot base last) when done."""
    client = engine_or_skip("packaging tests")
    yield client
    for image in client.images.list(name="arena-pkg-test"):
        if any(t.endswith(f"-{RUN}") for t in image.tags):
            client.images.remove(image.id, force=True)
    try:
        client.images.remove(BOT_BASE, force=True)
    except Exception:  # never built (every test failed early)
        pass


@pytest.fixture
def arena(run_cli, engine, monkeypatch):
    """The real CLI, with this module's bot base tag and the offline base image."""
    monkeypatch.setenv("ARENA_BOT_BASE", BOT_BASE)
    monkeypatch.setenv("ARENA_BASE_IMAGE", BASE_IMAGE)
    return run_cli


def _tag(name: str) -> str:
    return f"arena-pkg-test:{name}-{RUN}"


def _bot_dir(root: Path, name: str, source: str | None = None) -> Path:
    path = root / name
    path.mkdir()
    if source is None:
        shutil.copy(REPO / "example_bots" / "random" / "bot.py", path / "bot.py")
    else:
        (path / "bot.py").write_text(source)
    return path


def _check(arena, tag: str) -> dict[str, Any]:
    result = arena("bot", "check", tag, "--json", timeout=180)
    verdict = json.loads(result.stdout)
    assert result.returncode == 0 and verdict["pass"], (result.stdout, result.stderr)
    return verdict


def test_a_directory_with_only_bot_py_builds_and_plays(arena, tmp_path):
    source = _bot_dir(tmp_path, "plain")
    built = arena("bot", "build", str(source), "--tag", _tag("plain"), timeout=600)
    assert built.returncode == 0, built.stderr
    assert built.stdout.strip().splitlines()[-1].startswith("sha256:")
    assert _check(arena, _tag("plain"))["bot"] == "random"
    words = arena("bot", "check", _tag("plain"), timeout=180)
    assert "ended after its one hand" in words.stdout and "(max_hands)" not in words.stdout


def _wheel(directory: Path, name: str, version: str, module: str) -> Path:
    """A pure-Python wheel of one module, written by hand (nothing is downloaded)."""
    directory.mkdir(exist_ok=True)
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": module,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


WHEELED_BOT = """
from arena_sdk import Bot, run
import nctag

class Wheeled(Bot):
    name = nctag.NAME

    def bid(self, view):
        return 1

    def play(self, view):
        return view.legal_cards()[0]

run(Wheeled())
"""


def test_requirements_are_installed_from_the_authors_wheels(arena, tmp_path):
    source = _bot_dir(tmp_path, "wheeled", WHEELED_BOT)
    (source / "requirements.txt").write_text("nctag==1.2\n")
    _wheel(source / "wheels", "nctag", "1.2", 'NAME = "from-a-wheel"\n')
    built = arena("bot", "build", str(source), "--tag", _tag("wheeled"), timeout=600)
    assert built.returncode == 0, built.stderr
    assert _check(arena, _tag("wheeled"))["bot"] == "from-a-wheel"


def test_a_three_line_dockerfile_on_the_bot_base(arena, tmp_path):
    source = _bot_dir(tmp_path, "custom", WHEELED_BOT.replace("import nctag", "").replace("nctag.NAME", "'custom'"))
    (source / "Dockerfile").write_text("ARG BOT_BASE=arena-bot-base\nFROM ${BOT_BASE}\nCOPY bot.py /bot/bot.py\n")
    (source / "notes.txt").write_text("not copied by this Dockerfile\n")
    built = arena("bot", "build", str(source), "--tag", _tag("custom"), timeout=600)
    assert built.returncode == 0, built.stderr
    assert _check(arena, _tag("custom"))["bot"] == "custom"


def test_the_bot_base_command_prints_the_image(arena, engine):
    result = arena("bot", "base", "--json", timeout=600)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    image = engine.images.get(BOT_BASE)
    assert data == {"image_id": image.id, "tag": BOT_BASE}
    assert image.attrs["Config"]["User"] == "10001"


def test_a_directory_without_bot_py_is_a_clear_error(arena, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "main.py").write_text("print('hi')\n")
    result = arena("bot", "build", str(empty))
    assert result.returncode == 2
    assert "has no Dockerfile and no bot.py" in result.stderr and "docs/packaging.md" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_requirement_missing_offline_is_a_clear_error(arena, tmp_path):
    source = _bot_dir(tmp_path, "missing")
    (source / "requirements.txt").write_text("numpy==1.26.4\n")
    result = arena("bot", "build", str(source), "--tag", _tag("missing"), timeout=600)
    assert result.returncode == 2, result.stdout
    error = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "'numpy==1.26.4'" in error[0] and "wheels/" in error[0], result.stderr
    assert "Traceback" not in result.stderr
