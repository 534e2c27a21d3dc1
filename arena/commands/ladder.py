"""``arena ladder``: run a competition server (teams submit bots, a ladder keeps playing them, a web site).

``init`` makes a ladder directory, ``team`` manages teams and their tokens,
``show`` prints the leaderboard from the stores (also while the server runs),
``serve`` runs the ladder and its web site.  ``arena submit`` (in
:mod:`arena.commands.submit`) uploads a bot.  See docs/ladder.md.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer
from arena_sdk.engine import RulesError, parse_overrides, resolve_ruleset
from rich.table import Table
from rich.text import Text

from arena.commands.common import console, err_console, fail, hold_or_fail, print_json
from arena.commands.options import PresetOption, SetOption, warn_if_oversubscribed
from arena.errors import ArenaError
from arena.ladder.config import CONFIG_NAME, LadderConfig, load_ladder_config, template
from arena.ladder.games.leaderboard import ladder_standings
from arena.ladder.site.settings import DEFAULT_HOST, DEFAULT_PORT  # (the help texts name them)
from arena.ladder.site.sizes import mib
from arena.ladder.store import LadderStore
from arena.ladder.teams.store import token_hash
from arena.sandbox.build import DEFAULT_BASE_IMAGE
from arena.text import safe_text

app = typer.Typer(help="Run a competition: teams submit bots, a ladder plays them, a web site shows it.", no_args_is_help=True)
team_app = typer.Typer(help="Teams, their members and tokens, the roster import and the join code.", no_args_is_help=True)
app.add_typer(team_app, name="team")
admin_app = typer.Typer(help="The organiser's actions: the admin token, validating a version again.", no_args_is_help=True)
app.add_typer(admin_app, name="admin")

T = TypeVar("T")


DirArgument = Annotated[Path, typer.Argument(help="The ladder directory (made by arena ladder init).")]
NameArgument = Annotated[str, typer.Argument(help="The team's name: 1-40 letters, digits, '.', '_' or '-'.")]


def _open(directory: Path) -> tuple[LadderConfig, LadderStore]:
    try:
        config = load_ladder_config(directory)
        return config, LadderStore(config.ladder_path)
    except ArenaError as exc:
        fail(str(exc))


def _store_call(directory: Path, call: Callable[[LadderStore], T]) -> T:
    """``call(store)`` on the ladder's store, closed after; an ArenaError is the command's one-line failure."""
    _, store = _open(directory)
    try:
        return call(store)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()


@app.command("init")
def init(
    directory: DirArgument,
    preset: PresetOption = "pagat",
    overrides: SetOption = None,
    name: Annotated[str | None, typer.Option(help="The ladder's name on its pages (default: the directory's).")] = None,
    base_image: Annotated[
        str, typer.Option("--base-image", help="The Python image bots are built on (no registry: arena-base:bookworm).")
    ] = DEFAULT_BASE_IMAGE,
) -> None:
    """Make a ladder directory: DIR/ladder.toml (every key documented), the stores, an admin token.

    The admin token is printed once (only its hash is kept): the organiser
    signs in with it to pause the ladder, disable versions or teams, and read
    every log.
    """
    from arena.ladder.service import open_results

    if (directory / CONFIG_NAME).exists():
        fail(f"{directory} is a ladder already ({CONFIG_NAME} exists)")
    try:
        parsed = parse_overrides(overrides or [])
        resolve_ruleset(preset, parsed)
    except RulesError as exc:
        fail(str(exc))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / CONFIG_NAME).write_text(template(name or directory.resolve().name, preset, parsed, base_image), encoding="utf-8")
    config = load_ladder_config(directory)
    store = LadderStore(config.ladder_path)
    admin = secrets.token_urlsafe(24)
    try:
        store.set_meta("ladder_id", secrets.token_hex(4))
        store.set_meta("admin_token_hash", token_hash(admin))
        store.set_meta("paused", "0")
        open_results(config, store.meta()["ladder_id"]).close()
    finally:
        store.close()
    console.print(f"ladder {safe_text(config.name)} made in {safe_text(str(directory))}")
    console.print(f"admin token (shown once, keep it): [bold]{admin}[/]")
    where = safe_text(str(directory))
    console.print(f"next: arena ladder team add {where} NAME (or team import {where} roster.csv), then arena ladder serve {where}")


@team_app.command("add")
def team_add(directory: DirArgument, name: NameArgument) -> None:
    """Create a team and print its token once (192 random bits; only a hash is kept)."""
    token = _store_call(directory, lambda store: store.add_team(name))
    console.print(f"team {safe_text(name)}: token (shown once) [bold]{token}[/]")


@team_app.command("token")
def team_token(
    directory: DirArgument,
    name: NameArgument,
    rotate: Annotated[bool, typer.Option("--rotate", help="Replace the token (the old one stops working at once).")] = False,
) -> None:
    """Tokens are never shown again: --rotate gives the team's shared token a new one (its sessions end; members' own tokens go on)."""
    if not rotate:
        fail("a token is shown only when it is made: pass --rotate to replace it")
    token = _store_call(directory, lambda store: store.rotate_token(name))
    console.print(f"team {safe_text(name)}: new token (shown once) [bold]{token}[/]")


@admin_app.command("rotate-token")
def admin_rotate_token(
    directory: DirArgument,
    to: Annotated[
        Path | None, typer.Option("--to", help="Write the new token to this file (mode 0600) instead of printing it.")
    ] = None,
) -> None:
    """Replace the admin token and sign the organiser out everywhere (the old token stops working at once).

    Works while the server runs. The new token is printed once, or written
    to a file only its owner can read (--to); only its hash is kept.
    """
    import os

    from arena.ladder.teams.admin_token import rotate_admin_token
    from arena.ladder.teams.store import new_token

    _, store = _open(directory)
    try:
        token = new_token()
        if to is not None:  # written before the old token is replaced: a failed write loses nothing
            try:
                fd = os.open(to, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "w") as f:
                    os.fchmod(f.fileno(), 0o600)
                    f.write(token + "\n")
            except OSError as exc:
                fail(f"cannot write the new token to {to}: {exc.strerror}; the admin token is unchanged")
        _, ended = rotate_admin_token(store, token)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    signed_out = f"{ended} admin session(s) ended"
    if to is None:
        console.print(f"new admin token (shown once, keep it): [bold]{token}[/]; {signed_out}")
    else:
        console.print(f"new admin token written to {safe_text(str(to))} (mode 0600); {signed_out}")


@admin_app.command("revalidate")
def admin_revalidate(
    directory: DirArgument,
    entry: Annotated[str, typer.Argument(help="The failed version, as TEAM@NUMBER (e.g. red-team@3).")],
) -> None:
    """Build and validate a failed version again (when the platform, not the team, failed it).

    Its attempts start again from zero and its old logs are cleared; a running
    `serve` picks it up within a second, a stopped one when it starts. Only a
    failed version can be revalidated. A ladder validates again by itself when
    the Docker engine could not start its containers; this is for the rest
    (docs/ladder.md, "When the Docker engine stops starting containers").
    """
    version = _store_call(directory, lambda store: store.revalidate(entry))
    console.print(f"{safe_text(version.entry)} queued to be built and validated again")


@team_app.command("disable")
def team_disable(directory: DirArgument, name: NameArgument) -> None:
    """Take a team out of the ladder (its versions stop playing; its token stops working)."""
    _set_disabled(directory, name, True)


@team_app.command("enable")
def team_enable(directory: DirArgument, name: NameArgument) -> None:
    """Bring a disabled team back."""
    _set_disabled(directory, name, False)


def _set_disabled(directory: Path, name: str, disabled: bool) -> None:
    _store_call(directory, lambda store: store.set_team_disabled(name, disabled))
    console.print(f"team {safe_text(name)} {'disabled' if disabled else 'enabled'}")


def snapshot(config: LadderConfig, store: LadderStore) -> dict[str, Any]:
    """The leaderboard and every team's versions, from the stores (what ``show`` prints)."""
    from arena.results.store import ResultsStore

    results = ResultsStore.open_read_only(config.results_path)
    try:
        games = results.games()
        rows = ladder_standings(store, results, games)  # the site's and the export's definition
    finally:
        results.close()
    teams = {}
    for team in store.teams():
        teams[team.name] = {
            "disabled": team.disabled,
            "versions": [
                {"version": v.number, "entry": v.entry, "status": v.status, "note": v.note, "created": v.created,
                 "final_elo": v.final_elo}  # fmt: skip
                for v in store.versions(team=team.name)
            ],
        }
    sub = config.submissions
    limits = {"max_bytes": sub.max_bytes, "max_files": sub.max_files, "daily_quota": sub.daily_quota}
    return {"ladder": config.name, "paused": store.paused, "games": len(games), "limits": limits,
            "standings": [r.to_dict() for r in rows], "teams": teams}  # fmt: skip


@app.command("show")
def show(
    directory: DirArgument,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """Print the leaderboard, the upload limits and each team's versions (read from the stores; fine while the server runs)."""
    config, store = _open(directory)
    try:
        data = snapshot(config, store)
    finally:
        store.close()
    if as_json:
        print_json(data)
        return
    table = Table(title=f"{safe_text(config.name)}: {data['games']} games" + (" (paused)" if data["paused"] else ""))
    for column in ("Rank", "Version", "Elo", "±95%", "Pairs", "Points/hand"):
        table.add_column(column, justify="left" if column == "Version" else "right")
    for r in data["standings"]:
        margin = "" if r["low"] is None else f"±{(r['high'] - r['low']) / 2:.0f}"
        table.add_row(
            str(r["rank"] or "–"), safe_text(r["entry"]), "–" if r["elo"] is None else f"{r['elo']:.0f}", margin,
            str(r["pairs"]), "–" if r["points_per_hand"] is None else f"{r['points_per_hand']:+.1f}",
        )  # fmt: skip
    console.print(table)
    limits = data["limits"]
    console.print(
        f"uploads: at most {mib(limits['max_bytes'])} and {limits['max_files']} files each, "
        f"{limits['daily_quota']} per team per UTC day",
        highlight=False,
    )
    for name, team in data["teams"].items():
        versions = ", ".join(f"{v['version']}:{v['status']}" for v in team["versions"]) or "no versions"
        console.print(f"{safe_text(name)}{' (disabled)' if team['disabled'] else ''}: {safe_text(versions)}")


@app.command("serve")
def serve(
    directory: DirArgument,
    host: Annotated[
        str | None, typer.Option(help=f"Address to serve the site on (default: ladder.toml's \\[server] host; init writes {DEFAULT_HOST}).")
    ] = None,
    port: Annotated[
        int | None, typer.Option(help=f"Port (default: ladder.toml's \\[server] port; init writes {DEFAULT_PORT}; 0 picks a free one).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Play the tables on a Dask cluster (docs/cluster.md).")
    ] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help="Accept plain tcp:// to a scheduler on a private network.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the address and errors, not each build, pair and void.")] = False,
) -> None:
    """Run the ladder and its web site until Ctrl-C (or SIGTERM): builds, games, ratings, pages.

    The console prints one line per build step, pair started and stored, void,
    suspension and failure (``--quiet`` silences all but failures).

    Safe to stop at any moment, even with kill -9: stored games are kept and
    never counted twice, pairs cut short are played again, builds cut short
    are built again.
    """
    import trio

    from arena.ladder.common.scratch import private_temp_dir
    from arena.ladder.serve import LadderServer, recover_uploads

    lock = hold_or_fail(directory, "arena ladder serve", create=False)  # noqa: F841 - one server (and final evaluation) per directory, held while it runs, taken before anything is cleaned or written
    config, store = _open(directory)
    recover_uploads(config, store)
    private_temp_dir(store.meta()["ladder_id"])  # its tables' temp files, removed at exit: arena.ladder.common.scratch
    served = LadderServer(config, store, _player(scheduler, insecure, config), host=host, port=port,
                          on_event=lambda event: _tell(event, quiet))  # fmt: skip
    served.start()
    announce = lambda where: err_console.print(f"serving {safe_text(config.name)} on {where} (Ctrl-C stops)", highlight=False)  # noqa: E731
    try:
        stopped_by = trio.run(served.run, announce)
    finally:
        if not served.close():  # requests in flight are cut after shutdown_timeout
            err_console.print("the web server did not stop in time; exiting without it", highlight=False)
    if stopped_by is not None:
        fail(str(stopped_by))
    if not served.started:
        fail(f"the web site could not start on {served.host}:{served.port}")


def _player(scheduler: str | None, insecure: bool, config: LadderConfig) -> Any:
    """Where the ladder's tables play: this machine's processes, or a Dask cluster (a refusal is one line)."""
    from arena.tables.players import LocalTables

    if scheduler is None:
        warn_if_oversubscribed(2 * config.concurrency, config.time_control)  # two tables a pair
        return LocalTables()
    from arena.tables.cluster import ClusterTables

    try:
        return ClusterTables.connect(scheduler, insecure=insecure)
    except ArenaError as exc:
        fail(str(exc))


def _tell(event: Any, quiet: bool) -> None:
    """One console line for a ladder event (a failure is shown even with ``--quiet``)."""
    if quiet and event.kind != "failure":
        return
    import datetime

    stamp = datetime.datetime.now().strftime("%H:%M:%S")
    style = {"failure": "red", "void": "yellow", "suspend": "yellow", "build": "cyan"}.get(event.kind, "")
    # A Text, not markup: the line holds what teams and bots sent (brackets included).
    err_console.print(Text(f"{stamp} {event.kind:<7} {safe_text(event.text)}", style=style), highlight=False, soft_wrap=True)


__all__ = ["app", "snapshot"]
__import__("arena.commands.ladder_export", fromlist=["register"]).register(app)  # arena ladder export (its own module)
__import__("arena.commands.ladder_roster", fromlist=["register"]).register(team_app)  # import, members, join-code
__import__("arena.commands.ladder_rehearse", fromlist=["register"]).register(app)  # arena ladder rehearse (its own module)
__import__("arena.commands.ladder_clean", fromlist=["register"]).register(app)  # arena ladder clean (its own module)
