"""The organiser's page and switches: pause and resume, disable a version, disable or enable a team."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from arena.ladder.site.context import Site, SiteDep, Who, admin_only
from arena.ladder.store import DISABLED, IllegalTransition, LadderError

router = APIRouter(include_in_schema=False)


def set_paused(site: Site, paused: bool) -> None:
    site.store.set_meta("paused", "1" if paused else "0")


def set_team_disabled(site: Site, team: str, disabled: bool) -> None:
    """The organiser's switch for a team (the API's and the admin page's); 404 for no such team."""
    try:
        site.store.set_team_disabled(team, disabled)
    except LadderError as exc:
        raise HTTPException(404, str(exc)) from None


def disable_version(site: Site, entry: str) -> None:
    """The organiser takes one version out; 404 for no such version, 409 for one that cannot be (failed, disabled)."""
    version = site.store.version_by_entry(entry)
    if version is None:
        raise HTTPException(404, "no such version")
    try:
        site.store.set_status(version.id, DISABLED)
    except IllegalTransition as exc:
        raise HTTPException(409, str(exc)) from None


@router.get("/admin", response_class=HTMLResponse)
def admin_page(site: SiteDep, who: Who) -> Response:
    if not who.admin:
        return RedirectResponse("/signin", status_code=303)
    return site.page("admin.html", who, teams=site.store.teams(),
                     versions=[site.version_private(v) for v in site.store.versions()], paused=site.store.paused)  # fmt: skip


@router.post("/admin/{action}")
def admin_action(action: str, site: SiteDep, who: Who, target: Annotated[str, Form()] = "") -> Response:
    admin_only(who)
    if action in ("pause", "resume"):
        set_paused(site, action == "pause")
    elif action in ("disable-team", "enable-team"):
        set_team_disabled(site, target, action == "disable-team")
    elif action == "disable-version":
        disable_version(site, target)
    else:
        raise HTTPException(404, "no such action")
    return RedirectResponse("/admin", status_code=303)
