"""The Spades arena SDK: the rules engine, and (soon) the bot base class and client."""

__version__ = "0.1.0"
