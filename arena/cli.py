"""The ``arena`` command line: the composition root, no logic of its own."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup, TyperOption

from arena.commands import (
    bot,
    demo,
    ladder,
    match,
    play,
    ratings,
    replay,
    rules,
    sandbox,
    serve,
    sprt,
    submit,
    tournament,
)


class ArenaGroup(TyperGroup):
    """The root command group; it tidies the help of every command below it once built.

    Typer shows a type hint such as ``<bool>`` beside every flag, ``--help``
    included, although a flag takes no value: give each flag an empty metavar
    so the help shows none.
    """

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        _hide_flag_types(self)


def _hide_flag_types(command: Any) -> None:
    """Clear the type hint of every flag of ``command`` and its subcommands (``--help`` too)."""
    ctx = typer.Context(command)
    help_option = command.get_help_option(ctx)  # made lazily and cached: make it now to fix it
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if isinstance(param, TyperOption) and param.is_flag:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        _hide_flag_types(sub)


app = typer.Typer(
    name="arena",
    cls=ArenaGroup,
    help="Spades arena: rules, game records, matches and tournaments for Spades bots.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(rules.app, name="rules")
app.add_typer(match.app, name="match")
app.add_typer(tournament.app, name="tournament")
app.add_typer(ratings.app, name="ratings")
app.add_typer(bot.app, name="bot")
app.add_typer(sandbox.app, name="sandbox")
app.add_typer(ladder.app, name="ladder")
app.command("replay")(replay.replay)
app.command("demo")(demo.demo)
app.command("play")(play.play)
app.command("serve")(serve.serve)
app.command("sprt")(sprt.sprt)
app.command("submit")(submit.submit)

if __name__ == "__main__":  # pragma: no cover
    app()
