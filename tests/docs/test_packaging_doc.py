"""docs/packaging.md shows the default Dockerfile exactly as `arena bot build` uses it."""

from __future__ import annotations

from pathlib import Path

from arena.sandbox.build import DEFAULT_DOCKERFILE, uses_bot_base

REPO = Path(__file__).resolve().parents[2]


def test_the_default_dockerfile_in_the_docs_is_the_real_one():
    text = (REPO / "docs" / "packaging.md").read_text()
    assert DEFAULT_DOCKERFILE.strip() in text


def test_the_three_line_dockerfile_of_the_docs_starts_from_the_bot_base():
    text = (REPO / "docs" / "packaging.md").read_text()
    three = text.split("## Your own Dockerfile in three lines", 1)[1].split("```dockerfile\n", 1)[1].split("```", 1)[0]
    assert len(three.strip().splitlines()) == 3 and uses_bot_base(three)


def test_the_example_python_bots_need_no_dockerfile():
    for name in ("random", "greedy", "heuristic"):
        assert (REPO / "example_bots" / name / "bot.py").is_file()
        assert not (REPO / "example_bots" / name / "Dockerfile").exists()
