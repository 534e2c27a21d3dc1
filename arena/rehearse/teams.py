"""The rehearsal's teams: each submits its uploads over the real API, or through the site's form.

The API takes the team's token as ``Authorization: Bearer``.  The form is
what a browser does: sign in with the token on ``/signin`` (a session
cookie), then post the archive to ``/me/submit`` from the site's own page
(its ``Origin``: the site's CSRF check).  Every answer is kept as a
:class:`Sent`: the audit reads what was refused, and why.
"""

from __future__ import annotations

import dataclasses
import re
import time

import httpx

from arena.rehearse.bots import archive_for
from arena.rehearse.plan import Upload

#: How long one upload may take before the rehearsal counts it as lost (a server restarting meanwhile).
UPLOAD_TIMEOUT = 120.0


@dataclasses.dataclass
class Sent:
    """One upload as the team saw it."""

    team: str
    upload: Upload
    at: float  # seconds into the term
    status: int  # HTTP status (0: no answer: the server was down or cut the connection)
    entry: str | None = None  # team@N when a version was made
    detail: str = ""  # the refusal's one line, or the transport error


class Team:
    """A team with its token, and its session cookie when it uses the site's form."""

    def __init__(self, name: str, token: str, url: str) -> None:
        self.name = name
        self.token = token
        self.url = url

    def submit(self, upload: Upload, at: float) -> Sent:
        """Send ``upload`` through its door; never raises for a refusal or a server that is down."""
        archive = archive_for(upload.kind, base=upload.base, p=upload.p, at_hand=upload.at_hand)
        return self.submit_archive(archive, upload, at)

    def submit_archive(self, archive: bytes, upload: Upload, at: float) -> Sent:
        """Send ``archive`` as ``upload`` (its door and note)."""
        note = f"rehearsal {upload.kind} {upload.base} p={upload.p}"
        try:
            if upload.via == "form":
                return self._by_form(upload, at, archive, note)
            response = httpx.post(
                self.url + "/api/submissions", headers={"Authorization": f"Bearer {self.token}"},
                files={"bot": ("bot.tar.gz", archive, "application/gzip")}, data={"note": note}, timeout=UPLOAD_TIMEOUT,
            )  # fmt: skip
        except httpx.HTTPError as exc:
            return Sent(self.name, upload, at, 0, detail=f"{type(exc).__name__}: {exc}"[:300])
        if response.status_code == 201:
            return Sent(self.name, upload, at, 201, entry=response.json().get("entry"))
        return Sent(self.name, upload, at, response.status_code, detail=_detail(response))

    def _by_form(self, upload: Upload, at: float, archive: bytes, note: str) -> Sent:
        origin = {"Origin": self.url}  # the site's own page posts it
        with httpx.Client(
            base_url=self.url, timeout=UPLOAD_TIMEOUT, follow_redirects=False
        ) as browser:
            signed = browser.post("/signin", data={"token": self.token}, headers=origin)
            if signed.status_code != 303:
                return Sent(
                    self.name, upload, at, signed.status_code, detail="sign-in: " + _detail(signed)
                )
            posted = browser.post("/me/submit", files={"bot": ("bot.tar.gz", archive, "application/gzip")},
                                  data={"note": note}, headers=origin)  # fmt: skip
            if posted.status_code == 303:  # back to /me: the version is the newest there
                versions = browser.get("/api/me").json().get("versions", [])
                newest = max(versions, key=lambda v: v.get("version", 0), default={})
                return Sent(self.name, upload, at, 201, entry=newest.get("entry"))
            return Sent(self.name, upload, at, posted.status_code or 0, detail=_form_error(posted))


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", ""))[:300]
    except ValueError:
        return response.text[:300]


def _form_error(response: httpx.Response) -> str:
    """The error the form page shows (the page answers 200 with the refusal in it)."""
    found = re.search(r'class="error"[^>]*>(.*?)<', response.text, re.DOTALL)
    return (found[1].strip() if found else response.text[:200])[:300]


def wait_until(moment: float, start: float) -> None:
    """Sleep until ``moment`` seconds after ``start`` (monotonic)."""
    delay = start + moment - time.monotonic()
    if delay > 0:
        time.sleep(delay)


__all__ = ["UPLOAD_TIMEOUT", "Sent", "Team", "wait_until"]
