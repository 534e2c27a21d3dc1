"""``python -m arena`` runs the CLI."""

from arena.cli import app

app(prog_name="arena")
