"""The import directions of docs/architecture.md section 2, checked on the source."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STDLIB = sys.stdlib_module_names


def imports_of(path: Path) -> set[str]:
    """Top-level-qualified names of every module ``path`` imports (absolute imports)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "_pb2" not in p.name)


def test_engine_imports_only_the_standard_library_and_itself():
    for path in python_files(REPO / "sdk" / "arena_sdk" / "engine"):
        for name in imports_of(path):
            top = name.split(".")[0]
            assert top in STDLIB or name.startswith("arena_sdk.engine"), f"{path}: imports {name}"


def test_engine_has_no_io_clock_or_global_randomness():
    banned = {"time", "socket", "os", "subprocess", "asyncio", "threading", "pathlib"}
    for path in python_files(REPO / "sdk" / "arena_sdk" / "engine"):
        tops = {n.split(".")[0] for n in imports_of(path)}
        assert not tops & banned, f"{path}: imports {tops & banned}"
        text = path.read_text()
        for call in ("random.random(", "random.choice(", "random.shuffle(", "random.randrange(", "open("):
            assert call not in text, f"{path}: uses {call}"


def test_sdk_never_imports_the_server():
    for path in python_files(REPO / "sdk"):
        for name in imports_of(path):
            assert name.split(".")[0] != "arena", f"{path}: imports {name}"


#: Modules every layer may import: the user-facing error root and untrusted-text cleaning.
EVERY_LAYER = ("arena.errors", "arena.text")

# Layers of the server distribution: a package may import those listed for it.
ALLOWED = {
    "match": {"arena.match"},
    "referee": {"arena.match", "arena.referee", "arena.sandbox"},
    "sandbox": {"arena.sandbox"},
    # The table kernel: what every runner (tournaments, sprt, the ladder) plays its tables with.
    # It knows nothing of any runner, so no runner can form an import circle with it.
    "tables": {"arena.match", "arena.referee", "arena.sandbox", "arena.results", "arena.tables"},
    # The results store (its timing totals are the standings' EntryTiming).
    "results": {"arena.results", "arena.match", "arena.publish"},
    "tournament": {
        "arena.match", "arena.referee", "arena.sandbox", "arena.tables", "arena.results", "arena.tournament",
        "arena.ratings", "arena.publish",
    },
    "ratings": {"arena.ratings"},
    # arena sprt is a sibling of the tournament runner: it plays its duplicate tables with the table
    # kernel and keeps its results in the same store (so the ratings commands read it); its settings'
    # parsers (concurrency) are the kernel's. Neither runner imports the other.
    "sprt": {
        "arena.match", "arena.referee", "arena.sandbox", "arena.tables", "arena.results", "arena.ratings", "arena.sprt",
    },
    "publish": {"arena.ratings", "arena.publish"},
    # The competition server: a runner on the table kernel (like sprt), with its own stores and site;
    # it reads the tournament's value parsers (limits, config errors). Nothing imports it but the CLI.
    "ladder": {
        "arena.match", "arena.referee", "arena.sandbox", "arena.tables", "arena.results", "arena.tournament",
        "arena.ratings", "arena.publish", "arena.ladder",
        # Practice tables and live spectators reuse arena play's table, seat and public view.
        "arena.play",
    },
    # People at the table (arena play): hosts its match like `arena match run` (the referee's
    # play_seated) with a person's seat adapter, and shows a game's replay with the publish viewer.
    # A sibling of the runners: nothing imports it but the CLI and the ladder's site (practice tables).
    "play": {"arena.match", "arena.referee", "arena.sandbox", "arena.publish", "arena.play"},
    # The rehearsal of a term drives a ladder from outside, as a course would: its CLI as a
    # process, its site over HTTP, its stores read-only. It shares only the sandbox's tree removal.
    "rehearse": {"arena.rehearse", "arena.sandbox"},
}


#: The only third-party packages arena.ratings may import (the engine and the SDK: none):
#: numpy and scipy for the numbers, threadpoolctl to keep BLAS to its thread budget.
RATINGS_THIRD_PARTY = frozenset({"numpy", "scipy", "threadpoolctl"})


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_server_layers_import_one_way(layer):
    folder = REPO / "arena" / layer
    for path in python_files(folder) if folder.exists() else []:
        for name in imports_of(path):
            if name.split(".")[0] == "arena" and name not in ("arena", *EVERY_LAYER):
                assert any(name == a or name.startswith(a + ".") for a in ALLOWED[layer]), (
                    f"{path}: {layer} may not import {name}"
                )
            if layer in ("ratings", "sandbox"):
                top = name.split(".")[0]
                game = top == "arena_sdk"
                assert not game, f"{path}: {layer} must not import game code ({name})"
            if layer == "ratings":
                # numpy and scipy do the fit's numbers (docs/ratings.md); nothing else from outside.
                assert (
                    name.split(".")[0] in STDLIB | RATINGS_THIRD_PARTY or name.startswith("arena.ratings")
                ), f"{path}: ratings may use the standard library, numpy, scipy and threadpoolctl only ({name})"


def test_layering_check_can_fail(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("import arena.referee\nfrom arena_sdk.engine import GameState\n")
    assert imports_of(bad) == {"arena.referee", "arena_sdk.engine"}
