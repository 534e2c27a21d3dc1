"""A real ladder for the tests: ``arena ladder init``, teams, and ``arena ladder serve`` on 127.0.0.1."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker
import httpx
from docker_support import BASE_IMAGE
from tournament_support import free_port

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


def token_of(output: str) -> str:
    found = re.search(r"token(?: \(shown once(?:, keep it)?\))?:? ([A-Za-z0-9_-]{32})", output)
    assert found, output
    return found[1]


class Ladder:
    """A ladder directory with teams, and its server process (started and stopped by the test)."""

    def __init__(self, directory: Path, *settings: str, teams: tuple[str, ...] = ("alpha", "beta")) -> None:
        self.directory = directory
        made = cli("ladder", "init", str(directory), "--set", "max_hands=1", "--base-image", BASE_IMAGE)
        assert made.returncode == 0, made.stderr
        self.admin = token_of(made.stdout)
        toml = directory / "ladder.toml"
        text = toml.read_text()
        for setting in settings:  # "section.key=value" lines replace the template's
            section_key, value = setting.split("=", 1)
            key = section_key.split(".", 1)[1]
            text, n = re.subn(rf"(?m)^#? ?{re.escape(key)} = .*$", f"{key} = {value}", text)
            assert n == 1, setting
        toml.write_text(text)
        self.tokens = {}
        for team in teams:
            added = cli("ladder", "team", "add", str(directory), team)
            assert added.returncode == 0, added.stderr
            self.tokens[team] = token_of(added.stdout)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[str] | None = None
        self.log = directory / "serve.log"

    def start(self) -> None:
        log = self.log.open("a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena", "ladder", "serve", str(self.directory), "--port", str(self.port)],
            stdout=log, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/api/leaderboard", timeout=2).status_code == 200:
                    return
            assert self.process.poll() is None, self.log.read_text()
            time.sleep(0.2)
        raise AssertionError("the ladder server did not answer: " + self.log.read_text())

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        assert self.process is not None
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    def _headers(self, team: str | None, kw: dict[str, Any]) -> dict[str, str]:
        headers = dict(kw.pop("headers", None) or {})
        if team:
            headers["Authorization"] = f"Bearer {self.admin if team == 'admin' else self.tokens[team]}"
        return headers

    def get(self, path: str, team: str | None = None, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, headers=self._headers(team, kw), timeout=30, **kw)

    def post(self, path: str, team: str | None = None, **kw: Any) -> httpx.Response:
        return httpx.post(self.url + path, headers=self._headers(team, kw), timeout=60, **kw)

    def upload(self, team: str, archive: bytes, note: str = "") -> httpx.Response:
        return self.post("/api/submissions", team, files={"bot": ("bot.tar.gz", archive, "application/gzip")}, data={"note": note})

    def versions(self, team: str) -> list[dict[str, Any]]:
        return self.get("/api/me", team).json()["versions"]

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = 600) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            assert self.process is None or self.process.poll() is None, self.log.read_text()[-4000:]
            time.sleep(1.0)
        raise AssertionError(f"timed out waiting for {what}; server log:\n{self.log.read_text()[-4000:]}")


def tarball(files: dict[str, bytes | str], *, link: tuple[str, str] | None = None, raw_names: bool = False) -> bytes:
    """A .tar.gz of ``files`` (name -> content), optionally with a symlink (name, target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
        if link is not None:
            info = tarfile.TarInfo(link[0])
            info.type = tarfile.SYMTYPE
            info.linkname = link[1]
            tar.addfile(info)
    return buffer.getvalue()


def bot_source(marker: str, *, crash: bool = False) -> str:
    """A bot.py that plays like the random bot and writes ``marker`` to its log (stderr) when it starts."""
    body = "raise SystemExit('this bot crashes on purpose')" if crash else "run(Marked())"
    return (
        "import sys\n"
        "from arena_sdk import run\n"
        "from arena_sdk.testing import RandomBot\n\n"
        f"class Marked(RandomBot):\n    name = {marker!r}\n\n"
        f"print({marker!r}, file=sys.stderr, flush=True)\n"
        f"{body}\n"
    )


def ladder_id(ladder: Ladder) -> str:
    """The ladder's id (its containers carry ``arena.run=ladder-<id>``)."""
    with sqlite3.connect(ladder.directory / "ladder.sqlite") as db:
        return str(db.execute("SELECT value FROM meta WHERE key='ladder_id'").fetchone()[0])


@contextlib.contextmanager
def served(ladder: Ladder, client: Any) -> Iterator[Ladder]:
    """The ladder's server running; afterwards stopped, and none of its containers left (removed, then failed)."""
    run = f"ladder-{ladder_id(ladder)}"
    ladder.start()
    try:
        yield ladder
    finally:
        if ladder.process is not None and ladder.process.poll() is None:
            ladder.stop()
        # The low-level list: no inspect per container (one removed meanwhile would raise NotFound).
        left = client.api.containers(all=True, filters={"label": f"arena.run={run}"})
        for info in left:
            with contextlib.suppress(docker.errors.NotFound):
                client.api.remove_container(info["Id"], force=True)
        client.close()
        assert not left, f"containers left behind: {[(info.get('Names') or [info['Id'][:12]])[0] for info in left]}"
