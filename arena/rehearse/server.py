"""The rehearsal's ladder: ``arena ladder init``, teams, and ``arena ladder serve`` as a subprocess.

The server is started, stopped and killed as an organiser would: through
the command line, in a directory of the rehearsal's own, on 127.0.0.1.  Its
temporary files go to a directory of the rehearsal's own (``TMPDIR``), so
what its table processes leave there is the rehearsal's to count, not the
machine's.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from arena.errors import ArenaError


class RehearsalError(ArenaError):
    """The rehearsal could not go on (its ladder would not start, a command failed)."""


#: The token line ``arena ladder init`` and ``team add`` print.
_TOKEN = re.compile(r"token(?: \(shown once(?:, keep it)?\))?:? ([A-Za-z0-9_-]{32})")


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> str:
    """Run ``arena ARGS`` (this interpreter's); its standard output, or :class:`RehearsalError` with its error."""
    done = subprocess.run(  # noqa: PLW1510 - the status is read below
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )  # fmt: skip
    if done.returncode != 0:
        raise RehearsalError(
            f"arena {' '.join(args[:3])} failed: {(done.stderr or done.stdout).strip()[-400:]}"
        )
    return done.stdout


def token_in(output: str) -> str:
    found = _TOKEN.search(output)
    if not found:
        raise RehearsalError("no token in the command's output")
    return found[1]


class LadderProcess:
    """A ladder directory and its ``serve`` process."""

    def __init__(self, directory: Path, *, env: dict[str, str] | None = None) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # Beside the ladder directory, not in it: a full disk under the ladder must not silence its console.
        self.log = directory.parent / "serve.log"
        # Short, under the system's: the tables' Unix sockets live below it (a socket path has 107 bytes at most).
        self.sys_tmp = Path(tempfile.mkdtemp(prefix="rehearsal-tmp-"))
        self.env = dict(env or {})
        self.process: subprocess.Popen[bytes] | None = None
        self.admin = ""
        self.starts = 0

    def init(self, settings: dict[str, str], *, base_image: str, max_hands: int) -> None:
        """``arena ladder init`` with ``settings`` (``"section.key": "toml value"``) written into ladder.toml."""
        if (self.directory / "ladder.toml").exists():
            raise RehearsalError(
                f"{self.directory} holds a ladder already: a rehearsal makes its own"
            )
        out = arena(
            "ladder",
            "init",
            str(self.directory),
            "--set",
            f"max_hands={max_hands}",
            "--base-image",
            base_image,
        )
        self.admin = token_in(out)
        toml = self.directory / "ladder.toml"
        text = toml.read_text()
        for section_key, value in settings.items():
            section, key = section_key.split(".", 1)
            part = re.search(rf"(?ms)^\[{re.escape(section)}\].*?(?=^\[|\Z)", text)
            if part is None:
                raise RehearsalError(f"ladder.toml has no [{section}]")
            body, n = re.subn(rf"(?m)^#? ?{re.escape(key)} = .*$", f"{key} = {value}", part[0])
            if n != 1:
                raise RehearsalError(f"ladder.toml has no {section}.{key}")
            text = text[: part.start()] + body + text[part.end() :]
        toml.write_text(text)

    def add_team(self, name: str) -> str:
        """``arena ladder team add``: the team's token."""
        return token_in(arena("ladder", "team", "add", str(self.directory), name))

    def start(self, timeout: float = 120) -> None:
        """``arena ladder serve`` in the background; returns once the site answers."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "arena", "ladder", "serve", str(self.directory), "--port", str(self.port)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, "TMPDIR": str(self.sys_tmp), **self.env},
                start_new_session=True,  # a group of its own: kill_group() reaches its tables, and nothing else
            )  # fmt: skip
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/api/leaderboard", timeout=5).status_code == 200:
                    return
            if self.process.poll() is not None:
                raise RehearsalError(
                    f"the ladder server exited with {self.process.returncode}: {self.tail()}"
                )
            time.sleep(0.3)
        raise RehearsalError(
            f"the ladder server did not answer within {timeout:g} s: {self.tail()}"
        )

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, sig: int, timeout: float = 120) -> int | None:
        """Send ``sig`` to the server and wait for it to exit; its exit status (None: it had to be killed)."""
        if self.process is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)
            return None
        finally:
            self.process = None

    def stop(self) -> int | None:
        """SIGTERM, as an organiser stops it (the ladder's own clean-up runs)."""
        return self.signal(signal.SIGTERM)

    def kill(self) -> int | None:
        """SIGKILL: no clean-up at all, as a crash or the OOM killer would."""
        return self.signal(signal.SIGKILL)

    def kill_group(self) -> int | None:
        """SIGKILL to the server's whole process group (its table processes too), as a machine's OOM or
        ``systemctl kill -s KILL`` would: nothing of the ladder's runs any clean-up."""
        if self.process is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        return self.signal(signal.SIGKILL)

    def remove_temp_dir(self) -> None:
        """Remove the server's temp directory (after the audit counted what was left in it)."""
        from arena.sandbox.tree import remove_tree

        remove_tree(self.sys_tmp, ignore_errors=True)

    def tail(self, chars: int = 3000) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-chars:]
        return ""


__all__ = ["LadderProcess", "RehearsalError", "arena", "free_port", "token_in"]
