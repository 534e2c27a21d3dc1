"""The organiser's page and switches: pause and resume, disable a version, disable or enable a team,
approve or refuse a self-registered team, revoke a member, give a team a new invite code."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from arena.ladder.site.context import Site, SiteDep, Viewer, Who, admin_only
from arena.ladder.site.join import shown_once
from arena.ladder.teams.roster import new_invite_code
from arena.ladder.common.ladder_db import LadderError
from arena.ladder.versions.lifecycle import DISABLED, IllegalTransition

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


def roster_action(site: Site, action: str, team: str, member: str) -> None:
    """Approve or refuse a team waiting for approval, or revoke one member's token; 404 for no such team or member."""
    store = site.store
    try:
        if action == "approve-team":
            store.approve_team(team)
        elif action == "refuse-team":
            store.refuse_team(team)
        else:
            store.revoke_member(team, member)
    except LadderError as exc:
        raise HTTPException(404, str(exc)) from None


def rotate_invite(site: Site, team: str) -> str:
    """A team's new invite code (the old one stops working); 404 for no such team."""
    code = new_invite_code()
    try:
        site.store.set_invite(team, code)
    except LadderError as exc:
        raise HTTPException(404, str(exc)) from None
    return code


def new_invite_for(site: Site, who: Viewer, team: str) -> Response:
    """The admin page's "New invite code": the code shown once to the organiser."""
    return shown_once(site, who, page="invite.html", team=team, invite=rotate_invite(site, team))


@router.get("/admin", response_class=HTMLResponse)
def admin_page(site: SiteDep, who: Who) -> Response:
    if not who.admin:
        return RedirectResponse("/signin", status_code=303)
    teams = site.store.teams()
    shown = site.board()
    return site.page("admin.html", who, teams=teams, pending=[t for t in teams if t.pending],
                     members={t.name: site.store.members(t.name) for t in teams},
                     shared_emails=site.store.duplicate_emails(),
                     versions=[site.version_private(v, shown) for v in site.store.versions()], paused=site.store.paused,
                     engine_down=site.state().engine_down)  # fmt: skip


@router.post("/admin/{action}")
def admin_action(action: str, site: SiteDep, who: Who, target: Annotated[str, Form()] = "",
                 member: Annotated[str, Form()] = "") -> Response:  # fmt: skip
    admin_only(who)
    if action == "new-invite":
        return new_invite_for(site, who, target)
    if action in ("approve-team", "refuse-team", "revoke-member"):
        roster_action(site, action, target, member)
    elif action in ("pause", "resume"):
        set_paused(site, action == "pause")
    elif action in ("disable-team", "enable-team"):
        set_team_disabled(site, target, action == "disable-team")
    elif action == "disable-version":
        disable_version(site, target)
    else:
        raise HTTPException(404, "no such action")
    return RedirectResponse("/admin", status_code=303)


# ------------------------------------------------------------ the roster in the JSON API (bearer: the admin token)


@router.get("/api/admin/members", include_in_schema=True, tags=["admin"])
def api_members(site: SiteDep, who: Who) -> JSONResponse:
    """Every team's members (name, e-mail, revoked) and whether the team waits for approval."""
    admin_only(who)
    return JSONResponse({"teams": [
        {"team": t.name, "pending": t.pending, "disabled": t.disabled,
         "members": [{"name": m.name, "email": m.email, "revoked": m.revoked} for m in site.store.members(t.name)]}
        for t in site.store.teams()
    ]})  # fmt: skip


@router.post("/api/admin/teams/{team}/invite", include_in_schema=True, tags=["admin"])
def api_new_invite(team: str, site: SiteDep, who: Who) -> JSONResponse:
    """A team's new invite code (the old one stops working), in the answer only."""
    admin_only(who)
    return JSONResponse({"team": team, "invite": rotate_invite(site, team)}, headers={"Cache-Control": "no-store"})


@router.post("/api/admin/teams/{team}/approve", include_in_schema=True, tags=["admin"])
def api_approve_team(team: str, site: SiteDep, who: Who) -> JSONResponse:
    """Let a self-registered team upload."""
    admin_only(who)
    roster_action(site, "approve-team", team, "")
    return JSONResponse({"team": team, "pending": False})


@router.post("/api/admin/teams/{team}/members/{member}/revoke", include_in_schema=True, tags=["admin"])
def api_revoke_member(team: str, member: str, site: SiteDep, who: Who) -> JSONResponse:
    """Revoke one member's token (their sessions end); the teammates' go on."""
    admin_only(who)
    roster_action(site, "revoke-member", team, member)
    return JSONResponse({"team": team, "member": member, "revoked": True})
