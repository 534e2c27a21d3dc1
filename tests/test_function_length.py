"""No function in the server (``arena/``) or the SDK (``sdk/arena_sdk/``) is over 80 lines.

A function's lines run from its ``def`` (decorators aside) to its last line, so a
Typer command's long signature counts: its options go into ``Annotated`` aliases
(``arena/commands/options.py`` for the shared ones).  The generated gRPC stubs
(``wire/``) are not written by hand and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 80
#: Where the code is: the server and the SDK's package (not its build output, nor the generated stubs).
ROOTS = (REPO / "arena", REPO / "sdk" / "arena_sdk")

#: Functions allowed over the limit, each for a reason: each must still be over it (a stale entry
#: fails too), and the list only ever shrinks.
EXCEPTIONS: dict[str, set[str]] = {
    "arena/commands/ladder_rehearse.py": {"rehearse_command"},  # its options: one Typer signature
    "sdk/arena_sdk/bots/rollout.py": {"make_pick"},  # the rollout policy's closures: one call a card
    "sdk/arena_sdk/engine/pure.py": {"PureCore.play_out_hand"},  # the pure core's hot loop, inlined
}


def long_functions(root: Path, limit: int = MAX_LINES, base: Path = REPO) -> list[tuple[str, str, int]]:
    """``(file relative to ``base``, qualified function name, lines)`` of each function over ``limit``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if "wire" in path.relative_to(root).parts:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node, name in _functions(tree):
            lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
            if lines > limit:
                found.append((path.relative_to(base).as_posix(), name, lines))
    return found


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[ast.AST, str]]:
    """Every function and method in ``tree``, nested ones too, with its dotted name."""
    out: list[tuple[ast.AST, str]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node, prefix + node.name))
            out += _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            out += _functions(node, f"{prefix}{node.name}.")
        else:
            out += _functions(node, prefix)
    return out


def test_no_function_is_over_80_lines() -> None:
    found = [f for root in ROOTS for f in long_functions(root)]
    over = [f"{path}: {name} ({lines} lines)" for path, name, lines in found if name not in EXCEPTIONS.get(path, ())]
    assert not over, f"functions over {MAX_LINES} lines (split them):\n" + "\n".join(over)


def test_every_exception_is_still_over_the_limit() -> None:
    """An entry whose function was shortened (or moved, or renamed) is taken off the list."""
    found = {(path, name) for root in ROOTS for path, name, _ in long_functions(root)}
    stale = [f"{path}: {name}" for path, names in EXCEPTIONS.items() for name in names if (path, name) not in found]
    assert not stale, "no longer over the limit, take them off EXCEPTIONS:\n" + "\n".join(stale)


def test_the_count_can_fail(tmp_path: Path) -> None:
    """A function of 81 lines is found and one of 80 is not; methods and nested functions are named."""
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    nested = "".join(f"        y{i} = {i}\n" for i in range(80))
    (tmp_path / "a.py").write_text(
        f"def ok():\n{body}\n"  # 80 lines
        f"class C:\n    def long(self):\n    {body.replace(chr(10), chr(10) + '    ').rstrip()}\n        return 1\n\n"
        f"def outer():\n    def inner():\n{nested}    return inner\n"
    )
    found = long_functions(tmp_path, base=tmp_path)
    assert [(path, name, lines) for path, name, lines in found] == [
        ("a.py", "C.long", 81), ("a.py", "outer", 83), ("a.py", "outer.inner", 81),
    ]
