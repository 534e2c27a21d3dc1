"""CLI command groups; each module wires one group to the library code."""
