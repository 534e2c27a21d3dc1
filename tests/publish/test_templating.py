"""The template machinery (arena.publish.templating): autoescaping, strict variables, a policy
on every page, and templates that a wheel carries."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import jinja2
import pytest
from publish_dom import parse

from arena.publish.templating import environment, json_for_html, render

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "arena" / "publish" / "templates"
HOSTILE = "</script><script>alert(1)</script>\"'&<b>x</b>"


def test_every_printed_value_is_escaped_text_and_attribute():
    env = environment()
    html = env.from_string('<p title="{{ v }}">{{ v }}</p>').render(v=HOSTILE)
    assert "<script>" not in html and "<b>" not in html and "\"'" not in html
    p = parse(html).find("p")
    assert p.text == HOSTILE and p.attrs["title"] == HOSTILE  # escaped, not mangled


def test_a_missing_variable_is_an_error_not_an_empty_string():
    with pytest.raises(jinja2.UndefinedError):
        render("games.html", pairings=[])  # no standings


def test_a_page_without_a_content_security_policy_does_not_render():
    page = environment().from_string(
        '{% extends "base.html" %}{% block title %}t{% endblock %}{% block body %}b\n{% endblock %}'
    )
    with pytest.raises(jinja2.TemplateRuntimeError, match="csp"):
        page.render()


def test_json_script_cannot_close_its_block():
    out = environment().from_string("{{ d|json_script }}").render(d={"name": HOSTILE})
    assert "<" not in out and ">" not in out and "&" not in out
    assert out == json_for_html({"name": HOSTILE})


def test_every_template_is_package_data():
    """A wheel ships only files that ``[tool.setuptools.package-data]`` names."""
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["arena.publish"]
    files = [
        p.relative_to(TEMPLATES.parent).as_posix() for p in TEMPLATES.rglob("*") if p.is_file()
    ]
    assert "templates/index.html" in files
    unshipped = [f for f in files if not any(fnmatch.fnmatchcase(f, pat) for pat in patterns)]
    assert unshipped == []


def test_every_template_compiles():
    env = environment()
    for name in env.list_templates():
        env.get_template(name)  # a syntax error raises here, not on the first publish
