"""Self-registration: ``/join`` (a team made by its first member, teammates joining it) and a team's invite code.

Open only while ``[roster] join_code`` is set; the section is read from
``ladder.toml`` at each request, so a new code (``arena ladder team join-code
DIR --rotate``, or an edit) works at once and the old one stops.

- ``POST /join/create`` (join code, team name, name, e-mail): the team and its
  first member; the page shows the member's token and the team's invite code,
  once each.  With ``[roster] approval = true`` the team waits for the
  organiser (it may sign in, not upload).
- ``POST /join/team`` (join code, team, invite code, name, e-mail): a
  teammate, while the team has fewer than ``team_size`` members.
- ``POST /me/invite``: a signed-in team's new invite code (the old one stops working).

Wrong codes are bounded per client address (:class:`JoinGuard`): after
``MAX_FAILURES`` wrong join or invite codes in ``WINDOW_S`` seconds, the
address is refused until the window has passed, before any code is compared.
So are new teams: one address makes at most ``[roster] teams_per_hour`` teams
an hour (the same counter, over ``SIGN_UP_WINDOW_S``; a refused sign-up does
not count).  Who may take which name or e-mail is the store's to say
(:meth:`arena.ladder.teams.store.TeamTables.register_team`: one e-mail one
member, the roster's reserved, look-alike names refused).
Every refusal is a message on the page (400, 403 or 429), never a 500.
"""

from __future__ import annotations

import collections
import hmac
import threading
import time
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from arena.errors import ArenaError
from arena.ladder.teams.roster import (
    RosterError,
    RosterSettings,
    check_email,
    check_member_name,
    check_self_registered_name,
    new_invite_code,
    read_roster_settings,
)
from arena.ladder.site.context import Site, SiteDep, Viewer, Who

router = APIRouter(include_in_schema=False)

#: The sign-up routes: like /signin, they must come from the site's own pages (arena.ladder.site.guard.OriginCheck).
SIGN_UP_PATHS = frozenset({"/join/create", "/join/team"})
#: Wrong join or invite codes one address may send in a window.
MAX_FAILURES = 10
#: The window, in seconds.
WINDOW_S = 600.0
#: The window of ``[roster] teams_per_hour``, in seconds.
SIGN_UP_WINDOW_S = 3600.0
#: Addresses remembered at most (the oldest is forgotten first).
MAX_ADDRESSES = 10_000
#: Characters kept of any field of the forms (names and codes are far shorter; the rest is noise).
FIELD_CAP = 300
#: A page that shows a secret is never kept by a cache.
NO_STORE = {"Cache-Control": "no-store"}


class JoinGuard:
    """Counts wrong codes per client address and refuses an address that sent too many (thread-safe)."""

    def __init__(self, max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.max_failures = max_failures
        self.window_s = window_s
        self.clock = clock
        self._failures: collections.OrderedDict[str, list[float]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, address: str, at: float) -> list[float]:
        kept = [t for t in self._failures.get(address, []) if at - t < self.window_s]
        if kept:
            self._failures[address] = kept
        else:
            self._failures.pop(address, None)
        return kept

    def wait_s(self, address: str) -> float:
        """Seconds until ``address`` may try again (0: it may now)."""
        with self._lock:
            at = self.clock()
            recent = self._recent(address, at)
            if len(recent) < self.max_failures:
                return 0.0
            return max(1.0, recent[-self.max_failures] + self.window_s - at)

    def failed(self, address: str) -> None:
        """Count one wrong code (or one new team) from ``address``."""
        with self._lock:
            self._count(address, self.clock())

    def _count(self, address: str, at: float) -> None:
        self._failures[address] = [*self._recent(address, at), at]
        self._failures.move_to_end(address)
        while len(self._failures) > MAX_ADDRESSES:
            self._failures.popitem(last=False)

    def take(self, address: str, limit: int) -> float:
        """Count one event from ``address`` if it had fewer than ``limit`` in the window: 0, else the seconds to wait.

        Checked and counted at once, so that sign-ups sent together cannot all pass.
        """
        with self._lock:
            at = self.clock()
            recent = self._recent(address, at)
            if len(recent) >= limit:
                return max(1.0, recent[-limit] + self.window_s - at) if limit else self.window_s
            self._count(address, at)
            return 0.0

    def give_back(self, address: str) -> None:
        """Forget ``address``'s last counted event (a sign-up refused after :meth:`take`)."""
        with self._lock:
            recent = self._failures.get(address)
            if recent:
                recent.pop()


def _guard(request: Request) -> JoinGuard:
    return request.app.state.join_guard  # type: ignore[no-any-return]


def _address(request: Request) -> str:
    return request.client.host if request.client else "?"


def _settings(site: Site) -> RosterSettings | None:
    """The ``[roster]`` section now; None when it cannot be read (self-registration is then closed)."""
    try:
        return read_roster_settings(site.directory)
    except RosterError:
        return None


def _form_page(site: Site, who: Viewer, settings: RosterSettings | None, *, error: str | None = None,
               status: int = 200, values: dict[str, str] | None = None) -> HTMLResponse:  # fmt: skip
    shown = site.page("join.html", who, open=settings is not None and settings.open, error=error,
                      settings=settings, values=values or {})  # fmt: skip
    shown.status_code = status
    return shown


def _cap(*fields: str) -> list[str]:
    return [f.strip()[:FIELD_CAP] for f in fields]


def _check_code(request: Request, site: Site, who: Viewer, settings: RosterSettings | None, code: str,
                values: dict[str, str]) -> HTMLResponse | None:  # fmt: skip
    """The page refusing a closed sign-up, a blocked address or a wrong join code; None when the code is right."""
    if settings is None or not settings.open:
        return _form_page(site, who, settings, error="Self-registration is closed: ask the organiser for your token.",
                          status=403)  # fmt: skip
    guard, address = _guard(request), _address(request)
    wait = guard.wait_s(address)
    if wait:
        return _form_page(site, who, settings, status=429, values=values,
                          error=f"Too many wrong codes from your address: try again in {wait / 60:.0f} minute(s).")  # fmt: skip
    if not hmac.compare_digest(code.encode(), settings.join_code.encode()):
        guard.failed(address)
        return _form_page(site, who, settings, status=403, values=values,
                          error="That join code is wrong (or the organiser changed it).")  # fmt: skip
    return None


def _person(name: str, email: str) -> tuple[str, str]:
    return check_member_name(name), check_email(email)


@router.get("/join", response_class=HTMLResponse)
def join_page(site: SiteDep, who: Who) -> HTMLResponse:
    """The sign-up forms (or why there are none)."""
    return _form_page(site, who, _settings(site))


def _too_many_teams(settings: RosterSettings, wait: float) -> str:
    if not settings.teams_per_hour:
        return "New teams are not made on this page ([roster] teams_per_hour = 0): join a team with its invite code."
    return (f"Your address made {settings.teams_per_hour} team(s) in the last hour, the most it may: "
            f"try again in {wait / 60:.0f} minute(s), or join a team with its invite code.")  # fmt: skip


@router.post("/join/create", response_class=HTMLResponse)
def join_create(request: Request, site: SiteDep, who: Who, join_code: Annotated[str, Form()] = "",
                team: Annotated[str, Form()] = "", name: Annotated[str, Form()] = "",
                email: Annotated[str, Form()] = "") -> HTMLResponse:  # fmt: skip
    """Make a team and its first member: the member's token and the team's invite code are shown once."""
    settings = _settings(site)
    join_code, team, name, email = _cap(join_code, team, name, email)
    values = {"team": team, "name": name, "email": email}
    refused = _check_code(request, site, who, settings, join_code, values)
    if refused is not None:
        return refused
    assert settings is not None
    sign_ups, address = request.app.state.sign_up_guard, _address(request)
    wait = sign_ups.take(address, settings.teams_per_hour)
    if wait:
        return _form_page(site, who, settings, status=429, values=values, error=_too_many_teams(settings, wait))
    invite = new_invite_code()
    try:
        check_self_registered_name(team, settings)
        name, email = _person(name, email)
        token = site.store.register_team(team, name, email, pending=settings.approval, invite=invite)
    except ArenaError as exc:
        sign_ups.give_back(address)
        return _form_page(site, who, settings, error=str(exc), status=400, values=values)
    return shown_once(site, who, team=team, member=name, token=token, invite=invite, pending=settings.approval)


@router.post("/join/team", response_class=HTMLResponse)
def join_team(request: Request, site: SiteDep, who: Who, join_code: Annotated[str, Form()] = "",
              team: Annotated[str, Form()] = "", invite: Annotated[str, Form()] = "",
              name: Annotated[str, Form()] = "", email: Annotated[str, Form()] = "") -> HTMLResponse:  # fmt: skip
    """Join an existing team with its invite code: the new member's token is shown once."""
    settings = _settings(site)
    join_code, team, invite, name, email = _cap(join_code, team, invite, name, email)
    values = {"join_team": team, "join_name": name, "join_email": email}
    refused = _check_code(request, site, who, settings, join_code, values)
    if refused is not None:
        return refused
    assert settings is not None
    try:
        name, email = _person(name, email)
        token = site.store.join_team(team, invite, name, email, team_size=settings.team_size)
    except ArenaError as exc:
        return _form_page(site, who, settings, error=str(exc), status=400, values=values)
    if token is None:
        _guard(request).failed(_address(request))
        return _form_page(site, who, settings, status=403, values=values,
                          error="That team and invite code do not match (ask a teammate for the team's invite code).")  # fmt: skip
    found = site.store.team(team)
    return shown_once(site, who, team=team, member=name, token=token, invite=None, pending=bool(found and found.pending))


@router.post("/me/invite", response_class=HTMLResponse)
def new_invite(site: SiteDep, who: Who) -> Response:
    """A signed-in team's new invite code, shown once (the old one stops working)."""
    if who.team is None:
        return RedirectResponse("/signin", status_code=303)
    invite = new_invite_code()
    site.store.set_invite(who.team, invite)
    return shown_once(site, who, page="invite.html", team=who.team, invite=invite)


def shown_once(site: Site, who: Viewer, page: str = "joined.html", **values: object) -> HTMLResponse:
    """A page with a secret on it (a token, an invite code): shown once, never cached."""
    shown = site.page(page, who, **values)
    shown.headers.update(NO_STORE)
    return shown


__all__ = ["MAX_FAILURES", "shown_once", "SIGN_UP_PATHS", "SIGN_UP_WINDOW_S", "WINDOW_S", "JoinGuard", "router"]
