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
        if path.name == "core.py":  # reads ARENA_SDK_PURE (which core runs) and nothing else of os
            assert "os.environ.get(PURE_ENV" in path.read_text() and path.read_text().count("os.") == 1
            tops.discard("os")
        assert not tops & banned, f"{path}: imports {tops & banned}"
        text = path.read_text()
        for call in ("random.random(", "random.choice(", "random.shuffle(", "random.randrange(", "open("):
            assert call not in text, f"{path}: uses {call}"


def test_sdk_never_imports_the_server():
    for path in python_files(REPO / "sdk"):
        for name in imports_of(path):
            assert name.split(".")[0] != "arena", f"{path}: imports {name}"


#: Modules every layer may import: the user-facing error root, untrusted-text cleaning, settings files' keys.
EVERY_LAYER = ("arena.errors", "arena.text", "arena.toml_keys")

# Layers of the server distribution: a package may import those listed for it.
ALLOWED = {
    "match": {"arena.match"},
    "referee": {"arena.match", "arena.referee", "arena.sandbox"},
    "sandbox": {"arena.sandbox"},
    # The table kernel: what every runner (tournaments, sprt, the ladder) plays its tables with.
    # It knows nothing of any runner, so no runner can form an import circle with it.
    "tables": {"arena.match", "arena.referee", "arena.sandbox", "arena.results", "arena.tables"},
    # The one SQLite helper every store uses (per-thread connections, the write transaction, DiskFull, migrations).
    "storage": {"arena.storage"},
    # The results store (its timing totals are the standings' EntryTiming).
    "results": {"arena.results", "arena.match", "arena.publish", "arena.storage"},
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
        "arena.ratings", "arena.publish", "arena.ladder", "arena.storage",
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


# The ladder wing's floors, lowest first (docs/architecture.md section 10). A module of the wing may
# import its own package and the floors below it, never a floor above, and the packages that share a
# floor never import each other. A new package or top-level module of the wing must be given a floor.
LADDER_FLOORS: tuple[tuple[str, ...], ...] = (
    ("arena.ladder.common",),  # the directory's layout, ladder.sqlite's connection and meta, the engine watch
    ("arena.ladder.teams", "arena.ladder.versions"),  # who takes part; a version's life
    ("arena.ladder.games",),  # pairs, standings, live games, practice tables (reads versions)
    ("arena.ladder.store",),  # ladder.sqlite's tables composed: teams, versions, games
    ("arena.ladder.course",),  # calendar, final evaluation, grades, exports
    ("arena.ladder.site",),  # the web site: app, routers, guard, HTTP server, reads
    ("arena.ladder.config",),  # ladder.toml: every package's section composed
    ("arena.ladder.service",),  # the coordinator: the loop composed of the packages' parts
    ("arena.ladder.serve",),  # `arena ladder serve`: the loop and the site in one process
)


def module_name(path: Path) -> str:
    """The dotted name of a source file under the repository (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def floor_of(module: str, floors: tuple[tuple[str, ...], ...] = LADDER_FLOORS) -> tuple[int, str] | None:
    """The floor and the part (package or top-level module) of a module of the wing; None for ``arena.ladder`` itself."""
    for level, parts in enumerate(floors):
        for part in parts:
            if module == part or module.startswith(part + "."):
                return level, part
    return None


def floor_violations(importer: str, imported: set[str], floors: tuple[tuple[str, ...], ...] = LADDER_FLOORS) -> list[str]:
    """What ``importer`` (a module of the wing) imports against the floors: each as one line."""
    here = floor_of(importer, floors)
    if here is None:
        return [] if importer == "arena.ladder" else [f"{importer} is on no floor of LADDER_FLOORS"]
    found = []
    for name in sorted(n for n in imported if n.startswith("arena.ladder.")):
        there = floor_of(name, floors)
        if there is None:
            found.append(f"{importer} imports {name}, which is on no floor")
        elif there[0] > here[0]:
            found.append(f"{importer} (floor {here[0]}) imports {name} (floor {there[0]}): up a floor")
        elif there[0] == here[0] and there[1] != here[1]:
            found.append(f"{importer} imports {name}: a sibling on its own floor")
    return found


def test_the_ladder_wing_imports_only_down_its_floors():
    problems = []
    for path in python_files(REPO / "arena" / "ladder"):
        problems += floor_violations(module_name(path), imports_of(path))
    assert problems == []


def test_the_floor_check_can_fail():
    floors = (("arena.ladder.common",), ("arena.ladder.teams", "arena.ladder.versions"), ("arena.ladder.site",))
    assert floor_violations("arena.ladder.versions.store", {"arena.ladder.common.paths"}, floors) == []
    assert floor_violations("arena.ladder.common.paths", {"arena.ladder.site.app"}, floors) == [
        "arena.ladder.common.paths (floor 0) imports arena.ladder.site.app (floor 2): up a floor"
    ]
    assert floor_violations("arena.ladder.teams.store", {"arena.ladder.versions.store"}, floors) == [
        "arena.ladder.teams.store imports arena.ladder.versions.store: a sibling on its own floor"
    ]
    assert floor_violations("arena.ladder.extra", set(), floors) == ["arena.ladder.extra is on no floor of LADDER_FLOORS"]


def module_imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``path`` imports: ``from pkg import mod`` is ``pkg.mod``, and a
    ``__import__("name")`` or ``import_module("name")`` of a literal name counts too (a lazy import is an import).
    What only a type checker reads (``if TYPE_CHECKING:``) is not imported when the code runs: it does not count."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(), filename=str(path))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for stmt in node.body
        for inner in ast.walk(stmt)
    }  # fmt: skip
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in modules else node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in ("__import__", "import_module"):
                found.add(str(node.args[0].value))
    return found & modules


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of an import graph: each set of two or more modules that reach each other (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                circles.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


#: Import circles found outside the ladder wing, left to their packages' owners: none may be added, and
#: each is taken off this list once broken (the last one, arena play's table and its snapshot, is).
KNOWN_CIRCLES: list[list[str]] = []


def test_no_two_modules_of_the_server_import_each_other():
    """No import circle anywhere in arena/, lazy imports included (site/context.py and site/practice.py made one)."""
    paths = {module_name(p): p for p in python_files(REPO / "arena")}
    graph = {name: module_imports(path, set(paths)) - {name} for name, path in paths.items()}
    circles = import_circles(graph)
    assert [c for c in circles if c not in KNOWN_CIRCLES] == []
    assert not [c for c in circles if any(m.startswith("arena.ladder") for m in c)], "the ladder wing has none"


def test_the_circle_check_can_fail(tmp_path: Path):
    lazy = tmp_path / "lazy.py"
    lazy.write_text('def f():\n    return __import__("a.b", fromlist=["x"]).x\nfrom a import c\n')
    assert module_imports(lazy, {"a.b", "a.c", "a"}) == {"a.b", "a.c"}
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []
    typed = tmp_path / "typed.py"
    typed.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\nimport b\ndef f():\n    import c\n")
    assert module_imports(typed, {"a", "b", "c"}) == {"b", "c"}, "lazy imports count, typing-only ones do not"


def test_no_module_of_the_server_imports_a_private_name():
    """``from arena.x import _y`` reaches into another module's inside: a shared thing gets a public name."""
    found = []
    for path in python_files(REPO / "arena"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena"):
                found += [f"{path}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []


def test_layering_check_can_fail(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("import arena.referee\nfrom arena_sdk.engine import GameState\n")
    assert imports_of(bad) == {"arena.referee", "arena_sdk.engine"}
