"""The repository cites its own docs, never the design files a clone does not have (issue 16, item 12)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Spelled in two parts so that this file does not cite them itself.
SHARED = re.compile(r"\b(?:ARCHITECTURE|RULES)" + r"\.md\b")
SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__"}


def tracked_files() -> list[Path]:
    """The files git tracks (or, outside a git checkout, every file but caches and environments)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
        return [REPO / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in REPO.rglob("*") if p.is_file() and not SKIP_DIRS & set(p.relative_to(REPO).parts)]


def test_no_tracked_file_cites_the_shared_design_files():
    citing = []
    for path in tracked_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # images and other binary files
        for number, line in enumerate(text.splitlines(), 1):
            if SHARED.search(line):
                citing.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not citing, "cite docs/rules.md or docs/architecture.md instead:\n" + "\n".join(citing)


def test_the_check_can_fail():
    assert SHARED.search("see " + "RULES" + ".md section 3")
    assert not SHARED.search("see docs/rules.md section 6")


def test_the_docs_the_code_cites_exist():
    for name in ("rules.md", "architecture.md"):
        assert (REPO / "docs" / name).is_file()
