"""``arena ladder team`` commands for the roster: import a class, list and revoke members, the join code.

- ``import DIR roster.csv``: teams and members from a CSV (``team,member,email``),
  every line checked first; each new member's token goes once into a file for
  a mail merge (mode 0600, never over an existing file);
  ``--reserve`` only reserves the roster's team names and e-mails against
  self-registration (the import reserves them too);
- ``members DIR [TEAM]``: who is in which team (``--json``), and any e-mail two
  members share (an older ladder's store);
- ``member-revoke DIR TEAM MEMBER`` and ``member-token DIR TEAM MEMBER``: one
  member's token revoked, or replaced, without touching the teammates';
  ``member-remove``: a forged member removed outright;
- ``invite DIR TEAM``: a new invite code for a team (the old one stops working);
- ``join-code DIR``: show, ``--rotate`` or ``--off`` the code for self-registration
  (written into ladder.toml; the site reads it at each sign-up, no restart).

See docs/ladder.md, "Roster and members".
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import console, fail, print_json
from arena.errors import ArenaError
from arena.ladder.config import LadderConfig, load_ladder_config
from arena.ladder.teams.roster import (
    RosterPlan,
    check_roster,
    import_roster,
    new_invite_code,
    new_join_code,
    read_roster_settings,
    reserve_roster,
    set_join_code,
)
from arena.ladder.store import LadderStore
from arena.text import safe_text

#: Where ``import`` writes the tokens unless told (inside the ladder directory).
DEFAULT_TOKENS = "member-tokens.csv"

DirArgument = Annotated[Path, typer.Argument(help="The ladder directory (made by arena ladder init).")]
TeamArgument = Annotated[str, typer.Argument(help="The team's name.")]
MemberArgument = Annotated[str, typer.Argument(help="The member's name, as in the roster.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _open(directory: Path) -> tuple[LadderConfig, LadderStore]:
    try:
        config = load_ladder_config(directory)
        return config, LadderStore(config.ladder_path)
    except ArenaError as exc:
        fail(str(exc))


def _store(directory: Path) -> LadderStore:
    return _open(directory)[1]


def roster_import(
    directory: DirArgument,
    roster: Annotated[Path, typer.Argument(help="A CSV file with the header team,member,email (one member a line).")],
    tokens: Annotated[
        Path | None,
        typer.Option("--tokens", help=f"Write the new members' tokens here (default: DIR/{DEFAULT_TOKENS}); refused if it exists."),
    ] = None,
    reserve: Annotated[
        bool,
        typer.Option("--reserve", help="Add nobody: only reserve the roster's team names and e-mails, so that "
                     "nobody takes them on the join page before the import."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Add the teams and members of a roster CSV; each new member's token is written once, for a mail merge.

    Every line is checked before anything is written (fields, team names per
    the ladder's rule, e-mail addresses, duplicates, \\[roster] team_size): a
    roster with a wrong line is refused whole, each wrong line named, and
    nothing is created.  The tokens file (team,member,email,token) is made
    with mode 0600 and never over an existing file: mail the tokens, then
    delete it.  Importing again adds only the new members and teams.

    The roster's team names (and their look-alikes) and e-mails are reserved:
    the join page refuses them.  A team made on the join page is never given a
    roster's members (the import refuses, naming it); --reserve before opening
    the join page keeps the names free.
    """
    try:
        text = roster.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {roster}: {exc}")
    config, store = _open(directory)
    settings = config.roster
    target = tokens if tokens is not None else directory / DEFAULT_TOKENS
    try:
        plan = check_roster(text, store, settings.team_size)
        if reserve:
            _reserved(reserve_roster(store, plan), plan, as_json)
            return
        written = import_roster(store, plan, target)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    added_teams = plan.new_teams
    if as_json:
        print_json({"added_teams": added_teams, "added_members": [{"team": t, "member": m, "email": e} for t, m, e, _ in written],
                    "already_present": len(plan.present), "tokens_file": str(target) if written else None})  # fmt: skip
        return
    if not written:
        console.print(f"nothing to add: the roster's {len(plan.present)} member(s) are all in the ladder already", highlight=False)
        return
    console.print(
        f"added {len(written)} member(s) in {len({t for t, *_ in written})} team(s) "
        f"({len(added_teams)} new team(s): {safe_text(', '.join(added_teams)) or 'none'}); "
        f"{len(plan.present)} already present",
        highlight=False,
    )
    for team, member, _, _ in written:
        console.print(f"  + {safe_text(team)}: {safe_text(member)}", highlight=False)
    console.print(f"tokens written to {safe_text(str(target))} (mode 0600): mail them, then delete the file", highlight=False)


def _reserved(new: int, plan: RosterPlan, as_json: bool) -> None:
    lines = [*plan.add, *plan.present]
    teams = sorted({r.team for r in lines})
    if as_json:
        print_json({"reserved_teams": teams, "reserved_emails": len(lines), "newly_reserved": new})
        return
    console.print(f"reserved {len(teams)} team name(s) and {len(lines)} e-mail(s) against self-registration "
                  f"({new} new); nobody was added", highlight=False)  # fmt: skip


def members(
    directory: DirArgument,
    team: Annotated[str | None, typer.Argument(help="Only this team's members.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List the members of every team (or one): name, e-mail, revoked or not."""
    store = _store(directory)
    try:
        teams = [t.name for t in store.teams()] if team is None else [team]
        if team is not None and store.team(team) is None:
            fail(f"no team {team!r}")
        rows = [{"team": t, "member": m.name, "email": m.email, "revoked": m.revoked, "created": m.created}
                for t in teams for m in store.members(t)]  # fmt: skip
        shared = store.duplicate_emails()
    finally:
        store.close()
    if as_json:
        print_json({"members": rows, "shared_emails": {e: [list(o) for o in owners] for e, owners in shared.items()}})
        return
    for row in rows:
        state = " (revoked)" if row["revoked"] else ""
        console.print(f"{safe_text(row['team'])}: {safe_text(row['member'])} <{safe_text(row['email'])}>{state}", highlight=False)
    if not rows:
        console.print("no members", highlight=False)
    for email, owners in shared.items():
        held = ", ".join(f"{m} of {t}" for t, m in owners)
        console.print(f"[bold red]one e-mail, {len(owners)} members[/]: {safe_text(email)} is {safe_text(held)}; "
                      "the grade export refuses until one is left (arena ladder team member-remove)", highlight=False)  # fmt: skip


def member_revoke(directory: DirArgument, team: TeamArgument, member: MemberArgument, as_json: JsonOption = False) -> None:
    """Revoke one member's token (their sessions end at once); the teammates' tokens go on working."""
    store = _store(directory)
    try:
        store.revoke_member(team, member)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    if as_json:
        print_json({"team": team, "member": member, "revoked": True})
    else:
        console.print(f"{safe_text(member)} of team {safe_text(team)}: token revoked", highlight=False)


def member_token(directory: DirArgument, team: TeamArgument, member: MemberArgument, as_json: JsonOption = False) -> None:
    """Give one member a new token, printed once (the old one stops working; a revoked member is reinstated)."""
    store = _store(directory)
    try:
        token = store.rotate_member_token(team, member)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    if as_json:
        print_json({"team": team, "member": member, "token": token})
    else:
        console.print(f"{safe_text(member)} of team {safe_text(team)}: new token (shown once) [bold]{token}[/]", highlight=False)


def member_remove(directory: DirArgument, team: TeamArgument, member: MemberArgument, as_json: JsonOption = False) -> None:
    """Remove one member outright (a forged sign-up, an e-mail two members share); their uploads stay the team's."""
    store = _store(directory)
    try:
        store.remove_member(team, member)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    if as_json:
        print_json({"team": team, "member": member, "removed": True})
    else:
        console.print(f"{safe_text(member)} of team {safe_text(team)}: removed", highlight=False)


def invite(directory: DirArgument, team: TeamArgument, as_json: JsonOption = False) -> None:
    """Give a team a new invite code, printed once (the old one stops working; teammates join on /join with it)."""
    store = _store(directory)
    code = new_invite_code()
    try:
        store.set_invite(team, code)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    if as_json:
        print_json({"team": team, "invite": code})
    else:
        console.print(f"team {safe_text(team)}: new invite code (shown once) [bold]{code}[/]", highlight=False)


def join_code(
    directory: DirArgument,
    rotate: Annotated[bool, typer.Option("--rotate", help="Write a new random join code into ladder.toml (the old one stops working).")] = False,
    off: Annotated[bool, typer.Option("--off", help="Turn self-registration off (join_code = \"\").")] = False,
    as_json: JsonOption = False,
) -> None:
    """Show the join code for self-registration on /join, or replace it (--rotate) or turn it off (--off).

    The code lives in ladder.toml's \\[roster] join_code; the site reads it at
    each sign-up, so a change takes effect at once, without a restart.
    """
    if rotate and off:
        fail("pass --rotate or --off, not both")
    try:
        if rotate or off:
            set_join_code(directory, new_join_code() if rotate else "")
        settings = read_roster_settings(directory)
    except (ArenaError, OSError) as exc:
        fail(str(exc))
    if as_json:
        print_json({"join_code": settings.join_code, "open": settings.open, "team_size": settings.team_size,
                    "approval": settings.approval})  # fmt: skip
    elif settings.open:
        console.print(f"join code: [bold]{safe_text(settings.join_code)}[/] (teams register on the site's /join page)", highlight=False)
    else:
        console.print("self-registration is off (arena ladder team join-code DIR --rotate opens it)", highlight=False)


def register(team_app: typer.Typer) -> None:
    """Add the roster commands to ``arena ladder team``."""
    team_app.command("import")(roster_import)
    team_app.command("members")(members)
    team_app.command("member-revoke")(member_revoke)
    team_app.command("member-token")(member_token)
    team_app.command("member-remove")(member_remove)
    team_app.command("invite")(invite)
    team_app.command("join-code")(join_code)


__all__ = ["register"]
