"""A team's upload, from the first byte of its request to a ``queued`` version: everything refused as early as it can be.

The order is the point (each step runs only if the ones before it passed):

1. the caller is a signed-in team (the route's dependency: no body byte is read for anyone else);
2. the team has quota left today (checked before reading, and again atomically when its version is made);
3. the body is a multipart form: it is parsed as it arrives (python-multipart's streaming parser), the
   archive written straight to ``DIR/tmp`` and cut off past ``[submissions] max_bytes`` (413), the note
   past 500 characters (400);
4. the archive is unpacked under the bot-directory rules (:func:`unpack`, in a worker thread) and must
   hold ``bot.py`` or a ``Dockerfile`` at its top;
5. only then is the version made (``uploading``), its files moved in, and it is ``queued``.

A refusal before the body is read in full answers with ``Connection: close``: the server reads no more of
it.  A client gone mid-upload (or cut off by the server's body timeouts) leaves nothing: the spool file
and the half-unpacked tree are removed.  A failure after the version exists (the files could not be
moved in) marks it ``failed`` with the reason at once.  Quota: a refused upload, or one that failed
before its files were in place, does not count; every version that reached ``queued`` counts, whether
its build then succeeds or not (docs/ladder.md).
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from fastapi import HTTPException, Request
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from arena.ladder.course.calendar import Calendar, upload_refusal, utc_now
from arena.ladder.common.ladder_db import LadderError
from arena.ladder.store import LadderStore
from arena.ladder.versions.lifecycle import FAILED, QUEUED, IllegalTransition
from arena.ladder.versions.store import Version
from arena.sandbox.bot_dir import BotDirError, DirLimits, extract_tar
from arena.sandbox.tree import remove_tree

#: Characters a version's note may have.
NOTE_CHARS = 500
#: Bytes a request body may have beyond the upload cap (the note, multipart framing).
FORM_SLACK = 64 * 1024
#: Parts a submission form may have (the archive, the note, and room for a client's extra field).
MAX_PARTS = 4
#: Sent with every refusal made before the body was read in full: the rest of it is not read.
CLOSE = {"Connection": "close"}

#: The request body of the upload routes, for the OpenAPI schema (the routes parse it themselves).
OPENAPI_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["bot"],
                    "properties": {
                        "bot": {"type": "string", "format": "binary", "description": "the bot directory as a tar archive"},
                        "note": {"type": "string", "maxLength": NOTE_CHARS},
                    },
                }
            }
        },
    }
}


class _Limits(Protocol):
    @property
    def max_bytes(self) -> int: ...
    @property
    def max_files(self) -> int: ...
    @property
    def daily_quota(self) -> int: ...


class _HasSubmissions(Protocol):
    @property
    def submissions(self) -> _Limits: ...


class UploadSettings(_HasSubmissions, Protocol):
    """What an upload reads of the ladder's settings (a ``LadderConfig`` or the site's ``SiteSettings``;
    a ``calendar`` too when it has one)."""

    @property
    def directory(self) -> Path: ...


def unpack(config: _HasSubmissions, archive: Path, dest: Path) -> None:
    """Unpack an upload into ``dest`` (new); :class:`BotDirError` (one line) if it breaks a rule."""
    limits = DirLimits(max_bytes=config.submissions.max_bytes, max_files=config.submissions.max_files)
    extract_tar(archive, dest, limits)


def refused(status: int, detail: str) -> HTTPException:
    """A refusal sent before the body was read in full (the connection is closed after it)."""
    return HTTPException(status, detail, headers=CLOSE)


class _Form:
    """The callbacks of the streaming multipart parser: the ``bot`` part into a file, the ``note`` in memory."""

    def __init__(self, archive: Path, max_bytes: int) -> None:
        self.file = archive.open("wb")
        self.max_bytes = max_bytes
        self.size = 0
        self.parts = 0
        self.got_bot = False
        self.note = bytearray()
        self._headers: dict[bytes, bytes] = {}
        self._field = bytearray()
        self._value = bytearray()
        self._target: str | None = None

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_part_begin": self.part_begin, "on_header_field": self.header_field,
            "on_header_value": self.header_value, "on_header_end": self.header_end,
            "on_headers_finished": self.headers_finished, "on_part_data": self.part_data,
        }  # fmt: skip

    def part_begin(self) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise refused(400, f"the form has more than {MAX_PARTS} parts: send `bot` (the archive) and `note`")
        self._headers, self._target = {}, None

    def header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def header_end(self) -> None:
        if len(self._headers) < 8:
            self._headers[bytes(self._field).lower()] = bytes(self._value)
        self._field, self._value = bytearray(), bytearray()

    def headers_finished(self) -> None:
        _, options = parse_options_header(self._headers.get(b"content-disposition"))
        name = options.get(b"name")
        if name == b"bot":
            if self.got_bot:
                raise refused(400, "the form has two `bot` parts: send one archive")
            self.got_bot, self._target = True, "bot"
        elif name == b"note":
            self._target = "note"

    def part_data(self, data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if self._target == "bot":
            self.size += len(chunk)
            if self.size > self.max_bytes:
                raise refused(413, f"the upload is over the ladder's limit of {self.max_bytes / 1048576:.1f} MiB")
            self.file.write(chunk)
        elif self._target == "note":
            self.note += chunk
            if len(self.note) > 4 * NOTE_CHARS:
                raise refused(400, f"the note is over {NOTE_CHARS} characters")


async def _receive(request: Request, archive: Path, max_bytes: int) -> str:
    """Parse the form as it arrives: the archive into ``archive``; returns the note."""
    kind, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise refused(400, "send the bot as multipart/form-data with a `bot` part (the archive) and a `note`")
    form = _Form(archive, max_bytes)
    try:
        parser = MultipartParser(boundary, form.callbacks())
        async for chunk in request.stream():
            parser.write(chunk)
        parser.finalize()
    except MultipartParseError:
        raise refused(400, "the form could not be read (not multipart/form-data as sent)") from None
    except ClientDisconnect:
        # Gone, or cut off by the server's body timeouts: nobody is there to read an answer.
        raise HTTPException(400, "the upload was cut off before it was complete") from None
    finally:
        form.file.close()
    if not form.got_bot:
        raise HTTPException(400, "the form has no `bot` part (the archive)")
    try:
        note = form.note.decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPException(400, "the note is not UTF-8 text") from None
    if len(note) > NOTE_CHARS:
        raise HTTPException(400, f"the note is over {NOTE_CHARS} characters")
    return note


async def receive_upload(
    request: Request, config: UploadSettings, store: LadderStore, team: str, target_of: Callable[[Version], Path],
    *, member: str = "",
) -> Version:
    """Take ``team``'s upload in ``request`` (see the module docstring); the new ``queued`` version.

    ``target_of`` names where a version's files are kept (``source_dir``);
    ``member``: who of the team sent it (recorded on the version; '' for the team's shared token).

    :class:`HTTPException` with one line for every refusal: 400 (a bad form or
    archive), 413 (over the cap), 429 (no quota left today), 500 (the files
    could not be put in place; the version is marked ``failed``), 403 (before ``opens`` or after the deadline).
    """
    closed = upload_refusal(utc_now(), getattr(config, "calendar", Calendar()))  # the course's calendar
    if closed is not None:
        raise refused(403, closed)
    quota = config.submissions.daily_quota
    if await run_in_threadpool(store.submissions_today, team) >= quota:  # store calls wait off the event loop
        raise refused(429, f"team {team!r} has used its {quota} submissions for today (UTC); try again tomorrow")
    tmp = config.directory / "tmp"
    tmp.mkdir(exist_ok=True)
    stem = secrets.token_hex(8)
    archive, unpacked = tmp / f"upload-{stem}", tmp / f"unpack-{stem}"
    try:
        note = await _receive(request, archive, config.submissions.max_bytes)
        try:
            await run_in_threadpool(unpack, config, archive, unpacked)
        except BotDirError as exc:
            raise HTTPException(400, f"the upload was refused: {exc}") from None
        if not (unpacked / "bot.py").is_file() and not (unpacked / "Dockerfile").is_file():
            raise HTTPException(400, "the upload has neither bot.py nor a Dockerfile at its top (docs/packaging.md)")
        try:
            version = await run_in_threadpool(store.add_version, team, note, quota, member)
        except LadderError as exc:
            raise HTTPException(429, str(exc)) from None
        try:
            target = target_of(version)
            target.parent.mkdir(parents=True, exist_ok=True)
            unpacked.rename(target)
            await run_in_threadpool(store.set_status, version.id, QUEUED)  # only now can the builder take it
        except IllegalTransition as exc:  # the organiser disabled it (or its team) while it arrived
            raise HTTPException(409, f"{exc} (disabled by the organiser while it was uploaded)") from None
        except Exception as exc:
            reason = f"the upload could not be stored on the server: {type(exc).__name__}: {exc}"
            await run_in_threadpool(
                functools.partial(store.set_status, version.id, FAILED, build_log=reason, reason=reason[:500])
            )
            raise HTTPException(500, reason + f" ({version.entry} is marked failed)") from None
        found = await run_in_threadpool(store.version, version.id)
        assert found is not None
        return found
    finally:
        archive.unlink(missing_ok=True)
        # Never recursive: an unpacked tree is hostile (it may be gone already: moved in, or never made).
        await run_in_threadpool(functools.partial(remove_tree, unpacked, ignore_errors=True))


__all__ = ["CLOSE", "FORM_SLACK", "NOTE_CHARS", "OPENAPI_BODY", "receive_upload", "refused", "unpack"]
