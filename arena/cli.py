"""The ``arena`` command line: the composition root, no logic of its own."""

from __future__ import annotations

import typer

from arena.commands import bot, demo, match, ratings, replay, rules, sandbox, serve, sprt, tournament

app = typer.Typer(
    name="arena",
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
app.command("replay")(replay.replay)
app.command("demo")(demo.demo)
app.command("serve")(serve.serve)
app.command("sprt")(sprt.sprt)

if __name__ == "__main__":  # pragma: no cover
    app()
