"""``arena ladder rehearse`` on the command line: its options, and a directory that is not its own refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"}, check=False)  # fmt: skip


def test_the_help_names_the_course_options():
    shown = arena("ladder", "rehearse", "--help")
    assert shown.returncode == 0, shown.stderr
    for option in ("--teams", "--hours", "--minutes", "--seed", "--faults", "--no-faults", "--json", "--json-file", "--html",
                   "--own-docker", "--own-disk", "[ladder] concurrency"):
        assert option in shown.stdout, option


def test_a_directory_with_something_in_it_is_refused_in_one_line_and_kept(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("mine")
    refused = arena("ladder", "rehearse", str(tmp_path), "--minutes", "1")
    assert refused.returncode != 0
    assert "is not empty" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
