"""The Spades arena server distribution: referee, tournaments, ratings, CLI."""

__version__ = "0.1.0"
