"""``arena submit``: pack a bot directory and upload it to a ladder server.

The directory is checked and copied under the same rules the server applies
(:func:`arena.sandbox.bot_dir.copy_bot_dir`: no links, devices or FIFOs;
caches such as ``__pycache__`` left out), packed as ``.tar.gz`` and sent to
``POST /api/submissions`` with the team's token.  A refusal by either side is
one line.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import httpx

from arena.errors import ArenaError
from arena.sandbox.bot_dir import BotDirError, DirLimits, copy_bot_dir

#: Seconds to wait for the server (an upload of tens of MiB on a slow link).
TIMEOUT_S = 120.0


class SubmitError(ArenaError):
    """The upload was not taken: one line saying why."""


def pack(bot_dir: Path, limits: DirLimits | None = None) -> bytes:
    """The bot directory as a .tar.gz (regular files and directories only)."""
    with tempfile.TemporaryDirectory(prefix="arena-submit-") as tmp:
        copy = Path(tmp) / "bot"
        try:
            copy_bot_dir(bot_dir, copy, limits)
        except BotDirError as exc:
            raise SubmitError(str(exc)) from None
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for path in sorted(copy.rglob("*")):
                tar.add(path, arcname=str(path.relative_to(copy)), recursive=False)
        return buffer.getvalue()


def submit(bot_dir: Path, server: str, token: str, note: str = "") -> dict[str, Any]:
    """Upload ``bot_dir`` as a new version of the token's team; returns the server's answer (the version)."""
    if not (bot_dir / "bot.py").is_file() and not (bot_dir / "Dockerfile").is_file():
        raise SubmitError(f"{bot_dir} has neither bot.py nor a Dockerfile (docs/packaging.md)")
    archive = pack(bot_dir)
    url = server.rstrip("/") + "/api/submissions"
    try:
        response = httpx.post(
            url,
            headers={"Authorization": f"Bearer {token}"},
            files={"bot": ("bot.tar.gz", archive, "application/gzip")},
            data={"note": note},
            timeout=TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise SubmitError(f"cannot reach {url}: {exc}") from None
    if response.status_code != 201:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        raise SubmitError(f"the server refused the upload ({response.status_code}): {detail}")
    return response.json()


__all__ = ["SubmitError", "pack", "submit"]
