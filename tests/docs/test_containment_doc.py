"""docs/reliability.md's containment table, leftover volumes, and the compose secrets git must not take (issue 9)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "reliability.md"


def _round_two_rows() -> list[str]:
    text = DOC.read_text()
    section = text[text.index("## Containment, round 2") :]
    section = section[: section.index("\n### ")]
    return [line for line in section.splitlines() if line.startswith("| **")]


@pytest.mark.parametrize(
    "attack",
    [
        "Flow-control stall", "Connection flood", "Image-declared `VOLUME`", "Covert channel",
        "Public secrets in compose.yaml", "Local `cmd:` bots read", "Two runs with the same tournament name",
        "Absurd time values", "Names that are markup or escape codes", "Hostile records", "Spreadsheet formulas",
    ],
)  # fmt: skip
def test_every_hole_of_issue_9_has_a_row(attack):
    rows = [row for row in _round_two_rows() if row.startswith(f"| **{attack}")]
    assert len(rows) == 1, f"no row for {attack!r}"
    cells = [c.strip() for c in rows[0].strip("|").split(" | ")]
    assert len(cells) == 4 and all(cells), cells  # attack, test, before, now


def test_every_test_the_table_cites_exists():
    """``tests/x.py::name`` must be defined in that file; ``..._suffix`` ends a test of the file named before it."""
    defined: dict[str, set[str]] = {}
    for path in (REPO / "tests").rglob("test_*.py"):
        defined[str(path.relative_to(REPO))] = set(re.findall(r"^(?:async )?def (test_\w+)", path.read_text(), re.M))
    last_file = None
    for row in _round_two_rows():
        for cited in re.findall(r"`((?:tests/[\w/]+\.py(?:::\w+)?)|(?:\.\.\._\w+))`", row):
            if cited.startswith("..."):
                suffix = cited[3:]
                assert last_file and any(n.endswith(suffix) for n in defined[last_file]), (cited, last_file)
                continue
            file, _, name = cited.partition("::")
            assert (REPO / file).exists(), cited
            if name:
                assert name in defined.get(file, set()), cited
            if file in defined:
                last_file = file


def test_leftover_volumes_are_explained_in_the_docs_and_the_help(run_cli):
    assert "docker volume prune" in DOC.read_text()
    result = run_cli("sandbox", "prune", "--help")
    assert result.returncode == 0 and "docker volume prune" in result.stdout, result.stdout


@pytest.mark.parametrize("path", [".env", ".env.tmp.4242", "compose-out/match.json"])
def test_compose_secrets_and_output_are_ignored_by_git(path):
    """scripts/compose-env.sh writes seat tokens and the seed to ./.env: never to be committed."""
    try:
        result = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO, capture_output=True)
    except OSError:
        pytest.skip("no git")
    if result.returncode == 128:
        pytest.skip("not a git checkout")
    assert result.returncode == 0, f"{path} is not ignored"
