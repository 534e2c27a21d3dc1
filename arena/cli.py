"""The ``arena`` command line: the composition root, no logic of its own."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
from typer.core import TyperGroup, TyperOption

#: Every command: its name, its module under ``arena.commands``, and the attribute there,
#: a Typer app (a group of subcommands) or a function (one command).  ``main`` imports
#: only the module of the command it runs: a ladder's site (FastAPI), the ratings
#: (SciPy) and the play table cost seconds of CPU to import that ``arena match run``
#: does not need (the test suite starts ``arena`` hundreds of times).
COMMANDS: dict[str, tuple[str, str]] = {
    "rules": ("rules", "app"),
    "match": ("match", "app"),
    "tournament": ("tournament", "app"),
    "ratings": ("ratings", "app"),
    "bot": ("bot", "app"),
    "sandbox": ("sandbox", "app"),
    "ladder": ("ladder", "app"),
    "replay": ("replay", "replay"),
    "demo": ("demo", "demo"),
    "play": ("play", "play"),
    "serve": ("serve", "serve"),
    "sprt": ("sprt", "sprt"),
    "submit": ("submit", "submit"),
}


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


HELP = "Spades arena: rules, game records, matches and tournaments for Spades bots."


def build(only: str | None = None) -> typer.Typer:
    """The ``arena`` app with every command, or with the command ``only`` alone (its module alone imported)."""
    root = typer.Typer(
        name="arena", cls=ArenaGroup, help=HELP, no_args_is_help=True, pretty_exceptions_enable=False,
        add_completion=False,
    )  # fmt: skip

    @root.callback()
    def _root() -> None:  # a group even with one command registered: ``arena replay X`` keeps its name
        pass

    for name, (module_name, attribute) in COMMANDS.items():
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(f"arena.commands.{module_name}"), attribute)
        if isinstance(target, typer.Typer):
            root.add_typer(target, name=name)
        else:
            root.command(name)(target)
    return root


def main(argv: list[str] | None = None) -> Any:
    """Run ``arena``: with the module of the command named on the line alone, or every command for the root's help."""
    args = sys.argv[1:] if argv is None else argv
    named = args[0] if args and not args[0].startswith("-") else None  # ``arena --help match``: the root's help
    return build(named if named in COMMANDS else None)(args=args, prog_name="arena")


def __getattr__(name: str) -> Any:
    """``arena.cli.app``: the whole app, built on first use (tests drive it with Typer's runner)."""
    if name == "app":
        full = build()
        globals()["app"] = full
        return full
    raise AttributeError(name)


if __name__ == "__main__":  # pragma: no cover
    main()
